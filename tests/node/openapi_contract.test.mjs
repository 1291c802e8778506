// docs/openapi.yaml against real nodes (openapi_contract.mjs checks each answer): every
// documented operation is sent, with the answers a client meets — successes, refusals of
// each kind, streams with their events — and every answer must be one the document gives, in
// the form it gives. A node with JWT auth, space rules and named queries, and a node with no
// configuration at all (anonymous callers everywhere). And every metric family the nodes'
// /metrics answers must be in docs/operations.md's metrics table with its type. Run by
// scripts/dev test.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { WeirNode } from "../../clients/js/test/weir_node.mjs";
import { exchange, exercised, spec } from "./openapi_contract.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const secret = "0123456789abcdef0123456789abcdef0123";
const config = `auth:
  jwt:
    secret: "${secret}"
spaces:
  - name: "locked"
    read: authenticated
    write: { roles: [writer] }
queries:
  - name: T.Tasks.All
    route: /tasks
    space: s1
    object: o1
    dataset: d
    sort: ["id"]
  - name: T.Tasks.ByObject
    route: /api/tasks/by
    space: s1
    object: "{obj}"
    dataset: d
    arguments: { obj: string, n: integer }
  - name: T.Doc
    route: /doc
    space: s1
    object: o1
  - name: T.Secret
    route: /secret
    space: s1
    object: o1
    authorize: authenticated
`;

const b64 = (o) => Buffer.from(JSON.stringify(o)).toString("base64url");
function jwt(claims) {
  const h = b64({ alg: "HS256", typ: "JWT" });
  const p = b64({ exp: Math.floor(Date.now() / 1000) + 3600, ...claims });
  return `${h}.${p}.${createHmac("sha256", secret).update(`${h}.${p}`).digest("base64url")}`;
}
const user = { Authorization: `Bearer ${jwt({ sub: "alice" })}` };
const admin = { Authorization: `Bearer ${jwt({ sub: "root", roles: ["admin"] })}` };
const bad = { Authorization: "Bearer abc" };

let secured;
let open;

before(async () => {
  secured = await WeirNode.start({ yaml: config });
  open = await WeirNode.start();
});

after(async () => {
  await secured?.stop();
  await open?.stop();
});

/** One exchange, its label in the failure. */
function on(node) {
  return async (label, method, path, options) => {
    try {
      return await exchange(node, method, path, options);
    } catch (e) {
      e.message = `${label}: ${e.message}`;
      throw e;
    }
  };
}

