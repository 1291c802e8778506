// subscribeState when the caller's credential runs out: the node ends the stream with RUN_ERROR
// auth.expired, onState gets null (what it showed must go), retries answer 401 while the token
// provider has nothing valid, and a valid token brings a fresh snapshot back.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { WeirClient } from "../dist/index.js";
import { WeirNode, eventually, signJwt } from "./weir_node.mjs";

const secret = "weir-js-client-state-auth-secret-0123456789";
const jwt = (claims) => signJwt(secret, claims);

let node;
before(async () => {
  node = await WeirNode.start({
    yaml: `auth:\n  jwt:\n    secret: "${secret}"\n    clockSkewSeconds: 0\nspaces:\n  - name: "private"\n    read: authenticated\n    write: authenticated\n`,
  });
});
after(async () => {
  await node?.stop();
});

test("an expired credential clears the state until a valid one brings a snapshot", async () => {
  const now = () => Math.floor(Date.now() / 1000);
  const writer = new WeirClient({ baseUrl: node.baseUrl, token: () => jwt({ sub: "writer", exp: now() + 600 }) });
  await writer.writes.putObject("private", "doc", { title: "secret plans" });

  let token = jwt({ sub: "alice", exp: now() + 2 });
  const reader = new WeirClient({ baseUrl: node.baseUrl, token: () => token });
  const seen = [];
  const codes = [];
  const stop = new AbortController();
  const done = reader.subscribeState("private", "doc", (s) => { seen.push(s === null ? null : s.title); },
    { signal: stop.signal, minRetryMs: 50, maxRetryMs: 200, onRunError: (code) => codes.push(code) });
  await eventually(() => seen[0] === "secret plans", 10000, "the first snapshot");
  // The token expires within two seconds; every retry meanwhile gets an expired one.
  token = jwt({ sub: "alice", exp: now() - 10 });
  await eventually(() => seen.includes(null), 10000, "the state cleared");
  assert.ok(codes.includes("auth.expired"), `RUN_ERROR codes: ${codes}`);
  assert.deepEqual(seen, ["secret plans", null]);
  await new Promise((r) => setTimeout(r, 300));  // retries answered 401: nothing more shown
  assert.deepEqual(seen, ["secret plans", null]);
  token = jwt({ sub: "alice", exp: now() + 600 });
  await eventually(() => seen.length === 3, 10000, "a fresh snapshot");
  assert.deepEqual(seen, ["secret plans", null, "secret plans"]);
  stop.abort();
  await done;
});
