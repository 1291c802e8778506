// The contract between docs/openapi.yaml and a real node: every documented operation is sent
// to a `weir serve` started here, and every answer is checked against the document — its status
// must be one the operation lists, a JSON body must satisfy that response's schema (Ajv, JSON
// Schema 2020-12, the dialect of OpenAPI 3.1), and the events of a stream must satisfy the
// schemas its `x-weir-events` names. An operation the document lists that no exchange below
// reaches fails the run, so neither side can drift without this test noticing.
//
// Run by scripts/dev test (WEIR_BIN: the weir binary; default ../../build/apps/weir).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import YAML from "yaml";

import { WeirNode } from "../../clients/js/test/weir_node.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const specPath = resolve(here, "../../docs/openapi.yaml");
const spec = YAML.parse(readFileSync(specPath, "utf8"));

const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
addFormats(ajv);
ajv.addSchema(spec, "openapi");
const compiled = new Map();

/** A JSON pointer into the document, for Ajv's $ref. */
function pointer(...parts) {
  return "openapi#/" + parts.map((p) => String(p).replaceAll("~", "~0").replaceAll("/", "~1")).join("/");
}

function validator(ref) {
  if (!compiled.has(ref)) compiled.set(ref, ajv.compile({ $ref: ref }));
  return compiled.get(ref);
}

function check(ref, value, what) {
  const v = validator(ref);
  if (!v(value)) {
    assert.fail(`${what} does not match ${ref}:\n${JSON.stringify(v.errors, null, 2)}\n` +
      `value: ${JSON.stringify(value).slice(0, 2000)}`);
  }
}

/** The documented operation for a concrete path: [template, method object]. */
function operationFor(method, path) {
  const bare = path.split("?")[0];
  for (const [template, item] of Object.entries(spec.paths)) {
    // A named query's route is any path the configuration gives it, slashes included.
    const re = new RegExp("^" + template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, (m) => (m.includes("queryRoute") ? ".+" : "[^/]+")) + "$");
    if (re.test(bare) && item[method.toLowerCase()]) return [template, item[method.toLowerCase()]];
  }
  return [undefined, undefined];
}

const exercised = new Set();

/**
 * fetch, sent once more when the pooled connection it went out on was found closed by the server
 * (undici's UND_ERR_SOCKET, "other side closed"), as HTTP clients retry a request on a reused
 * connection that closed under it. A windowed stream's head says `Connection: keep-alive` (its
 * spec's head) and its server closes the connection after the stream's last chunk: undici may
 * have pooled that socket for the next request meanwhile. A node that is down still fails (the
 * retry's connection is refused).
 */
async function fetchOnFreshSocketIfClosed(url, init) {
  try {
    return await fetch(url, init);
  } catch (e) {
    if (e?.cause?.code !== "UND_ERR_SOCKET") throw e;
    return await fetch(url, init);
  }
}

/**
 * Sends one request and checks the answer against the document. `stream`: read that many
 * server-sent events (validated against x-weir-events) and then abort. `trigger`: called once
 * the stream's first event arrived (its subscription is open, so what it does reaches the
 * stream as a change, not in its snapshot). Returns
 * { status, headers, body (parsed JSON or text), events }.
 */
