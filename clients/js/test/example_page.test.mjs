// The example page (examples/live-window.html behind examples/serve.mjs) in headless Chromium
// against a real Weir node started with --demo: with no parameters the page shows the demo's
// chat room, newest first, and follows the demo's writer; with parameters it shows another
// window, follows writes made elsewhere, and its own form writes through the same origin.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

import { WeirClient } from "../dist/index.js";
import { WeirNode, eventually, freePort } from "./weir_node.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const chromium = process.env.WEIR_CHROMIUM ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find(existsSync);

let node;
let server;
let browser;
let pageUrl;

before(async () => {
  assert.ok(chromium, "chromium is needed for this test: scripts/setup installs it (or set WEIR_CHROMIUM)");
  node = await WeirNode.start({ args: ["--demo"] });
  const port = await freePort();
  server = spawn(process.execPath, [resolve(here, "../examples/serve.mjs"), "--weir", node.baseUrl, "--port", String(port)],
    { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise((res, rej) => {
    server.stdout.once("data", res);
    server.once("exit", (code) => rej(new Error(`serve.mjs exited with ${code}`)));
  });
  pageUrl = `http://127.0.0.1:${port}/`;
  const require = createRequire(resolve(here, "../../../tests/node/package.json"));
  const { default: puppeteer } = await import(pathToFileURL(require.resolve("puppeteer-core")).href);
  browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"] });
});

after(async () => {
  await browser?.close();
  server?.kill();
  await node?.stop();
});

test("with no parameters, the example page follows the demo's chat room", async () => {
  const page = await browser.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push(e.message));
  await page.goto(pageUrl);
  const rows = () => page.$$eval("#rows tr", (trs) => trs.map((tr) => tr.dataset.id));
  await eventually(async () => (await rows()).length === 20, 20000, "the demo's 20 newest messages");
  assert.equal(await page.$eval("#status", (e) => e.dataset.live), "true");
  // The demo's writer posts a line every second: a new one comes first.
  const first = (await rows())[0];
  await eventually(async () => (await rows())[0] !== first, 10000, "a new message from the demo's writer");
  assert.equal((await rows()).length, 20);
  assert.deepEqual(problems, []);
  await page.close();
});

test("the example page shows a live window and writes through its form", async () => {
  const client = new WeirClient({ baseUrl: node.baseUrl });
  for (const [id, n] of [["m1", 1], ["m2", 2], ["m3", 3]]) {
    await client.writes.put("ex", "room", "msgs", id, { n });
  }
  const page = await browser.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push(e.message));
  await page.goto(`${pageUrl}?space=ex&objectId=room&dataset=msgs&sort=-n&limit=2`);
  const ids = () => page.$$eval("#rows tr", (trs) => trs.map((tr) => tr.dataset.id).join(","));
  await eventually(async () => (await ids()) === "m3,m2", 10000, "the first window on the page");
  assert.equal(await page.$eval("#status", (e) => e.dataset.live), "true");
  assert.equal(await page.$eval("#total", (e) => e.textContent), "(3 records)");

  // A write made elsewhere reaches the page.
  await client.writes.put("ex", "room", "msgs", "m9", { n: 9 });
  await eventually(async () => (await ids()) === "m9,m3", 10000, "the page following a write");

  // The page's own form writes.
  await page.type("#write input[name=id]", "m7");
  await page.$eval("#write input[name=doc]", (e) => { e.value = '{"n": 7}'; });
  await page.click("#write button");
  await eventually(async () => (await page.$eval("#write-result", (e) => e.textContent)).startsWith("written"), 10000, "the form's write");
  await eventually(async () => (await ids()) === "m9,m7", 10000, "the form's write in the window");
  assert.deepEqual(problems, []);
  await page.close();
});
