// The words of docs/configuration.md's key tables (config_reference.hpp), and how they are
// written: a declared key's default and range come from config_schema, the rest from the rows
// below. Edit a row here, then run `scripts/dev config-reference` to write the page.
#include "apps/config/config_reference.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>

#include "apps/config/config_schema.hpp"
#include "apps/config/node_config.hpp"

namespace weir::config {

namespace {

struct table_head {
  std::string_view table;
  std::string_view meaning;  ///< the last column's heading
};

// clang-format off
constexpr table_head table_heads[] = {
  {"node", "Meaning"},
  {"http", "Meaning and what happens at the bound"},
  {"auth", "Meaning"},
  {"records", "Meaning and the refusal"},
  {"store", "Meaning and what happens at the bound"},
  {"windowed", "Meaning and what happens at the bound"},
  {"query", "At the bound"},
  {"cluster", "Meaning and what happens at the bound"},
  {"log", "Meaning"},
};

constexpr std::string_view table_names[] = {
  "node", "http", "auth", "records", "store", "windowed", "query", "cluster", "log",
};

const reference_row rows[] = {
  {"node", "http", "",
   "",
   "",
   R"md(HTTP/WebSocket listener (write API, hubs, `/livez`, `/readyz`, `/cluster/health`). )md"
     R"md(The host must be an IP literal: `localhost` is refused at start. Port 0 picks a free )md"
     R"md(port, which the startup line prints. Use `0.0.0.0` to listen on all interfaces.)md"},
  {"node", "grpc", "",
   "",
   "",
   R"md(gRPC listener for backends: `weir.v1.Data`, under the same `auth.jwt` credentials )md"
     R"md((`authorization: Bearer` metadata) and `spaces[].write` rules as the HTTP write API.)md"},
  {"node", "peer", "",
   "",
   "",
   R"md(In a cluster, the listener for the other members (`weir.v1.Peer`, )md"
     R"md(`weir.v1.QueryOwner`): it admits members only (`cluster.token` or `cluster.tls`). Not )md"
     R"md(opened on a single node. Never expose it to clients.)md"},
  {"node", "dataDir", "",
   "",
   "",
   R"md(RocksDB directory, created if missing. A relative path is relative to the working )md"
     R"md(directory. Only one process can open it.)md"},
  {"node", "ioThreads", "",
   R"md(one per usable core (the process's CPU affinity), at most 16)md",
   "",
   R"md(Asio threads that run every HTTP and WebSocket session. Each has its own event loop; )md"
     R"md(connections are spread over them in turn and each stays on one, so with several cores )md"
     R"md(every core serves its share of the connections.)md"},
  {"node", "actorThreads", "",
   "",
   "",
   R"md(CAF scheduler threads for the shard, query, space-view and health-watch actors.)md"},
  {"http", "maxBodyBytes", "",
   "",
   "",
   R"md(Largest write API body: beyond it, **413 `request.too_large`** and the connection is )md"
     R"md(closed. Also the largest gRPC message the node accepts (`Data`, and in a cluster the )md"
     R"md(calls of other members): beyond it, gRPC answers `RESOURCE_EXHAUSTED`. A forwarded )md"
     R"md(write reaches its owner as one such message, so give every member the same value.)md"},
  {"http", "maxConnections", "",
   "",
   "",
   R"md(Open TCP connections the node holds, of every kind (plain requests, hubs, streams). A )md"
     R"md(new one over it is answered **503 `server.overloaded`** with `Retry-After: 1` and )md"
     R"md(closed without reading its request. Keep it under the process's open-file limit.)md"},
  {"http", "maxConnectionsPerClient", "",
   R"md(1000, or `maxConnections` when that is smaller)md",
   "",
   R"md(Of them, from one client address. Connections from a trusted proxy are not counted )md"
     R"md(per client (its clients share its address); behind one, hub budgets still apply per )md"
     R"md(caller.)md"},
  {"http", "maxDataCallsInFlight", "",
   "",
   "",
   R"md(gRPC `weir.v1.Data` calls the node runs at once, over all connections. A call over it )md"
     R"md(is refused at once with `UNAVAILABLE` (`server.overloaded`) and nothing is applied; )md"
     R"md(retry.)md"},
  {"http", "sendStallTimeoutMs", "",
   "",
   "",
   R"md(A streaming connection (WebSocket and SSE hubs, direct SSE and WebSocket queries, )md"
     R"md(windowed and AG-UI state streams, the admin page's `/ui/events`) whose pending output )md"
     R"md(the kernel has taken **no byte of** for this long is dropped: its socket closed, its )md"
     R"md(hub slot, budget share and subscriptions released at once. Also the sockets' )md"
     R"md(`TCP_USER_TIMEOUT`, so data the peer never acknowledges fails the connection after )md"
     R"md(the same time. A client that stops reading therefore loses its place within about )md"
     R"md(this bound after its buffers filled (or, sooner, when its outbound queue bound is )md"
     R"md(hit). Progress resets the clock: a slow reader that keeps reading is not dropped.)md"},
  {"http", "trustedProxies", "",
   R"md(`[]`)md",
   R"md(list of IPv4/IPv6 addresses or CIDR ranges (`"10.0.0.0/8"`, `"::1"`))md",
   R"md(Peers whose `X-Forwarded-For` and `x-cratis-tenant-id` headers are believed. Behind )md"
     R"md(them the client address is the right-most `X-Forwarded-For` hop that is not itself a )md"
     R"md(trusted proxy: it is what anonymous callers are told apart by (SSE ownership, caller )md"
     R"md(budgets, the health feed). From any other peer `X-Forwarded-For` is ignored, and a )md"
     R"md(tenant header the caller's token does not allow is refused with **403 )md"
     R"md(`auth.tenant_forbidden`**. See [security.md](security.md#behind-a-proxy).)md"},
  {"auth", "jwt.secret", "jwt.secretFile",
   R"md(—)md",
   R"md(at least 32 bytes)md",
   R"md(HS256 key, inline or from a file (a trailing newline is dropped).)md"},
  {"auth", "jwt.publicKeyFiles", "",
   R"md(`[]`)md",
   R"md(list of PEM files)md",
   R"md(PEM files, each a public key (`BEGIN PUBLIC KEY`) or certificate: RSA of at least )md"
     R"md(2048 bits (RS256) or EC P-256 (ES256).)md"},
  {"auth", "jwt.jwksFile", "",
   R"md(—)md",
   R"md(a file)md",
   R"md(A JWKS document (RFC 7517): RSA, EC P-256 and `oct` keys; `kid` in a token selects )md"
     R"md(among them; keys with `use` other than `sig` are skipped.)md"},
  {"auth", "jwt.issuer", "",
   R"md(—)md",
   R"md(a string)md",
   R"md(When set, tokens must carry this `iss`.)md"},
  {"auth", "jwt.audience", "",
   R"md(—)md",
   R"md(a string)md",
   R"md(When set, tokens must carry it in `aud` (a string or an array).)md"},
  {"auth", "jwt.clockSkewSeconds", "",
   R"md(30)md",
   R"md(0–300)md",
   R"md(Tolerance for `exp` and `nbf`.)md"},
  {"auth", "jwt.requireExpiry", "",
   R"md(`true`)md",
   R"md(`true`, `false`)md",
   R"md(Refuse tokens without `exp` (a credential that never expires cannot end a stream).)md"},
  {"auth", "jwt.cookie", "",
   R"md(—)md",
   R"md(a cookie name)md",
   R"md(A cookie holding the token, for browsers (EventSource and WebSocket cannot send )md"
     R"md(headers). The `Authorization: Bearer` header wins when both are present.)md"},
  {"auth", "jwt.queryParameter", "",
   R"md(`false`)md",
   R"md(`true`, `false`)md",
   R"md(Also accept `?access_token=…` on WebSocket upgrades (only there: URLs end up in logs).)md"},
  {"auth", "jwt.subjectClaim", "",
   R"md(`sub`)md",
   R"md(a claim name)md",
   R"md(The principal's id (required in every token).)md"},
  {"auth", "jwt.tenantClaim", "",
   R"md(`tenant`)md",
   R"md(a claim name)md",
   R"md(The principal's tenant (optional).)md"},
  {"auth", "jwt.tenantsClaim", "",
   R"md(`tenants`)md",
   R"md(a claim name)md",
   R"md(An array of tenants the token may select with the `x-cratis-tenant-id` header.)md"},
  {"auth", "jwt.rolesClaim", "",
   R"md(`roles`)md",
   R"md(a claim name)md",
   R"md(A string or an array of strings.)md"},
  {"auth", "hubs", "",
   R"md(`anonymous`)md",
   R"md(a [rule](#access-rules))md",
   R"md(Who may open a hub connection (WebSocket hub, SSE hub stream): a )md"
     R"md([rule](#access-rules). A refused WebSocket upgrade is accepted and closed at once )md"
     R"md(with **1008 `Unauthorized`**; a refused SSE stream gets **401** (403 for a missing )md"
     R"md(role). Every subscription is still authorized on its own. Needs `jwt`.)md"},
  {"auth", "adminRole", "",
   R"md(`admin`)md",
   R"md(a role name)md",
   R"md(The role (from `jwt.rolesClaim`) the [admin page](operations.md#admin-page)'s data )md"
     R"md(stream `/ui/events` needs: **401 `auth.required`** without a token, **403 )md"
     R"md(`auth.forbidden`** without the role. The page's files are public (they hold no data). )md"
     R"md(Without `jwt` the stream is open like `/cluster/health`, so setting `adminRole` )md"
     R"md(without `jwt` is refused at start.)md"},
  {"records", "maxBytes", "",
   "",
   "",
   R"md(Serialized size of one record after a write (`_ver` and `modifiedAt` included): **413 )md"
     R"md(`record.too_large`** {`max`}. A JSON Patch whose ops would grow the document past it, )md"
     R"md(or whose `copy`/`move`/`replace` values add up to more than four times it, stops at )md"
     R"md(that op with the same code.)md"},
  {"records", "maxMembers", "",
   "",
   "",
   R"md(Members of one object and elements of one array: **400 `record.too_many_members`** )md"
     R"md({`path`, `max`}.)md"},
  {"records", "maxKeyBytes", "",
   "",
   "",
   R"md(Bytes of one member name: **400 `record.key_too_long`** {`path`, `max`}.)md"},
  {"store", "backend", "",
   "",
   "",
   R"md(Where records live. `embedded`: RocksDB under `node.dataDir`, one copy per node (in a )md"
     R"md(cluster each member holds its own units). `postgres`: PostgreSQL is the system of )md"
     R"md(record; `node.dataDir` is not used. See [operations.md](operations.md#postgresql).)md"},
  {"store", "postgres.url", "",
   "",
   R"md(a libpq connection string or URI)md",
   R"md(The database for `backend: postgres` (`host=db port=5432 user=weir dbname=weir`, or )md"
     R"md(`postgresql://weir@db/weir?sslmode=verify-full`). The environment variable )md"
     R"md(**`WEIR_POSTGRES_URL` overrides it**, so a password can come from a Secret instead of )md"
     R"md(the file. With `backend: postgres` and neither set, `weir serve` refuses to start.)md"},
  {"store", "postgres.changeCapture", "",
   "",
   "",
   R"md(Rows other programs write to `weir_records` reach subscribers: one member at a time )md"
     R"md(reads the logical replication slot `weir_changes` (needs `wal_level = logical` and a )md"
     R"md(role with `REPLICATION`). `false`: no reader runs and no slot is made; such rows are )md"
     R"md(seen only when their unit loads again. Turning it off on a database where a reader )md"
     R"md(ran leaves the slot keeping WAL: drop it (`SELECT )md"
     R"md(pg_drop_replication_slot('weir_changes')`). See )md"
     R"md([operations.md](operations.md#change-capture).)md"},
  {"store", "queueCapacity", "",
   "",
   "",
   R"md(Write batches that may wait for the store's writer thread. When it is full, new )md"
     R"md(writes are refused before anything is applied: **HTTP 503 `server.overloaded`**, gRPC )md"
     R"md(`UNAVAILABLE`.)md"},
  {"store", "maxPendingWritesPerUnit", "",
   "",
   "",
   R"md(Writes of one unit (one object, or a space's `objects` rows) applied in memory but )md"
     R"md(not yet durable. Beyond it that unit's writes get the same **503 )md"
     R"md(`server.overloaded`**; other units are unaffected.)md"},
  {"store", "idempotencyKeyTtlMs", "",
   "",
   "",
   R"md(How long a unit remembers the `Idempotency-Key` of an acknowledged write )md"
     R"md(([protocols.md](protocols.md#http-write-api)): a retry within it is answered with the )md"
     R"md(original versionId, not applied again. Stored with the write (PostgreSQL table )md"
     R"md(`weir_idempotency_keys`, or the embedded store), so it holds across restarts and )md"
     R"md(failovers.)md"},
  {"store", "maxIdempotencyKeysPerUnit", "",
   "",
   "",
   R"md(Keys one unit remembers at most (each costs about 100 bytes of memory while the unit )md"
     R"md(is loaded, plus its stored row); beyond it the keys closest to expiry are forgotten )md"
     R"md(first, and a retry under a forgotten key is applied again. What the unit forgets )md"
     R"md((past the bound, or expired) is deleted from the store with its next write, so the )md"
     R"md(stored keys stay within about the bound too, however long the unit stays loaded.)md"},
  {"store", "unitIdleMs", "",
   "",
   "",
   R"md(A unit with no subscription, no pending write and no use for this long releases its )md"
     R"md(memory (its shard actor stops). The next write or subscription loads it back from the )md"
     R"md(store, so memory follows the units in use, not every unit a client ever named.)md"},
  {"windowed", "keepAliveMs", "",
   "",
   "",
   R"md(A `: keepalive` SSE comment after this long without a frame on a windowed stream; 0 )md"
     R"md(sends none.)md"},
  {"windowed", "maxQueueBytes", "",
   "",
   "",
   R"md(Bytes of events a windowed stream may hold unwritten, besides its request's )md"
     R"md(`mailboxCapacity` in events. Past either, the held events are dropped and the stream )md"
     R"md(ends with **`closed{overflow}`**.)md"},
  {"windowed", "closeDeadlineMs", "",
   "",
   "",
   R"md(Once a stream's `closed` frame is decided (overflow, deauthorization, shutdown), how )md"
     R"md(long the client has to take it: a client that has stopped reading is then dropped )md"
     R"md(without it, so it cannot hold the session, or a draining node, longer.)md"},
  {"windowed", "maxObjectsPerSpaceWindow", "",
   "",
   "",
   R"md(Weir's own key: objects of a space, on the serving node, that one space-wide window )md"
     R"md((`…/datasets/query`) merges. Each one's unit is loaded and held while the window )md"
     R"md(lives, so a dataset spread over more objects is refused with **503 )md"
     R"md(`query.too_many_objects`** before any is loaded, and an open window whose dataset )md"
     R"md(grows past it closes with **`closed{server_shutdown}`**. In a cluster each member )md"
     R"md(counts its own objects.)md"},
  {"query", "keepAliveIntervalMs", "",
   "",
   R"md(≤ 3600000; 0 or negative disables)md",
   R"md(A server `Ping` frame after this much outbound silence. `Connected` advertises the )md"
     R"md(value (0 when disabled). Keep it ≤ 30000 for older clients, which assume 30 s.)md"},
  {"query", "maxObservableHubConnections", "",
   "",
   "",
   R"md(Hub connections on the node. Over it: the WebSocket upgrade is refused with **503** )md"
     R"md(and `Retry-After: 1` (seed 001), as is an SSE hub stream.)md"},
  {"query", "maxObservableHubConnectionsPerCaller", "",
   R"md(= `maxObservableHubConnections`)md",
   "",
   R"md(The same, per caller: a signed-in caller by its subject and tenant, an anonymous one )md"
     R"md(by its client address (behind a proxy not listed in `http.trustedProxies`, every )md"
     R"md(client shares the proxy's address). In a cluster a signed-in caller's limit is its )md"
     R"md(limit across all members: each member grants its share (the limit divided by the )md"
     R"md(member count, the first members by id taking the remainder, at least 1; with elastic )md"
     R"md(membership the count is the owners on record, recomputed when they change), so )md"
     R"md(spreading over members does not multiply it; a caller whose connections all land on )md"
     R"md(one member gets that member's share. Anonymous callers keep the full limit on each )md"
     R"md(member.)md"},
  {"query", "maxObservableHubConnectionsPerAddress", "",
   R"md(= `maxObservableHubConnections`)md",
   "",
   R"md(Weir's own key: hub connections from one client address, signed in or not (the )md"
     R"md(address as `http.trustedProxies` resolves it). Left out, one address may take every )md"
     R"md(slot, as Arc allows by default (one caller can take the whole capacity); on an )md"
     R"md(internet-facing host set it (for example to an eighth of the node's) so that one host )md"
     R"md(cannot take every slot of the node. Over it: 503 with `Retry-After: 1` instead of the )md"
     R"md(upgrade, as for the node-wide limit. Behind a proxy that does not send )md"
     R"md(`X-Forwarded-For`, every client has the proxy's address: raise it there.)md"},
  {"query", "maxObservableHubSubscriptionsPerConnection", "",
   "",
   "",
   R"md(Live subscriptions on one connection. Over it: an **Error frame `Connection )md"
     R"md(subscription limit reached`** for that `queryId`. Replacing an existing `queryId` )md"
     R"md(does not count.)md"},
  {"query", "maxObservableSubscriptions", "",
   "",
   "",
   R"md(Live subscriptions on the node. Over it: an **Error frame `Subscription limit )md"
     R"md(reached`**.)md"},
  {"query", "maxObservableSubscriptionsPerCaller", "",
   R"md(= `maxObservableSubscriptions`)md",
   "",
   R"md(The same, per caller: a signed-in caller by its subject and tenant (split over the )md"
     R"md(members of a cluster as above), an anonymous one by its client address (never split; )md"
     R"md(seed 001). A caller's hub subscriptions on all its connections, its direct streams )md"
     R"md(and snapshots and its windowed streams count together. Over it: the hub's Error )md"
     R"md(frame, a direct SSE stream's **503** with `Retry-After: 1`, a windowed stream's )md"
     R"md(**429**.)md"},
  {"query", "maxObservableInboundFrames", "",
   "",
   "",
   R"md(Client frames a WebSocket hub connection takes from its socket in one wake-up (frames )md"
     R"md(are applied as they are read, so none wait behind it). Over it: close **1013 `Inbound )md"
     R"md(queue full`**.)md"},
  {"query", "maxObservableOutboundFrames", "",
   "",
   "",
   R"md(Frames queued for one client's socket, the one being written included. The hand-off )md"
     R"md(from the query actors to the connection's I/O thread (`gateway/bounded_inbox`, )md"
     R"md(emptied at every wake-up of that thread) has the same bound, so at most twice this )md"
     R"md(many frames are held for one client at any moment. Over either: close **1013 )md"
     R"md(`Outbound queue full`** (an AG-UI state stream instead drops what it holds and starts )md"
     R"md(again from a snapshot).)md"},
  {"query", "maxObservableInboundFrameBytes", "",
   "",
   "",
   R"md(Largest client message. Over it: close **1009 `Inbound frame too large`**.)md"},
  {"query", "maxObservableOutboundFrameBytes", "",
   "",
   "",
   R"md(Largest single server frame, for example one snapshot. Over it: close **1008 `Invalid )md"
     R"md(outbound frame`**. A query whose result encodes larger than this cannot be subscribed )md"
     R"md(to, so size it for your largest result.)md"},
  {"query", "maxOutboundQueueBytes", "",
   "",
   R"md(`maxObservableOutboundFrameBytes` – 1073741824 (1 GiB))md",
   R"md(Bytes queued for one client (Weir's own key), bounded like the frames: the socket's )md"
     R"md(queue and the hand-off before it each hold at most this many. Over it: close **1013 )md"
     R"md(`Outbound queue full`**. It must be at least `maxObservableOutboundFrameBytes`, so )md"
     R"md(that one largest frame fits.)md"},
  {"query", "maxObservableTombstones", "",
   "",
   "",
   R"md(Unsubscribe tombstones kept per connection. Over it, the oldest is evicted.)md"},
  {"query", "tombstoneRetentionMs", "",
   "",
   "",
   R"md(How long a tombstone lives.)md"},
  {"query", "maxSortIndexesPerDataset", "",
   "",
   "",
   R"md(Weir's own key: sort orders one dataset of an object may have indexes for, counting )md"
     R"md(those read by open windows (windowed subscribes with a `limit`, paged Arc queries, )md"
     R"md(which may add the client's `sortBy`). Each index holds an entry per record (about )md"
     R"md(24–32 bytes each) and costs O(N log N) to build (on a loader thread from 16,384 )md"
     R"md(records, in place below); an index no window reads is dropped first to make room (and )md"
     R"md(after `store.unitIdleMs` unused), and indexes being built count. Indexes on a field a )md"
     R"md(filter bounds (built after the first pass of a window or unbounded query with that )md"
     R"md(filter, so that later filters on that field read ranks instead of every record; )md"
     R"md([performance.md](performance.md#windows)) count too: they are taken only into free )md"
     R"md(room or in place of an index no window reads, and one still being built gives way to )md"
     R"md(a window's sort unless windows wait for it. The indexes [named queries' )md"
     R"md(filters](#named-queries) want on a dataset of 16,384 records or more count too, at )md"
     R"md(most this less one of them, and are never dropped. Over it: windowed **503 )md"
     R"md(`query.too_many_sorts`**, hub **Error frame `Observable query failed`**, snapshot GET )md"
     R"md(**503** with the reason.)md"},
  {"query", "observableShutdownTimeoutMs", "",
   "",
   "",
   R"md(Bound on the whole drain at SIGTERM/SIGINT (see )md"
     R"md([operations.md](operations.md#shutdown)). Anything still running after it is cut off.)md"},
  {"query", "agentRunMaxMs", "",
   "",
   "",
   R"md(Weir's own key: how long an AG-UI agent run (`POST )md"
     R"md(/v1/spaces/{space}/objects/{objectId}/agent`, )md"
     R"md([protocols.md](protocols.md#ag-ui-agent-endpoint)) streams the object's state before )md"
     R"md(it ends with `RUN_FINISHED`. To follow the state longer, the application runs the )md"
     R"md(agent again.)md"},
  {"query", "healthIntervalMs", "",
   "",
   "",
   R"md(How often each health-feed subscription samples its caller's connections (Weir's own )md"
     R"md(key). It emits only on change.)md"},
  {"query", "allowedOrigins", "",
   R"md(`[]`)md",
   R"md(list of origins)md",
   R"md(Browser origins trusted besides the request's own, e.g. `["https://app.example.com"]` )md"
     R"md((scheme, host and port; no path). Others get 403 on every route that answers a )md"
     R"md(caller's data to a browser: the SSE hub stream and its control POSTs, every WebSocket )md"
     R"md(upgrade, the direct SSE routes and their plain snapshot GETs, the health feed, )md"
     R"md(`/v1/auth`, the windowed API, the AG-UI state streams and the write API.)md"},
  {"query", "allowNullOrigin", "",
   "",
   "",
   R"md(Trust `Origin: null` (sandboxed frames, `file://` pages).)md"},
  {"cluster", "nodeId", "",
   "",
   R"md(1–128 characters, no spaces, `/` or `@`; with `members`, the `id` of one of them)md",
   R"md(This node. With `members` or `advertise`, `weir serve` needs it from here or from )md"
     R"md(`--node-id` (a file shared by every pod leaves it out); refused with neither. With )md"
     R"md(`advertise` it is the id the member registers under, so no two running members may )md"
     R"md(share it. In Kubernetes: the pod name. Set on a single node (neither `members` nor )md"
     R"md(`advertise`), it is refused.)md"},
  {"cluster", "members", "",
   R"md(`[]`)md",
   R"md(at most 64 entries)md",
   R"md(Static membership: every node of the cluster, this one included, as `{ id, peer: )md"
     R"md("host:port", http: "host:port" }`. `id`: 1–128 characters, no spaces, `/` or `@`, )md"
     R"md(unique. Hosts may be DNS names; ports are 1–65535. The addresses are where the member )md"
     R"md(is reached (the others dial `peer`; `/cluster/health` reports both), not what it )md"
     R"md(listens on (that is `node.peer` / `node.http`). Ownership is computed from the ids: )md"
     R"md(every node must list the same ids, in any order. With `--demo`, only the member with )md"
     R"md(the smallest id runs the demo writer. Not together with `advertise`.)md"},
  {"cluster", "advertise", "",
   R"md(—)md",
   R"md(`{ peer: "host:port", http: "host:port" }`, both required; ports 1–65535)md",
   R"md(Elastic membership (instead of `members`, on `store.backend: postgres` only): where )md"
     R"md(the other members reach this node's peer listener (`peer`) and where its HTTP is )md"
     R"md(reached (`http`). Hosts may be DNS names. Like a member's addresses in `members`, )md"
     R"md(they are not what it listens on. The member writes them into its lease row in )md"
     R"md(PostgreSQL; the others dial `peer`, and `/cluster/health` reports both.)md"},
  {"cluster", "leaseMs", "",
   "",
   "",
   R"md(Elastic membership: a member's lease lasts this long after its last renewal, by the )md"
     R"md(database's clock. A member whose lease ran out (killed, cut off from PostgreSQL, )md"
     R"md(renewals too slow) stops owning units at the next lease round of any other member, )md"
     R"md(and its units move to the others. Until then writes to its units get **503 )md"
     R"md(`cluster.owner_unavailable`**. A smaller value moves a dead member's units sooner; a )md"
     R"md(member whose renewals fall behind by more than this loses its units (and takes them )md"
     R"md(back once it renews again).)md"},
  {"cluster", "leaseRenewMs", "",
   "",
   R"md(, at most half of `leaseMs`)md",
   R"md(Elastic membership: how often each member renews its lease, reads the others' and, )md"
     R"md(when the live members differ from the owners on record, records the new owners. It is )md"
     R"md(also how long the members may see different owners after a change.)md"},
  {"cluster", "heartbeatIntervalMs", "",
   "",
   "",
   R"md(How often each node calls `Peer.Status` on every peer (the call's deadline too, at )md"
     R"md(least 100 ms). A member's health-feed answer may take twice this (at least 200 ms) )md"
     R"md(before it is left out of a sample.)md"},
  {"cluster", "suspectAfterMs", "",
   "",
   "",
   R"md(A peer whose last answer is older than this is `suspect`. It still gets forwarded )md"
     R"md(writes and control POSTs.)md"},
  {"cluster", "downAfterMs", "",
   "",
   R"md(, more than `suspectAfterMs`)md",
   R"md(... and `down` once its last answer is older than this (a peer that never answered is )md"
     R"md(`down`). Writes for the units it owns then fail at once with **503 )md"
     R"md(`cluster.owner_unavailable`**, control POSTs for its streams get 404, and a Watch )md"
     R"md(stream to it that is still open is cancelled. The peer listener also pings a member's )md"
     R"md(connection that has sent nothing for this long and closes it when the ping goes )md"
     R"md(unanswered as long: the watches a hung member held on this node end with it.)md"},
  {"cluster", "ownerUnavailableErrorMs", "",
   "",
   "",
   R"md(How long a gateway keeps the subscriptions of a query whose owner it lost: the Watch )md"
     R"md(stream to the owner ended (at once when the owner's process dies, or when it becomes )md"
     R"md(`down`), or the owner was not `up` when the watch opened. If a fresh snapshot comes )md"
     R"md(in time, every subscriber gets a fresh full `data` baseline. After it, hub )md"
     R"md(subscriptions get the **Error frame `Observable query failed`** and direct streams )md"
     R"md(are closed. 0: they end as soon as the loss is reported.)md"},
  {"cluster", "forwardTimeoutMs", "",
   "",
   "",
   R"md(Deadline on a write or an SSE control POST forwarded to the node that owns or holds )md"
     R"md(it. A forwarded write that gets no answer in time fails with **503 )md"
     R"md(`cluster.owner_timeout`**; it may still have been applied, like any write whose )md"
     R"md(answer was lost. A control POST gets 503.)md"},
  {"cluster", "token", "tokenFile",
   R"md(—)md",
   R"md(at least 32 bytes)md",
   R"md(The secret members present to each other on every call (a file's trailing newline is )md"
     R"md(dropped). A member without it gets `UNAUTHENTICATED` and is never seen `up`. A )md"
     R"md(cluster needs `token`, `tls` or both; a node refuses to start with neither.)md"},
  {"cluster", "tls", "",
   R"md(—)md",
   R"md(`{ certFile, keyFile, caFile }` (PEM))md",
   R"md(Mutual TLS on the peer port: each member presents its certificate and requires one )md"
     R"md(signed by `caFile` from the others. The certificate must name the address the others )md"
     R"md(reach it at (DNS name or IP).)md"},
  {"cluster", "maxStreamQueueBytes", "",
   "",
   "",
   R"md(Bytes of changes an owner queues on one gateway's Watch stream (one per gateway node )md"
     R"md(and owner node); snapshots are not counted. A change that would go over it is )md"
     R"md(dropped, and once the queue is down to half the owner sends that watch a fresh )md"
     R"md(snapshot instead; the gateway's subscribers of that query get a fresh full `data` )md"
     R"md(baseline. On the gateway, also the bytes of one owner's events read and not yet )md"
     R"md(applied: at it, the gateway stops reading that owner's stream until half have been )md"
     R"md(applied (`weir_peer_stream_pauses_total`).)md"},
  {"log", "level", "",
   "",
   "",
   R"md(The lowest level written. `debug` adds a line per streaming connection opened and )md"
     R"md(closed.)md"},
  {"log", "format", "",
   "",
   "",
   R"md(`text`: a line per event for a terminal; `json`: one JSON object per line for log )md"
     R"md(shippers.)md"},
};
// clang-format on

constexpr std::int64_t kib = 1024;
constexpr std::int64_t mib = kib * kib;
constexpr std::int64_t gib = kib * mib;

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// A value as the page writes it: bytes also in MiB or GiB, milliseconds also in minutes, hours
// or days, where that is a whole number.
std::string number_text(std::string_view key, std::int64_t v) {
  auto text = std::to_string(v);
  auto whole = [&](std::int64_t unit, std::string_view name, std::string_view names) {
    if (v >= unit && v % unit == 0) {
      auto n = v / unit;
      text += " (" + std::to_string(n) + " " + std::string{n == 1 ? name : names} + ")";
      return true;
    }
    return false;
  };
  if (ends_with(key, "Bytes")) {
    whole(gib, "GiB", "GiB") || whole(mib, "MiB", "MiB");
  } else if (ends_with(key, "Ms")) {
    constexpr std::int64_t minute = 60000, hour = 60 * minute, day = 24 * hour;
    whole(day, "day", "days") || whole(hour, "h", "h") || whole(minute, "min", "min");
  }
  return text;
}

std::string words_text(std::span<const std::string_view> words) {
  std::string out;
  for (auto w : words) {
    out += (out.empty() ? "`" : ", `") + std::string{w} + "`";
  }
  return out;
}

struct cells {
  std::string dflt;
  std::string range;
  /// The field's initializer is not the default a node runs with (derived from another key, or
  /// computed at start): the row must say it in words.
  bool default_in_words = false;
};

// The default and range the schema declares for `section`.`key`; nothing when it does not
// declare the key (a key the loader reads with code of its own).
std::optional<cells> schema_cells(std::string_view section, std::string_view key) {
  const node_config defaults{};
  for (const auto& k : integer_keys()) {
    if (k.section == section && k.key == key) {
      auto fixed = k.get(defaults);
      return cells{number_text(key, fixed), std::to_string(k.min) + "–" + number_text(key, k.max),
                   k.derive != nullptr || fixed < k.min || fixed > k.max};
    }
  }
  for (const auto& k : flag_keys()) {
    if (k.section == section && k.key == key) {
      return cells{k.get(defaults) ? "`true`" : "`false`", "`true`, `false`"};
    }
  }
  for (const auto& k : choice_keys()) {
    if (k.section == section && k.key == key) {
      return cells{"`" + k.get(defaults) + "`", words_text(k.words)};
    }
  }
  for (const auto& k : text_keys()) {
    if (k.section == section && k.key == key) {
      auto v = k.get(defaults);
      return cells{v.empty() ? "—" : "`\"" + v + "\"`", "non-empty string"};
    }
  }
  for (const auto& k : endpoint_keys()) {
    if (k.section == section && k.key == key) {
      return cells{"`\"" + k.get(defaults) + "\"`",
                   "`\"host:port\"`, port 0–65535; IPv6 as `\"[::1]:8080\"`"};
    }
  }
  return std::nullopt;
}

// A row's two cells: the schema's, with the row's words instead where it has them.
cells row_cells(const reference_row& r) {
  auto dot = r.key.rfind('.');
  auto section = std::string{r.table};
  auto key = r.key;
  if (dot != std::string_view::npos) {
    section += "." + std::string{r.key.substr(0, dot)};
    key = r.key.substr(dot + 1);
  }
  auto declared = schema_cells(section, key);
  cells out;
  if (!r.default_text.empty()) {
    out.dflt = r.default_text;
  } else if (declared && declared->default_in_words) {
    throw std::logic_error("reference row " + std::string{r.table} + "." + std::string{r.key} +
                           " needs its default in words: it follows another key or is computed "
                           "at start");
  } else if (declared) {
    out.dflt = declared->dflt;
  } else {
    throw std::logic_error("reference row " + std::string{r.table} + "." + std::string{r.key} +
                           " needs its default in words: the schema does not declare it");
  }
  bool adds = r.range_text.starts_with(", ") || r.range_text.starts_with("; ");
  if (!r.range_text.empty() && !adds) {
    out.range = r.range_text;
  } else if (declared) {
    out.range = declared->range + std::string{r.range_text};
  } else {
    throw std::logic_error("reference row " + std::string{r.table} + "." + std::string{r.key} +
                           " needs its range in words: the schema does not declare it");
  }
  return out;
}

}  // namespace

std::span<const reference_row> reference_rows() {
  return rows;
}

std::span<const std::string_view> reference_tables() {
  return table_names;
}

std::string render_reference_table(std::string_view table) {
  auto head = std::find_if(std::begin(table_heads), std::end(table_heads),
                           [&](const table_head& h) { return h.table == table; });
  if (head == std::end(table_heads)) {
    throw std::logic_error("no reference table for section " + std::string{table});
  }
  std::string out = "| Key | Default | Range | " + std::string{head->meaning} + " |\n";
  out += "|---|---|---|---|\n";
  for (const auto& r : rows) {
    if (r.table != table) {
      continue;
    }
    auto c = row_cells(r);
    out += "| `" + std::string{r.key} + "`";
    if (!r.also.empty()) {
      out += " / `" + std::string{r.also} + "`";
    }
    out += " | " + c.dflt + " | " + c.range + " | " + std::string{r.meaning} + " |\n";
  }
  return out;
}

std::string reference_begin_marker(std::string_view table) {
  return "<!-- reference table `" + std::string{table} +
         "`: generated from apps/config/config_reference.cpp by `scripts/dev "
         "config-reference` -->\n";
}

std::string reference_end_marker(std::string_view table) {
  return "<!-- end of reference table `" + std::string{table} + "` -->\n";
}

core::result<std::string> regenerate_reference(std::string_view page) try {
  std::string out;
  std::size_t at = 0;
  for (auto table : table_names) {
    auto begin = reference_begin_marker(table);
    auto end = reference_end_marker(table);
    auto b = page.find(begin, at);
    auto e = b == std::string_view::npos ? b : page.find(end, b + begin.size());
    if (e == std::string_view::npos) {
      return core::make_error("config.invalid",
                              "the page has no markers, in order, for the "
                              "reference table of `" +
                                  std::string{table} + "`: " + begin);
    }
    out.append(page.substr(at, b + begin.size() - at));
    out += render_reference_table(table);
    out += end;
    at = e + end.size();
  }
  out.append(page.substr(at));
  return out;
} catch (const std::logic_error& e) {
  // A reference row the schema cannot complete: a mistake in config_reference.cpp.
  return core::make_error("config.invalid", e.what());
}

}  // namespace weir::config
