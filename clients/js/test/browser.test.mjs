// @weir/client in a real browser: Debian's chromium, headless, driven by puppeteer-core (the
// copy tests/node installs). The page is on the node's own origin (its /livez), the package's
// files are served to it from dist/ under /__client/, and its calls go through the browser's
// fetch streaming and the browser's cookie: the node requires a signed-in caller for the space,
// and the only credential the page has is the JWT cookie the test sets.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

import { WeirNode, signJwt } from "./weir_node.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const dist = resolve(here, "../dist");
const chromium = process.env.WEIR_CHROMIUM ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find(existsSync);
const secret = "weir-js-client-browser-test-secret-0123456789";

const jwt = (claims) => signJwt(secret, claims);

let node;
let browser;

before(async () => {
  assert.ok(chromium, "chromium is needed for this test: scripts/setup installs it (or set WEIR_CHROMIUM)");
  node = await WeirNode.start({
    yaml: `auth:\n  jwt:\n    secret: "${secret}"\n    cookie: weir_token\nspaces:\n  - name: "private"\n    read: authenticated\n    write: authenticated\n`,
  });
  const require = createRequire(resolve(here, "../../../tests/node/package.json"));
  const { default: puppeteer } = await import(pathToFileURL(require.resolve("puppeteer-core")).href);
  browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });
});

after(async () => {
  await browser?.close();
  await node?.stop();
});

test("in Chromium, with a cookie for credential: writes, a live window and a state stream", async () => {
  // Without the cookie the space is closed.
  const anonymous = await fetch(`${node.baseUrl}/v1/spaces/private/query`, {
    method: "POST",
    body: JSON.stringify({ objectId: "o", dataset: "d" }),
  });
  assert.equal(anonymous.status, 401);

  const page = await browser.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  await page.setRequestInterception(true);
  page.on("request", (req) => {
    const url = new URL(req.url());
    if (url.pathname.startsWith("/__client/")) {
      const file = join(dist, url.pathname.slice("/__client/".length));
      if (existsSync(file)) {
        req.respond({ status: 200, contentType: "text/javascript", body: readFileSync(file) });
      } else {
        req.respond({ status: 404, body: "" });
      }
      return;
    }
    req.continue();
  });
  await page.goto(`${node.baseUrl}/livez`);
  await page.setCookie({
    name: "weir_token",
    value: jwt({ sub: "browser-user", exp: Math.floor(Date.now() / 1000) + 600 }),
    url: node.baseUrl,
  });

  const result = await page.evaluate(async () => {
    const { WeirClient } = await import("/__client/index.js");
    const weir = new WeirClient({ baseUrl: location.origin, cookies: true });
    const who = await weir.auth();
    await weir.writes.put("private", "room", "msgs", "m0", { n: 0, text: "first" });
    await weir.writes.putObject("private", "room", { title: "start" });
    const request = { objectId: "room", dataset: "msgs", sort: ["-n"], limit: 3 };
    let latest;
    let state;
    const stop = new AbortController();
    const windowDone = weir.subscribeWindow("private", request, (w) => { latest = w; }, { signal: stop.signal });
    const stateDone = weir.subscribeState("private", "room", (s) => { state = s; }, { signal: stop.signal });
    const until = async (pred, what) => {
      const deadline = Date.now() + 10000;
      while (Date.now() < deadline) {
        if (await pred()) return;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`timed out waiting for ${what}`);
    };
    await until(() => latest?.live && state?.title === "start", "the snapshots");
    for (let i = 1; i <= 10; i++) {
      await weir.writes.put("private", "room", "msgs", `m${i}`, { n: i, text: `message ${i}` });
      await weir.writes.patchObject("private", "room", [{ op: "replace", path: "/title", value: `t${i}` }]);
    }
    const fresh = await weir.query("private", request);
    await until(() => JSON.stringify(latest.records) === JSON.stringify(fresh.records) && state.title === "t10", "the changes");
    stop.abort();
    return { who, window: latest.records.map((r) => r.id), title: state.title, ended: await windowDone, stateEnded: (await stateDone) === undefined };
  });
  assert.deepEqual(problems, []);
  assert.deepEqual(result.who, { authorized: true, accountId: "browser-user" });
  assert.deepEqual(result.window, ["m10", "m9", "m8"]);
  assert.equal(result.title, "t10");
  assert.equal(result.ended, "aborted");
  assert.equal(result.stateEnded, true);
});
