// @weir/client against a real Weir node (test/weir_node.mjs): the write API and its typed
// errors, live windows kept in order and equal to a fresh query through random writes and a
// node restart, the AG-UI state stream, abort.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { WeirClient, WeirError } from "../dist/index.js";
import { WeirNode, eventually } from "./weir_node.mjs";

let node;
let client;

before(async () => {
  node = await WeirNode.start();
  client = new WeirClient({ baseUrl: node.baseUrl });
});

after(async () => {
  await node?.stop();
});

test("writes answer versionIds, and refusals are WeirErrors with the envelope's code", async () => {
  const w = client.writes;
  const put = await w.put("js", "o1", "items", "a", { n: 1, tags: ["x"] });
  assert.match(put.versionId, /^.+$/);
  assert.equal(put.replayed, false);
  await w.update("js", "o1", "items", "a", { $inc: { n: 2 } });
  await w.patch("js", "o1", "items", "a", [{ op: "add", path: "/tags/-", value: "y" }]);
  await w.batch("js", "o1", "items", { upsert: [{ id: "b", n: 5 }], delete: ["zz"] });
  const cross = await w.crossUnitBatch("js", [
    { objectId: "o1", dataset: "notes", upsert: [{ id: "n1", text: "hi" }] },
    { objectId: "o2", dataset: "items", upsert: [{ id: "c", n: 9 }] },
  ]);
  assert.equal(cross.failed, 0);
  assert.equal(cross.writes.length, 2);
  const rows = await client.query("js", { objectId: "o1", dataset: "items", sort: ["id"] });
  assert.deepEqual(rows.records.map((r) => [r.id, r.n, r.tags]), [["a", 3, ["x", "y"]], ["b", 5, undefined]]);
  // Idempotency: the same key replays.
  const k1 = await w.put("js", "o1", "items", "k", { n: 1 }, { idempotencyKey: "js-k1" });
  const k2 = await w.put("js", "o1", "items", "k", { n: 1 }, { idempotencyKey: "js-k1" });
  assert.equal(k2.versionId, k1.versionId);
  assert.equal(k2.replayed, true);
  // Typed errors.
  await assert.rejects(w.batch("js", "o1", "items", { upsert: [{ id: "d" }, { id: "d" }] }), (e) => {
    assert.ok(e instanceof WeirError);
    assert.equal(e.code, "batch.duplicate_id");
    assert.equal(e.status, 400);
    assert.equal(e.details.id, "d");
    assert.equal(e.retryable, false);
    return true;
  });
  await assert.rejects(w.update("js", "o1", "items", "missing", { $set: { a: 1 } }), { code: "record.not_found", status: 404 });
  await assert.rejects(w.patch("js", "o1", "items", "a", [{ op: "test", path: "/n", value: 0 }]), { code: "patch.test_failed", status: 409 });
  await assert.rejects(client.query("nospace", { objectId: "o", dataset: "d" }), { code: "space.not_found", status: 404 });
  await assert.rejects(client.query("js", { objectId: "o1", dataset: "items", filters: {} }), { code: "request.unknown_field" });
  // `.` and `..` would be path steps: refused before anything is sent.
  await assert.rejects(w.put("js", "o1", "items", "..", { n: 1 }), { code: "request.invalid_field" });
  // No answer at all: a WeirError too, retryable.
  const nowhere = new WeirClient({ baseUrl: "http://127.0.0.1:1" });
  await assert.rejects(nowhere.writes.put("js", "o1", "items", "x", {}), (e) => {
    assert.ok(e instanceof WeirError);
    assert.equal(e.code, "network");
    assert.equal(e.status, 0);
    assert.equal(e.retryable, true);
    return true;
  });
});

/** Random writes to `object`'s items: puts of n in 0..19, deletes. */
async function randomWrites(object, count, rng) {
  for (let i = 0; i < count; i++) {
    const id = `r${Math.floor(rng() * 12)}`;
    if (rng() < 0.25) await client.writes.delete("js", object, "items", id).catch((e) => { if (e.code !== "record.not_found") throw e; });
    else await client.writes.put("js", object, "items", id, { n: Math.floor(rng() * 20), s: rng() < 0.5 ? "ä" : "z" });
  }
}

