// A development server for the example page: serves live-window.html at /, the package's built
// files (../dist) under /client/, and passes every other request through to a Weir node, so
// that the page and the API share one origin (Weir sends no CORS headers: a page on another
// origin cannot read its answers). Streams are passed through as they arrive. In production the
// same is one nginx (or any reverse proxy) location for the page and one for Weir.
//
//   node examples/serve.mjs [--weir http://127.0.0.1:8080] [--port 8000] [--host 127.0.0.1]
import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { dirname, extname, join, normalize, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
const dist = resolve(here, "../dist");
const { values: args } = parseArgs({
  options: {
    weir: { type: "string", default: "http://127.0.0.1:8080" },
    port: { type: "string", default: "8000" },
    host: { type: "string", default: "127.0.0.1" },
  },
});
const upstream = new URL(args.weir);
const types = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".map": "application/json" };

function sendFile(res, file) {
  res.writeHead(200, { "Content-Type": types[extname(file)] ?? "application/octet-stream", "Cache-Control": "no-cache" });
  createReadStream(file).pipe(res);
}

const server = createServer((req, res) => {
  const path = new URL(req.url, "http://x").pathname;
  if (req.method === "GET" && (path === "/" || path === "/live-window.html")) {
    return sendFile(res, join(here, "live-window.html"));
  }
  if (req.method === "GET" && path.startsWith("/client/")) {
    const file = normalize(join(dist, path.slice("/client/".length)));
    if (!file.startsWith(dist + "/") || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end(existsSync(dist) ? "not found" : "not built: run `npm run build` first");
      return;
    }
    return sendFile(res, file);
  }
  // Everything else is Weir's, with the browser's Host and Origin as they came: Weir trusts a
  // browser Origin equal to the request's own host (as behind nginx's `proxy_set_header Host
  // $host`), so the page's calls are same-origin to it too.
  const headers = { ...req.headers };
  const out = httpRequest({ host: upstream.hostname, port: upstream.port || 80, method: req.method, path: req.url, headers }, (up) => {
    res.writeHead(up.statusCode ?? 502, up.headers);
    up.pipe(res);
  });
  out.on("error", (e) => {
    if (!res.headersSent) res.writeHead(502, { "Content-Type": "text/plain" });
    res.end(`weir unreachable: ${e.message}`);
  });
  res.on("close", () => out.destroy());
  req.pipe(out);
});

server.listen(Number(args.port), args.host, () => {
  console.log(`example page on http://${args.host}:${server.address().port}/ (Weir at ${upstream.origin})`);
});
