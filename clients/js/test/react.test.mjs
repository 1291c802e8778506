// @weir/client/react's useWindow in a real React tree (react-dom rendering into jsdom's
// document) against a real Weir node: the list follows the writes, a new request restarts the
// subscription on the new window, and unmounting ends the stream on the node.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { JSDOM } from "jsdom";

import { WeirClient } from "../dist/index.js";
import { WeirNode, eventually } from "./weir_node.mjs";

let node;
let client;
let dom;

before(async () => {
  node = await WeirNode.start();
  client = new WeirClient({ baseUrl: node.baseUrl });
  dom = new JSDOM("<!doctype html><div id=root></div>");
  globalThis.window = dom.window;
  globalThis.document = dom.window.document;
  if (!("navigator" in globalThis)) globalThis.navigator = dom.window.navigator;
  globalThis.IS_REACT_ACT_ENVIRONMENT = false;
});

after(async () => {
  dom?.window.close();
  await node?.stop();
});

test("useWindow renders a live window, follows a new request and stops on unmount", async () => {
  const React = await import("react");
  const { createRoot } = await import("react-dom/client");
  const { useWindow } = await import("../dist/react.js");
  const h = React.createElement;

  for (const [id, n] of [["a", 1], ["b", 2], ["c", 3], ["d", 4]]) {
    await client.writes.put("react", "board", "cards", id, { n });
  }
  function Cards({ limit }) {
    const { window: w, error } = useWindow(client, "react", { objectId: "board", dataset: "cards", sort: ["-n"], limit, includeTotal: true });
    if (error) return h("p", { id: "error" }, String(error));
    if (!w) return h("p", { id: "loading" }, "loading");
    return h("ul", { "data-total": w.total, "data-live": String(w.live) },
      w.records.map((r) => h("li", { key: r.id }, `${r.id}:${r.n}`)));
  }
  const rootEl = document.getElementById("root");
  const root = createRoot(rootEl);
  const shown = () => [...rootEl.querySelectorAll("li")].map((li) => li.textContent).join(",");

  root.render(h(Cards, { limit: 2 }));
  await eventually(() => shown() === "d:4,c:3", 10000, "d:4,c:3");
  assert.equal(rootEl.querySelector("ul").getAttribute("data-total"), "4");
  assert.equal(rootEl.querySelector("ul").getAttribute("data-live"), "true");

  // Writes reach the rendered list in sort order.
  await client.writes.put("react", "board", "cards", "e", { n: 10 });
  await eventually(() => shown() === "e:10,d:4", 10000, "e:10,d:4");
  await client.writes.delete("react", "board", "cards", "e");
  await eventually(() => shown() === "d:4,c:3", 10000, "d:4,c:3");

  // Another request: a new subscription on the new window.
  root.render(h(Cards, { limit: 3 }));
  await eventually(() => shown() === "d:4,c:3,b:2", 10000, "d:4,c:3,b:2");
  await eventually(async () => (await streams()) === 1, 10000, "one windowed stream");

  // Unmounted: the stream ends on the node.
  root.unmount();
  await eventually(async () => (await streams()) === 0, 10000, "no windowed stream");
});

/** Windowed streams open on the node (its /metrics). */
async function streams() {
  const text = await (await fetch(`${node.baseUrl}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith('weir_connections{transport="windowed"}'));
  assert.ok(line, 'weir_connections{transport="windowed"} on /metrics');
  return Number(line.split(" ")[1]);
}