async function exchange(node, method, path, { body, headers = {}, stream = 0, expect, streamMs = 3000, trigger } = {}) {
  const [template, op] = operationFor(method, path);
  assert.ok(op, `${method} ${path} is not in docs/openapi.yaml`);
  const ac = new AbortController();
  const init = { method, headers: { ...headers }, signal: ac.signal };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    if (!Object.keys(init.headers).some((h) => h.toLowerCase() === "content-type")) init.headers["Content-Type"] = "application/json";
  }
  const res = await fetchOnFreshSocketIfClosed(node.baseUrl + path, init);
  const what = `${method} ${path} → ${res.status}`;
  if (expect !== undefined) assert.equal(res.status, expect, what);
  const responses = op.responses ?? {};
  const key = responses[String(res.status)] ? String(res.status) : responses[`${String(res.status)[0]}XX`] ? `${String(res.status)[0]}XX` : "default";
  assert.ok(responses[key], `${what}: status not documented for ${method.toUpperCase()} ${template}`);
  exercised.add(`${method.toUpperCase()} ${template}`);
  let response = responses[key];
  let responseRef = pointer("paths", template, method.toLowerCase(), "responses", key);
  if (response.$ref) {
    responseRef = "openapi#" + response.$ref.slice(1);
    response = response.$ref.slice(2).split("/").reduce((o, k) => o[k.replaceAll("~1", "/").replaceAll("~0", "~")], spec);
  }
  const type = (res.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  const out = { status: res.status, headers: res.headers, events: [] };
  if (method === "HEAD" || res.status === 204 || res.status === 304) {
    out.body = await res.text();
    assert.equal(out.body, "", `${what}: no body`);
    return out;
  }
  const content = response.content ?? {};
  if (type === "text/event-stream") {
    assert.ok(content["text/event-stream"], `${what}: text/event-stream not documented`);
    out.events = await readEvents(res, stream, streamMs, ac, trigger);
    assert.ok(out.events.length >= stream, `${what}: ${out.events.length} of ${stream} events within ${streamMs} ms`);
    const events = content["text/event-stream"]["x-weir-events"] ?? response["x-weir-events"] ?? {};
    for (const e of out.events) {
      const name = e.event || "message";
      const schema = events[name];
      assert.ok(schema, `${what}: event "${name}" not documented (x-weir-events)`);
      check(schema.$ref ? "openapi#" + schema.$ref.slice(1) : pointer(...responseRef.slice(9).split("/").map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~")), "content", "text/event-stream", "x-weir-events", name),
        e.data === "" ? null : JSON.parse(e.data), `${what} event ${name}`);
    }
    ac.abort();
    return out;
  }
  const text = await res.text();
  if (text === "") {
    // An empty body is what the response says it may be: no content, or marked empty.
    out.body = "";
    assert.ok(Object.keys(content).length === 0 || response["x-weir-empty-body"] === true, `${what}: an empty body, which the document does not allow`);
    return out;
  }
  if (type === "application/json") {
    assert.ok(content["application/json"], `${what}: application/json not documented (has ${Object.keys(content)})`);
    out.body = JSON.parse(text);
    const schemaRef = responseRef + "/content/application~1json/schema";
    if (content["application/json"].schema) check(schemaRef, out.body, what);
    return out;
  }
  assert.ok(content[type] || content["*/*"], `${what}: ${type} not documented (has ${Object.keys(content)})`);
  out.body = text;
  return out;
}

/**
 * Reads up to `n` SSE events (or until `ms` pass or the stream ends); calls `trigger` (and
 * waits for it) after the first.
 */
async function readEvents(res, n, ms, ac, trigger) {
  const events = [];
  if (n === 0) {
    ac.abort();
    return events;
  }
  const timer = setTimeout(() => ac.abort(), ms);
  const decoder = new TextDecoder();
  let buf = "";
  try {
    for await (const chunk of res.body) {
      buf += decoder.decode(chunk, { stream: true });
      let cut;
      while ((cut = buf.search(/\r?\n\r?\n/)) >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut).replace(/^\r?\n\r?\n/, "");
        const e = { event: "", data: "" };
        const data = [];
        for (const line of block.split(/\r?\n/)) {
          if (line.startsWith(":")) continue;
          const i = line.indexOf(":");
          const field = i < 0 ? line : line.slice(0, i);
          const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
          if (field === "event") e.event = value;
          else if (field === "data") data.push(value);
        }
        if (data.length === 0 && e.event === "") continue;
        e.data = data.join("\n");
        events.push(e);
        if (events.length >= n) return events;
        if (events.length === 1 && trigger) await trigger();
      }
    }
  } catch (err) {
    if (err.name !== "AbortError") throw err;
  } finally {
    clearTimeout(timer);
  }
  return events;
}

export { exchange, exercised, spec, check, pointer };
