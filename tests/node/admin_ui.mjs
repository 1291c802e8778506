// The admin page in a real browser, for tests/integration/admin_ui_test.cpp: Debian's chromium,
// headless, driven by puppeteer-core. It opens the page, waits until it shows every member,
// reports the cluster's total of answered writes as the page displays it, then waits until that
// figure moves (the test writes meanwhile), waits until both charts draw a line of four samples
// or more, and saves a screenshot.
// Prints one JSON line per step: {"step":"ready","members":N,"writes":W}, then
// {"step":"moved","from":W,"to":W2}, then {"step":"done","screenshot":PATH}. Anything else goes
// to stderr with exit status 1.
// Usage: node admin_ui.mjs <page URL> <screenshot PNG path> <chromium path> [members=3]
import puppeteer from "puppeteer-core";

const [url, screenshot, chromium, membersArg] = process.argv.slice(2);
const members = Number(membersArg ?? 3);
if (!url || !screenshot || !chromium) {
  console.error("usage: node admin_ui.mjs <url> <png> <chromium> [members]");
  process.exit(2);
}

const say = (o) => console.log(JSON.stringify(o));
const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  // --no-sandbox: the tests may run as root, where Chromium's sandbox refuses to start.
  // --disable-dev-shm-usage: containers often give /dev/shm 64 MB, too little for a renderer.
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  defaultViewport: { width: 1280, height: 820, deviceScaleFactor: 1 },
});
try {
  const page = await browser.newPage();
  const problems = [];
  // The page must run clean: no script error, no resource the CSP blocks.
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("response", (r) => {
    if (r.status() >= 400) problems.push(`${r.status()} for ${r.url()}`);
  });
  await page.goto(url, { waitUntil: "load" });

  // Every member listed and the writes figure shown.
  await page.waitForFunction(
    (n) =>
      document.querySelectorAll("#members tbody tr").length === n &&
      document.getElementById("total-writes").dataset.value !== "",
    { timeout: 20000 },
    members,
  );
  const writes = async () =>
    Number(await page.$eval("#total-writes", (e) => e.dataset.value));
  const shown = await page.$$eval("#members tbody tr", (rows) => rows.length);
  const before = await writes();
  say({ step: "ready", members: shown, writes: before });

  await page.waitForFunction(
    (b) => Number(document.getElementById("total-writes").dataset.value) > b,
    { timeout: 30000 },
    before,
  );
  say({ step: "moved", from: before, to: await writes() });

  // A few more documents (one a second), so each chart shows a line rather than a point.
  await page.waitForFunction(
    () =>
      ["writes-chart", "frames-chart"].every(
        (id) =>
          (document.querySelector(`#${id} polyline`)?.getAttribute("points") ?? "").split(" ")
            .length >= 4,
      ),
    // Within the 30 s the C++ side waits for "done", so that a timeout here is the one reported.
    { timeout: 20000 },
  );
  if (problems.length) {
    throw new Error(problems.join("\n"));
  }
  await page.screenshot({ path: screenshot, fullPage: true });
  say({ step: "done", screenshot });
} catch (e) {
  console.error(e.stack ?? String(e));
  process.exitCode = 1;
} finally {
  await browser.close();
}
