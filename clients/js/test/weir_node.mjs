// A real Weir node for the package's tests: `weir serve` from the build tree (WEIR_BIN, else
// ../../build/apps/weir) on free loopback ports with a fresh data directory, stopped by stop().
import { spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const weirBin = process.env.WEIR_BIN ?? resolve(here, "../../../build/apps/weir");

export function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
    s.on("error", rej);
  });
}

export class WeirNode {
  /** `args`: more `weir serve` arguments (e.g. `["--demo"]`). */
  static async start({ yaml = "", dir, args = [] } = {}) {
    const node = new WeirNode();
    node.args = args;
    node.dir = dir ?? mkdtempSync(join(tmpdir(), "weir-js-"));
    node.port = await freePort();
    node.grpc = await freePort();
    node.yaml = yaml;
    await node.launch();
    return node;
  }

  get baseUrl() {
    return `http://127.0.0.1:${this.port}`;
  }

  async launch() {
    const config = join(this.dir, "weir.yaml");
    writeFileSync(config, this.yaml);
    this.log = "";
    this.proc = spawn(weirBin, ["serve", "--config", config, "--data-dir", join(this.dir, "data"),
      "--http", `127.0.0.1:${this.port}`, "--grpc", `127.0.0.1:${this.grpc}`, ...(this.args ?? [])], { stdio: ["ignore", "ignore", "pipe"] });
    this.proc.stderr.on("data", (d) => { this.log += d; });
    const deadline = Date.now() + 20000;
    while (Date.now() < deadline) {
      try {
        if ((await fetch(`${this.baseUrl}/livez`)).ok) return;
      } catch {}
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`weir did not start: ${this.log}`);
  }

  async stop({ keep = false } = {}) {
    if (this.proc && this.proc.exitCode === null) {
      const exited = new Promise((r) => this.proc.once("exit", r));
      this.proc.kill("SIGTERM");
      await exited;
    }
    if (!keep) rmSync(this.dir, { recursive: true, force: true });
  }

  /** Stops the node and starts it again on the same port and data. */
  async restart() {
    await this.stop({ keep: true });
    await this.launch();
  }
}

/** Waits until `pred()` holds (polled), or fails after `ms`. */
export async function eventually(pred, ms = 10000, what = "condition") {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await pred();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
}

/** An HS256 JSON Web Token over `claims`, signed with `secret` (the node's auth.jwt.secret). */
export function signJwt(secret, claims) {
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const body = `${b64({ alg: "HS256", typ: "JWT" })}.${b64(claims)}`;
  return `${body}.${createHmac("sha256", secret).update(body).digest("base64url")}`;
}
