// Where Weir is and how requests are made: the base URL, the caller's credentials (a bearer token
// from a provider called before every request, or the browser's cookies), and the fetch used.

import { WeirError } from "./errors.js";

export interface ConnectionOptions {
  /** The node's base URL, e.g. `http://localhost:8080` (no trailing `/v1`). */
  baseUrl: string;
  /**
   * A bearer token for `Authorization: Bearer …`, asked for before every request (so a
   * refreshed token is used on the next attempt). Return null/undefined to send none.
   */
  token?: () => string | null | undefined | Promise<string | null | undefined>;
  /** Send the browser's cookies (fetch `credentials: "include"`). Default: same-origin only. */
  cookies?: boolean;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

export class Connection {
  readonly baseUrl: string;
  private readonly options: ConnectionOptions;

  constructor(options: ConnectionOptions) {
    this.options = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
  }

  /**
   * `/v1/spaces/{space}` and the encoded segments after it. Throws a WeirError for `.` and `..`,
   * which fetch would resolve as path steps (no such id can be reached over HTTP).
   */
  spacePath(space: string, ...segments: string[]): string {
    for (const s of [space, ...segments]) {
      if (s === "." || s === "..") {
        throw new WeirError("request.invalid_field", `"${s}" cannot be sent as an id in a URL path`, 0, { value: s });
      }
    }
    return ["/v1/spaces", space, ...segments].map((s, i) => (i === 0 ? s : encodeURIComponent(s))).join("/");
  }

  /** One request; a failure without an answer rejects with WeirError `network` (status 0). */
  async request(method: string, path: string, init: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal | undefined } = {}): Promise<Response> {
    const headers: Record<string, string> = { ...this.options.headers, ...init.headers };
    const token = this.options.token ? await this.options.token() : undefined;
    init.signal?.throwIfAborted();  // a token provider that took its time does not outlive an abort
    if (token) {
      headers["Authorization"] = `Bearer ${token}`;
    }
    let body: string | undefined;
    if (init.body !== undefined) {
      body = typeof init.body === "string" ? init.body : JSON.stringify(init.body);
      headers["Content-Type"] ??= "application/json";
    }
    const f = this.options.fetch ?? fetch;
    const req: RequestInit = { method, headers, credentials: this.options.cookies ? "include" : "same-origin" };
    if (body !== undefined) req.body = body;
    if (init.signal) req.signal = init.signal;
    try {
      return await f(this.baseUrl + path, req);
    } catch (e) {
      if (init.signal?.aborted) throw e;
      // No answer: a WeirError all the same, with status 0 (retryable).
      throw new WeirError("network", e instanceof Error ? e.message : String(e), 0);
    }
  }
}