test("a node with JWT auth, space rules and named queries answers as documented", async () => {
  const node = secured;
  const t = on(node);
  await t("livez", "GET", "/livez", { expect: 200 });
  await t("livez head", "HEAD", "/livez", { expect: 200 });
  await t("readyz", "GET", "/readyz", { expect: 200 });
  await t("readyz head", "HEAD", "/readyz");
  await t("cluster", "GET", "/cluster/health", { expect: 200 });
  await t("cluster head", "HEAD", "/cluster/health");
  await t("metrics", "GET", "/metrics", { expect: 200 });
  await t("metrics head", "HEAD", "/metrics");
  await t("ui", "GET", "/ui", { expect: 200 });
  await t("ui head", "HEAD", "/ui");
  await t("ui asset", "GET", "/ui/app.js", { expect: 200 });
  await t("ui asset head", "HEAD", "/ui/style.css");
  await t("ui asset 304", "GET", "/ui/favicon.svg", { headers: { "If-None-Match": "*" }, expect: 304 });
  await t("ui asset 404", "GET", "/ui/nope", { expect: 404 });
  await t("ui events 401", "GET", "/ui/events", { expect: 401 });
  await t("ui events 403", "GET", "/ui/events", { headers: user, expect: 403 });
  await t("ui events origin", "GET", "/ui/events", { headers: { ...admin, Origin: "http://evil.example" }, expect: 403 });
  await t("ui events", "GET", "/ui/events", { headers: admin, stream: 2, expect: 200 });
  await t("ui events head", "HEAD", "/ui/events", { headers: admin, expect: 200 });
  await t("ws 426", "GET", "/.cratis/queries/ws", { expect: 426 });
  await t("ws head", "HEAD", "/.cratis/queries/ws", { expect: 200 });
  await t("sse hub 401", "GET", "/.cratis/queries/sse", { headers: bad, expect: 401 });
  await t("sse hub head", "HEAD", "/.cratis/queries/sse", { expect: 200 });
  await t("sse 415", "POST", "/.cratis/queries/sse/subscribe", { body: "{}", headers: { "Content-Type": "text/plain" }, expect: 415 });
  await t("sse 400", "POST", "/.cratis/queries/sse/subscribe", { body: {}, expect: 400 });
  await t("sse 404", "POST", "/.cratis/queries/sse/unsubscribe", { body: { connectionId: "x", queryId: "q" }, expect: 404 });
  // SSE hub with a subscription, read by hand
  {
    const ac = new AbortController();
    const res = await fetch(node.baseUrl + "/.cratis/queries/sse", { signal: ac.signal });
    const reader = res.body.getReader();
    const { value } = await reader.read();
    const id = /"payload":"([^"]+)"/.exec(new TextDecoder().decode(value))[1];
    await t("sse subscribe", "POST", "/.cratis/queries/sse/subscribe", { body: { connectionId: id, queryId: "q1", revision: 1, request: { queryName: "T.Tasks.All", transferMode: "delta" } }, expect: 200 });
    await t("sse subscribe 401", "POST", "/.cratis/queries/sse/subscribe", { body: { connectionId: id, queryId: "q2", request: { queryName: "T.Secret" } }, expect: 401 });
    await t("sse subscribe late 400", "POST", "/.cratis/queries/sse/subscribe", { body: { connectionId: id, queryId: "q 2", request: { queryName: "T.Secret" } }, expect: 400 });
    await t("sse unsubscribe", "POST", "/.cratis/queries/sse/unsubscribe", { body: { connectionId: id, queryId: "q1", revision: 1 }, expect: 200 });
    ac.abort();
  }
  await t("sse hub stream", "GET", "/.cratis/queries/sse", { stream: 1, expect: 200 });
  await t("catalog", "GET", "/.cratis/queries", { expect: 200 });
  await t("catalog head", "HEAD", "/.cratis/queries");
  await t("health 401", "GET", "/.cratis/queries/health", { expect: 401 });
  await t("health", "GET", "/.cratis/queries/health", { headers: user, expect: 200 });
  await t("health head", "HEAD", "/.cratis/queries/health", { headers: user, expect: 200 });
  await t("health sse", "GET", "/.cratis/queries/health", { headers: { ...user, Accept: "text/event-stream" }, stream: 1, expect: 200 });
  await t("health origin", "GET", "/.cratis/queries/health", { headers: { ...user, Origin: "http://evil.example" }, expect: 403 });
  await t("auth", "GET", "/v1/auth", { expect: 200 });
  await t("auth user", "GET", "/v1/auth", { headers: user, expect: 200 });
  await t("auth head", "HEAD", "/v1/auth", { expect: 200 });
  await t("auth origin", "GET", "/v1/auth", { headers: { Origin: "http://evil.example" }, expect: 403 });
  // writes
  await t("put object", "PUT", "/v1/spaces/s2/objects/o1", { body: { name: "x", tags: ["a"] }, expect: 200 });
  await t("put object idem", "PUT", "/v1/spaces/s2/objects/o1", { body: { name: "x", tags: ["a"] }, headers: { "Idempotency-Key": "k-1" }, expect: 200 });
  await t("put object idem replay", "PUT", "/v1/spaces/s2/objects/o1", { body: { name: "x", tags: ["a"] }, headers: { "Idempotency-Key": "k-1" }, expect: 200 });
  await t("put object idem 422", "PUT", "/v1/spaces/s2/objects/o1", { body: { name: "y" }, headers: { "Idempotency-Key": "k-1" }, expect: 422 });
  await t("put object 400", "PUT", "/v1/spaces/s2/objects/o1", { body: "[1]", expect: 400 });
  await t("put object 400 id", "PUT", "/v1/spaces/s2/objects/o1", { body: { id: "zz" }, expect: 400 });
  await t("put object bad key", "PUT", "/v1/spaces/s2/objects/o1", { body: { a: 1 }, headers: { "Idempotency-Key": "a b" }, expect: 400 });
  await t("put object 401", "PUT", "/v1/spaces/locked/objects/o1", { body: {}, expect: 401 });
  await t("put object 403", "PUT", "/v1/spaces/locked/objects/o1", { body: {}, headers: user, expect: 403 });
  await t("patch object", "PATCH", "/v1/spaces/s2/objects/o1", { body: [{ op: "replace", path: "/name", value: "z" }], headers: { "Content-Type": "application/json-patch+json" }, expect: 200 });
  await t("patch object 415", "PATCH", "/v1/spaces/s2/objects/o1", { body: [], expect: 415 });
  await t("patch object 409", "PATCH", "/v1/spaces/s2/objects/o1", { body: [{ op: "test", path: "/name", value: "q" }], headers: { "Content-Type": "application/json-patch+json" }, expect: 409 });
  await t("patch object 422", "PATCH", "/v1/spaces/s2/objects/o1", { body: [{ op: "remove", path: "/nope" }], headers: { "Content-Type": "application/json-patch+json" }, expect: 422 });
  await t("patch object 400", "PATCH", "/v1/spaces/s2/objects/o1", { body: [{ op: "bogus", path: "/x" }], headers: { "Content-Type": "application/json-patch+json" }, expect: 400 });
  await t("patch object 404", "PATCH", "/v1/spaces/s2/objects/none", { body: [], headers: { "Content-Type": "application/json-patch+json" }, expect: 404 });
  await t("put record", "PUT", "/v1/spaces/s2/objects/o1/datasets/d/records/r1", { body: { a: 1, n: 1 }, expect: 200 });
  await t("patch record", "PATCH", "/v1/spaces/s2/objects/o1/datasets/d/records/r1", { body: { $inc: { n: 1 } }, expect: 200 });
  await t("patch record 400", "PATCH", "/v1/spaces/s2/objects/o1/datasets/d/records/r1", { body: { $bad: {} }, expect: 400 });
  await t("patch record 404", "PATCH", "/v1/spaces/s2/objects/o1/datasets/d/records/none", { body: { $set: { a: 1 } }, expect: 404 });
  await t("patch record jp", "PATCH", "/v1/spaces/s2/objects/o1/datasets/d/records/r1", { body: [{ op: "add", path: "/b", value: 2 }], headers: { "Content-Type": "application/json-patch+json" }, expect: 200 });
  await t("delete record 404", "DELETE", "/v1/spaces/s2/objects/o1/datasets/d/records/none", { expect: 404 });
  await t("batch", "POST", "/v1/spaces/s2/objects/o1/datasets/d/records", { body: { upsert: [{ id: "r2", x: 1 }, { id: "r3" }], delete: ["none"] }, expect: 200 });
  await t("batch 400", "POST", "/v1/spaces/s2/objects/o1/datasets/d/records", { body: { upsert: [{ id: "r2" }], delete: ["r2"] }, expect: 400 });
  await t("batch 400b", "POST", "/v1/spaces/s2/objects/o1/datasets/d/records", { body: { foo: 1 }, expect: 400 });
  await t("delete record", "DELETE", "/v1/spaces/s2/objects/o1/datasets/d/records/r3", { expect: 200 });
  await t("xbatch", "POST", "/v1/spaces/s2/batch", { body: { writes: [{ objectId: "o2", dataset: "d", upsert: [{ id: "a" }] }, { objectId: "o3", dataset: "d", delete: ["zz"] }] }, headers: { "Idempotency-Key": "xb-1" }, expect: 200 });
  await t("xbatch replay", "POST", "/v1/spaces/s2/batch", { body: { writes: [{ objectId: "o2", dataset: "d", upsert: [{ id: "a" }] }] }, headers: { "Idempotency-Key": "xb-1" }, expect: 200 });
  await t("xbatch 400", "POST", "/v1/spaces/s2/batch", { body: { writes: [] }, expect: 400 });
  await t("xbatch 400 dup", "POST", "/v1/spaces/s2/batch", { body: { writes: [{ objectId: "o2", dataset: "d", upsert: [{ id: "a" }] }, { objectId: "o2", dataset: "d", delete: ["b"] }] }, expect: 400 });
  // windowed
  const w = { objectId: "o1", dataset: "d", sort: ["id"], limit: 2, includeTotal: true, projection: { a: 1 } };
  await t("wq", "POST", "/v1/spaces/s2/query", { body: w, expect: 200 });
  await t("wq objects", "POST", "/v1/spaces/s2/objects/query", { body: { sort: ["-modifiedAt"] }, expect: 200 });
  await t("wq datasets", "POST", "/v1/spaces/s2/datasets/query", { body: { dataset: "d", filter: { x: { $exists: true } } }, expect: 200 });
  await t("wq 400", "POST", "/v1/spaces/s2/query", { body: { x: 1 }, expect: 400 });
  await t("wq 400 filter", "POST", "/v1/spaces/s2/datasets/query", { body: { dataset: "d", filter: { $foo: 1 } }, expect: 400 });
  await t("wq 400 nil", "POST", "/v1/spaces/s2/query", { body: { objectId: "null", dataset: "d" }, expect: 400 });
  await t("wq 404", "POST", "/v1/spaces/nope/objects/query", { body: {}, expect: 404 });
  await t("wq 401", "POST", "/v1/spaces/locked/query", { body: {}, expect: 401 });
  await t("wq bad token", "POST", "/v1/spaces/s2/query", { body: w, headers: bad, expect: 401 });
  await t("ws sub", "POST", "/v1/spaces/s2/query/subscribe", { trigger: () => fetch(node.baseUrl + "/v1/spaces/s2/objects/o1/datasets/d/records/r0", { method: "PUT", body: JSON.stringify({ a: 0 }) }), body: { ...w, includeTotal: false }, stream: 3, expect: 200 });
  // A change whose ops are an $unset of one path (an op without a payload).
  const unset = await t("ws sub unset", "POST", "/v1/spaces/s2/query/subscribe", { trigger: () => fetch(node.baseUrl + "/v1/spaces/s2/objects/o1/datasets/d/records/r1", { method: "PATCH", body: JSON.stringify({ $unset: { a: true } }) }), body: { objectId: "o1", dataset: "d", sort: ["id"], limit: 5 }, stream: 3, expect: 200 });
  assert.match(unset.events[2].data, /"\$unset"/, "the changes frame carries the $unset op");
  await t("ws sub 400", "POST", "/v1/spaces/s2/query/subscribe", { body: { objectId: "o1", dataset: "d", limit: 2 }, expect: 400 });
  await t("ws sub objects", "POST", "/v1/spaces/s2/objects/query/subscribe", { trigger: () => fetch(node.baseUrl + "/v1/spaces/s2/objects/o9", { method: "PUT", body: JSON.stringify({ name: "nine" }) }), body: { sort: ["-modifiedAt"], limit: 1 }, stream: 3, expect: 200 });
  await t("ws sub datasets", "POST", "/v1/spaces/s2/datasets/query/subscribe", { body: { dataset: "d" }, stream: 2, expect: 200 });
  // object deletion: stream sees removal and closed
  await t("ws sub deleted", "POST", "/v1/spaces/s2/query/subscribe", { trigger: () => fetch(node.baseUrl + "/v1/spaces/s2/objects/o2", { method: "DELETE" }), body: { objectId: "o2", dataset: "d" }, stream: 4, expect: 200 });
  await t("wq 410", "POST", "/v1/spaces/s2/query", { body: { objectId: "o2", dataset: "d" }, expect: 410 });
  await t("delete object 404", "DELETE", "/v1/spaces/s2/objects/o2", { expect: 404 });
  // state and agent
  await t("state", "GET", "/v1/spaces/s2/objects/o1/state", { trigger: () => fetch(node.baseUrl + "/v1/spaces/s2/objects/o1", { method: "PUT", body: JSON.stringify({ name: "again", list: [{ id: "a", v: 1 }] }) }), stream: 2, expect: 200 });
  await t("state empty", "GET", "/v1/spaces/s2/objects/nothing/state", { stream: 1, expect: 200 });
  await t("state head", "HEAD", "/v1/spaces/s2/objects/o1/state", { expect: 200 });
  await t("state 406", "GET", "/v1/spaces/s2/objects/o1/state", { headers: { Accept: "application/json" }, expect: 406 });
  await t("state 404", "GET", "/v1/spaces/none/objects/o1/state", { expect: 404 });
  await t("state 400", "GET", "/v1/spaces/s2/objects/%7F/state", { expect: 400 });
  await t("agent", "POST", "/v1/spaces/s2/objects/o1/agent", { body: { threadId: "t", runId: "r", parentRunId: "p", messages: [] }, stream: 2, expect: 200 });
  await t("agent 400", "POST", "/v1/spaces/s2/objects/o1/agent", { body: { threadId: "t" }, expect: 400 });
  await t("agent 400b", "POST", "/v1/spaces/s2/objects/o1/agent", { body: "nope", expect: 400 });
  // named queries
  await t("named", "GET", "/tasks", { expect: 200 });
  await t("named head", "HEAD", "/tasks", { expect: 200 });
  await t("named 400", "GET", "/tasks?page=x", { expect: 400 });
  await t("named doc", "GET", "/doc", { expect: 200 });
  await t("named secret 401", "GET", "/secret", { expect: 401 });
  await t("named secret", "GET", "/secret", { headers: user, expect: 200 });
  await t("named 404", "GET", "/nothing-here", { expect: 404 });
  await t("named sse", "GET", "/tasks?transferMode=delta", { headers: { Accept: "text/event-stream" }, stream: 1, expect: 200 });
  await t("named origin", "GET", "/tasks", { headers: { Origin: "http://evil.example" }, expect: 403 });
  await t("delete object", "DELETE", "/v1/spaces/s2/objects/o9", { expect: 200 });
});