function seeded(seed) {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
}

test("a live window stays in the query's order and equals a fresh query, across a restart", async () => {
  await client.writes.put("js", "w1", "items", "r0", { n: 1 });
  const request = { objectId: "w1", dataset: "items", sort: ["-n", "s"], limit: 5, includeTotal: true };
  let latest;
  let notLive = 0;
  const closed = [];
  const stop = new AbortController();
  const done = client.subscribeWindow("js", request, (w) => { latest = w; if (!w.live) notLive += 1; }, {
    signal: stop.signal,
    minRetryMs: 50,
    onClosed: (r) => closed.push(r),
  });
  const same = async () => {
    const fresh = await client.query("js", request);
    return latest?.live && JSON.stringify(latest.records) === JSON.stringify(fresh.records);
  };
  await eventually(same, 10000, "the first snapshot");
  assert.equal(typeof latest.total, "number");
  const rng = seeded(7);
  for (let round = 0; round < 4; round++) {
    await randomWrites("w1", 25, rng);
    await eventually(same, 10000, `the window after round ${round}`);
  }
  // The node restarts: the stream ends (closed server_shutdown), the loop subscribes again.
  await node.restart();
  await randomWrites("w1", 10, rng);
  await eventually(same, 20000, "the window after a restart");
  assert.ok(closed.includes("server_shutdown"), `closed reasons: ${closed}`);
  assert.ok(notLive >= 1, "the window was marked not live while the node was away");
  stop.abort();
  assert.equal(await done, "aborted");
});

test("ops mode keeps the same window as docs", async () => {
  await client.writes.put("js", "w2", "items", "a", { n: 1, meta: { x: 1 } });
  const request = { objectId: "w2", dataset: "items", sort: ["n"], limit: 10 };
  let latest;
  const stop = new AbortController();
  const done = client.subscribeWindow("js", request, (w) => { latest = w; }, { signal: stop.signal, apply: "ops" });
  await eventually(() => latest?.live, 10000, "the snapshot");
  await client.writes.update("js", "w2", "items", "a", { $set: { "meta.y": 2 }, $unset: { "meta.x": true }, $inc: { n: 3 } });
  // An $unset of nothing does nothing, and the ops after it still apply.
  await client.writes.update("js", "w2", "items", "a", { $unset: { "missing.x": true }, $set: { z: 5 } });
  await client.writes.put("js", "w2", "items", "b", { n: 0 });
  await eventually(async () => JSON.stringify(latest.records) === JSON.stringify((await client.query("js", request)).records), 10000, "ops applied");
  stop.abort();
  await done;
});

test("a request the server refuses rejects the subscription instead of retrying", async () => {
  await assert.rejects(
    client.subscribeWindow("js", { objectId: "w1", dataset: "items", limit: 5 }, () => {}, { minRetryMs: 10 }),
    { code: "request.invalid_field", status: 400 },
  );
  // An error thrown by the caller's own callback ends it, as it was thrown.
  const mine = new Error("render failed");
  let retries = 0;
  await assert.rejects(
    client.subscribeWindow("js", { objectId: "w1", dataset: "items", sort: ["n"], limit: 5 }, () => { throw mine; }, {
      minRetryMs: 10,
      onRetry: () => { retries += 1; },
    }),
    (e) => e === mine,
  );
  assert.equal(retries, 0);
});

test("the state stream follows an object's document through snapshots and deltas", async () => {
  await client.writes.putObject("js", "doc", { title: "a", tags: [] });
  let state;
  const stop = new AbortController();
  const done = client.subscribeState("js", "doc", (s) => { state = s; }, { signal: stop.signal });
  await eventually(() => state?.title === "a", 10000, "the snapshot");
  for (let i = 0; i < 20; i++) {
    await client.writes.patchObject("js", "doc", [{ op: "add", path: "/tags/-", value: i }, { op: "replace", path: "/title", value: `t${i}` }]);
  }
  await eventually(() => state.title === "t19" && state.tags.length === 20, 10000, "the deltas");
  const fresh = await client.query("js", { sort: ["id"] });
  const row = fresh.records.find((r) => r.id === "doc");
  assert.deepEqual(state, row);
  stop.abort();
  await done;
});
