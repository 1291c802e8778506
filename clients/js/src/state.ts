// AG-UI state streams (docs/protocols.md "AG-UI state stream"): one object's property document
// as STATE_SNAPSHOT then RFC 6902 STATE_DELTA events. Each delta is applied all or nothing; a
// snapshot replaces the state (Weir sends one whenever the client may have lost its baseline);
// a delta that does not apply, a RUN_ERROR or an end of stream starts the stream again for a
// fresh snapshot, with backoff.

import type { Connection } from "./connection.js";
import { WeirError, errorFrom } from "./errors.js";
import { applyPatch, type JsonValue, type PatchOperation } from "./json_patch.js";
import { backoffDelay, pause } from "./retry.js";
import { readSse } from "./sse.js";

export interface SubscribeStateOptions {
  signal?: AbortSignal | undefined;
  minRetryMs?: number;
  maxRetryMs?: number;
  /** A RUN_ERROR the stream ended with (code: auth.expired, server.shutdown, …). */
  onRunError?: (code: string, message: string) => void;
  onRetry?: (error: WeirError, delayMs: number) => void;
}

/**
 * Follows an object's property document: `onState` gets it after every snapshot and every
 * delta (`{}` while the object has none), and `null` when the caller may no longer read it (a
 * RUN_ERROR `auth.expired`, or a 401 on a retry): what it showed is to be cleared, and the loop
 * goes on retrying until the credentials work again. Resolves when aborted; rejects on an error
 * a retry cannot fix (a 4xx other than 401/429).
 */
export async function subscribeState(
  conn: Connection,
  space: string,
  objectId: string,
  onState: (state: JsonValue) => void,
  options: SubscribeStateOptions = {},
): Promise<void> {
  const signal = options.signal;
  const minMs = options.minRetryMs ?? 500;
  const maxMs = options.maxRetryMs ?? 30000;
  let failures = 0;
  let shown = false;  // onState has a document that a lost authorization must clear
  const deliver = (state: JsonValue) => {
    shown = state !== null;
    try {
      onState(state);
    } catch (e) {
      throw { callback: e };
    }
  };
  while (!signal?.aborted) {
    // One controller per attempt, linked to the caller's signal (see window.ts).
    const attempt = new AbortController();
    const stop = () => attempt.abort(signal?.reason);
    signal?.addEventListener("abort", stop, { once: true });
    try {
      const res = await conn.request("GET", conn.spacePath(space, "objects", objectId, "state"), {
        headers: { Accept: "text/event-stream" },
        signal: attempt.signal,
      });
      if (!res.ok) throw await errorFrom(res);
      if (!res.body) throw new WeirError("network", "the state stream's answer has no body", res.status);
      let state: JsonValue | undefined;
      for await (const frame of readSse(res.body, attempt.signal)) {
        const ev = JSON.parse(frame.data) as { type: string; snapshot?: JsonValue; delta?: PatchOperation[]; code?: string; message?: string };
        if (ev.type === "STATE_SNAPSHOT") {
          state = ev.snapshot ?? {};
          failures = 0;
          deliver(state);
        } else if (ev.type === "STATE_DELTA" && state !== undefined) {
          // All or nothing: a delta that does not apply leaves the state as it was, and the
          // stream starts over for a snapshot.
          state = applyPatch(state, ev.delta ?? []);
          deliver(state);
        } else if (ev.type === "RUN_ERROR") {
          options.onRunError?.(ev.code ?? "", ev.message ?? "");
          if (ev.code === "auth.expired" && shown) deliver(null);
          break;
        }
      }
      throw new WeirError("stream.ended", "the state stream ended; reading it again", 0);
    } catch (e) {
      if (e !== null && typeof e === "object" && "callback" in e) throw (e as { callback: unknown }).callback;
      if (signal?.aborted) return;
      if (e instanceof SyntaxError) throw e;  // not JSON where JSON belongs: not a retry's to fix
      const err = e instanceof WeirError ? e : new WeirError("network", e instanceof Error ? e.message : String(e), 0);
      if (err.status >= 400 && err.status < 500 && err.status !== 401 && err.status !== 429) throw err;
      if (err.status === 401 && shown) {
        shown = false;
        onState(null);  // an error it throws ends the subscription, as from deliver()
      }
      const delay = backoffDelay(failures, minMs, maxMs);
      failures += 1;
      options.onRetry?.(err, delay);
      await pause(delay, signal);
    } finally {
      signal?.removeEventListener("abort", stop);
      attempt.abort();
    }
  }
}