test("a node without configuration answers as documented", async () => {
  const node = open;
  const t = on(node);
  await t("seed", "PUT", "/v1/spaces/s2/objects/o1/datasets/d/records/r1", { body: { a: 1 }, expect: 200 });
  await t("ui events anon", "GET", "/ui/events", { stream: 1, expect: 200 });
  await t("health anon", "GET", "/.cratis/queries/health", { expect: 200 });
  await t("auth anon", "GET", "/v1/auth", { expect: 200 });
  await t("413 write", "PUT", "/v1/spaces/s2/objects/o1", { body: JSON.stringify({ a: "x".repeat(1100000) }), expect: 413 });
  await t("413 windowed", "POST", "/v1/spaces/s2/query", { body: JSON.stringify({ a: "x".repeat(1100000) }), expect: 413 });
  await t("413 livez", "GET", "/livez", { expect: 200 });
  await t("record too large", "PUT", "/v1/spaces/s2/objects/o1/datasets/d/records/big", { body: JSON.stringify({ a: "x".repeat(1048560) }), expect: 413 });
  await t("too deep", "PUT", "/v1/spaces/s2/objects/o1/datasets/d/records/deep", { body: "[".repeat(70) + "]".repeat(70), expect: 400 });
  await t("bad utf8 target", "GET", "/v1/spaces/%FF/objects/o1/state", { expect: 400 });
  await t("xbatch 413 record", "POST", "/v1/spaces/s2/batch", { body: JSON.stringify({ writes: [{ objectId: "o1", dataset: "d", upsert: [{ id: "a", t: "x".repeat(1048560) }] }] }), expect: 413 });
  await t("ws sub deauth-less datasets", "POST", "/v1/spaces/s2/datasets/query/subscribe", { body: { dataset: "d", sort: ["-_ver.id"], limit: 1, includeTotal: true }, stream: 2, expect: 200 });
});

test("methods a path does not serve get what its x-weir-other-methods says", async () => {
  const sample = { space: "s2", objectId: "o1", dataset: "d", id: "r1", asset: "app.js", queryRoute: "tasks" };
  const methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];
  for (const [template, item] of Object.entries(spec.paths)) {
    const other = item["x-weir-other-methods"];
    if (!other) continue;
    const path = template.replace(/\{([^}]+)\}/g, (_, p) => sample[p]);
    const method = methods.find((m) => !item[m.toLowerCase()]);
    assert.ok(method, `${template}: every method is served, yet x-weir-other-methods is given`);
    const res = await fetch(secured.baseUrl + path, { method, headers: user });
    const what = `${method} ${path}`;
    assert.equal(res.status, other.status, what);
    if (other.allow) assert.equal(res.headers.get("allow"), other.allow, `${what}: Allow`);
    const text = await res.text();
    if (text !== "" && other.body === "envelope") {
      const body = JSON.parse(text);
      assert.equal(body.error?.code, other.code, `${what}: the envelope's code`);
    }
  }
});

test("every metric /metrics answers is in docs/operations.md's table, with its type", async () => {
  // After the exchanges above, so the families that appear with their first sample are there.
  const doc = readFileSync(resolve(here, "../../docs/operations.md"), "utf8");
  const table = doc.split("## Metrics")[1]?.split("\n## ")[0] ?? "";
  const rows = table.split("\n").filter((l) => l.startsWith("| `weir_"));
  for (const node of [secured, open]) {
    const text = await (await fetch(`${node.baseUrl}/metrics`)).text();
    const families = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]);
    assert.ok(families.length > 10, "metric families on /metrics");
    for (const [name, type] of families) {
      // Cells split on unescaped pipes (label alternatives are written `a"\|"b`).
      const cells = (r) => r.split(/(?<!\\)\|/);
      const row = rows.find((r) => cells(r)[1].includes("`" + name + "`") || cells(r)[1].includes("`" + name + "{"));
      assert.ok(row, `${name} is not documented in docs/operations.md#metrics`);
      assert.equal(cells(row)[2].trim(), type, `${name}: the documented type`);
    }
  }
});

test("every documented operation was exercised", () => {
  const all = [];
  for (const [p, item] of Object.entries(spec.paths)) {
    for (const m of ["get", "head", "post", "put", "patch", "delete"]) {
      if (item[m]) all.push(`${m.toUpperCase()} ${p}`);
    }
  }
  assert.deepEqual(all.filter((x) => !exercised.has(x)), []);
});
