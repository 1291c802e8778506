// Live windows over the windowed subscribe API (docs/protocols.md "Windowed subscribe", the
// `any` API): a POST whose answer streams `ready`, `snapshot`, `changes` and `closed` over SSE.
// The client keeps the window in the query's sort order and runs the recovery loop the API's
// own documentation gives (seed 002): `GET /v1/auth` before every attempt (not authorized:
// clear and wait; another account: clear and stop), a fresh snapshot after any end, retries
// with backoff and jitter, `closed` reasons reported apart, and an AbortSignal to stop.

import type { Connection } from "./connection.js";
import { WeirError, errorFrom } from "./errors.js";
import { recordOrder } from "./order.js";
import { backoffDelay, pause } from "./retry.js";
import { readSse } from "./sse.js";

export type WeirRecord = Record<string, unknown> & { id: string };

/** The body of a windowed query (the field set is closed; see docs/protocols.md). */
export interface WindowRequest {
  /** One object's dataset: `objectId` and `dataset`. The space's objects: neither. The space-wide dataset: `dataset` only. */
  objectId?: string;
  dataset?: string;
  filter?: Record<string, unknown>;
  sort?: string[];
  limit?: number;
  offset?: number;
  includeTotal?: boolean;
  /** Paths to keep (1/true) or to leave out (0/false). */
  projection?: Record<string, number | boolean>;
  /** Subscribe only. */
  mailboxCapacity?: number;
  driftBudgetPercent?: number;
  /** One-shot query only. */
  includeDeleted?: boolean;
}

/** A one-shot query's answer. */
export interface QueryResult {
  records: WeirRecord[];
  total?: number;
  hasNext?: boolean;
}

/** What onWindow gets after every snapshot and every `changes` frame. */
export interface WindowState {
  /** The window's records, in the query's sort order. */
  records: WeirRecord[];
  /** From the last snapshot (with includeTotal); not moved by later changes. */
  total?: number;
  hasNext?: boolean;
  /** The versionId of the last write applied (empty for an object's deletion). */
  versionId?: string;
  /** True from a snapshot until its stream ends (the records are kept, marked not live, until the next snapshot); false when the window was cleared. */
  live: boolean;
}

export interface SubscribeWindowOptions {
  signal?: AbortSignal | undefined;
  /**
   * "docs" (default): an added or updated record is the `doc` the frame carries. "ops": an
   * updated record held already gets the frame's `$set`/`$unset` ops applied to it (the doc
   * when it carries none), and the server's stamps (`_ver`, an objects row's `modifiedAt`)
   * from the doc.
   */
  apply?: "docs" | "ops";
  /** The account the window belongs to; default: the one `GET /v1/auth` names first. */
  accountId?: string;
  /** First retry delay (default 500 ms), doubled per failure up to maxRetryMs (30 s), with jitter. */
  minRetryMs?: number;
  maxRetryMs?: number;
  /** A `closed` frame's reason (overflow, server_shutdown, deauthorized, object_deleted). */
  onClosed?: (reason: string) => void;
  /** An attempt that failed and will be retried. */
  onRetry?: (error: WeirError, delayMs: number) => void;
}

/** How a subscription ended (the promise `done` resolves with it). */
export type WindowEnd = "aborted" | "account_changed" | "object_deleted";

function endpointPath(conn: Connection, space: string, request: WindowRequest, subscribe: boolean): string {
  const base =
    request.objectId !== undefined
      ? conn.spacePath(space, "query")
      : request.dataset !== undefined
        ? conn.spacePath(space, "datasets", "query")
        : conn.spacePath(space, "objects", "query");
  return subscribe ? `${base}/subscribe` : base;
}

/** `POST …/query`: the window once. */
export async function query(conn: Connection, space: string, request: WindowRequest, signal?: AbortSignal): Promise<QueryResult> {
  const res = await conn.request("POST", endpointPath(conn, space, request, false), { body: request, signal });
  if (!res.ok) throw await errorFrom(res);
  return (await res.json()) as QueryResult;
}

const isIndex = (s: string) => /^(0|[1-9][0-9]*)$/.test(s);

/** Sets an own member (`__proto__` included, as JSON has it) without touching prototypes. */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * The ops of docs/protocols.md "ops" on a record: a `$set` creates missing objects on its way and
 * pads an array with null up to its index; a `$unset` of something missing does nothing (that op
 * only), and of an array element leaves null in its place, as the server does.
 */
function applyOps(target: Record<string, unknown>, ops: readonly { type: string; path: string[]; payload?: unknown }[]): void {
  for (const op of ops) {
    const unset = op.type === "$unset";
    if (op.path.length === 0) {
      for (const [k, v] of Object.entries((op.payload ?? {}) as Record<string, unknown>)) {
        if (unset) {
          if (Object.hasOwn(target, k)) delete target[k];
        } else setOwn(target, k, structuredClone(v));
      }
      continue;
    }
    let at: unknown = target;
    let reached = true;
    for (const seg of op.path.slice(0, -1)) {
      let next: unknown = Array.isArray(at)
        ? isIndex(seg) ? at[Number(seg)] : undefined
        : Object.hasOwn(at as object, seg) ? (at as Record<string, unknown>)[seg] : undefined;
      if (next === null || typeof next !== "object") {
        if (unset) {
          reached = false;
          break;
        }
        next = {};
        if (Array.isArray(at)) {
          while (at.length < Number(seg)) at.push(null);
          at[Number(seg)] = next;
        } else setOwn(at as Record<string, unknown>, seg, next);
      }
      at = next;
    }
    if (!reached) continue;
    const last = op.path[op.path.length - 1]!;
    if (Array.isArray(at) && isIndex(last)) {
      const i = Number(last);
      if (unset) {
        if (i < at.length) at[i] = null;
      } else {
        while (at.length < i) at.push(null);
        at[i] = structuredClone(op.payload);
      }
    } else if (at !== null && typeof at === "object" && !Array.isArray(at)) {
      const obj = at as Record<string, unknown>;
      if (unset) {
        if (Object.hasOwn(obj, last)) delete obj[last];
      } else setOwn(obj, last, structuredClone(op.payload));
    }
  }
}

/** An error thrown by the caller's own callback: it ends the subscription, it is not retried. */
class CallbackError extends Error {
  constructor(readonly error: unknown) {
    super("the callback threw");
  }
}

/**
 * Follows a window: `onWindow` gets the records in order after every snapshot and every change,
 * the same records marked not live when a stream ends (until the next snapshot), and an empty,
 * not-live window when the view must be cleared. The returned promise resolves when the
 * subscription ends for good (aborted, another account signed in, the object deleted) and
 * rejects on an error a retry cannot fix (a 4xx other than 401/429: the request is wrong; an
 * answer that is not JSON; an error thrown by `onWindow`, rethrown as it was).
 */
export async function subscribeWindow(
  conn: Connection,
  space: string,
  request: WindowRequest,
  onWindow: (window: WindowState) => void,
  options: SubscribeWindowOptions = {},
): Promise<WindowEnd> {
  try {
    return await follow(conn, space, request, onWindow, options);
  } catch (e) {
    throw e instanceof CallbackError ? e.error : e;
  }
}

async function follow(
  conn: Connection,
  space: string,
  request: WindowRequest,
  onWindow: (window: WindowState) => void,
  options: SubscribeWindowOptions,
): Promise<WindowEnd> {
  const signal = options.signal;
  const order = recordOrder(request.sort ?? []);
  let held = new Map<string, WeirRecord>();
  let meta: { total?: number; hasNext?: boolean; versionId?: string } = {};
  let live = false;
  let expected = options.accountId;
  let failures = 0;
  const minMs = options.minRetryMs ?? 500;
  const maxMs = options.maxRetryMs ?? 30000;

  const emit = (nowLive: boolean) => {
    live = nowLive;
    const records = [...held.values()].sort(order);
    try {
      onWindow({ records, live, ...meta });
    } catch (e) {
      throw new CallbackError(e);
    }
  };
  const clear = () => {
    held = new Map();
    meta = {};
    emit(false);
  };

  while (!signal?.aborted) {
    let ended: WindowEnd | undefined;
    // One controller per attempt, linked to the caller's signal: what fetch and the stream hang
    // on it goes with the attempt instead of piling up on the caller's signal.
    const attempt = new AbortController();
    const stop = () => attempt.abort(signal?.reason);
    signal?.addEventListener("abort", stop, { once: true });
    try {
      const authRes = await conn.request("GET", "/v1/auth", { signal: attempt.signal });
      if (!authRes.ok) throw await errorFrom(authRes);
      const auth = (await authRes.json()) as { authorized: boolean; accountId: string };
      if (!auth.authorized) {
        throw new WeirError("auth.required", "not signed in: waiting for the account to be authorized", 401);
      }
      if (expected === undefined) expected = auth.accountId;
      else if (auth.accountId !== expected) {
        clear();
        return "account_changed";
      }
      const res = await conn.request("POST", endpointPath(conn, space, request, true), {
        body: request,
        headers: { Accept: "text/event-stream" },
        signal: attempt.signal,
      });
      if (!res.ok) throw await errorFrom(res);
      if (!res.body) throw new WeirError("network", "the subscription's answer has no body", res.status);
      for await (const frame of readSse(res.body, attempt.signal)) {
        const data = JSON.parse(frame.data) as unknown;
        if (frame.event === "snapshot") {
          const snap = data as QueryResult;
          held = new Map(snap.records.map((r) => [r.id, r]));
          meta = {};
          if (snap.total !== undefined) meta.total = snap.total;
          if (snap.hasNext !== undefined) meta.hasNext = snap.hasNext;
          failures = 0;
          emit(true);
        } else if (frame.event === "changes") {
          for (const ev of data as { versionId: string; added?: { id: string; doc: WeirRecord }[]; updated?: { id: string; doc: WeirRecord; ops?: { type: string; path: string[]; payload?: unknown }[] }[]; removed?: { id: string }[] }[]) {
            for (const r of ev.added ?? []) held.set(r.id, r.doc);
            for (const r of ev.updated ?? []) {
              const mine = held.get(r.id);
              if (options.apply === "ops" && mine && r.ops && r.ops.length) {
                const next = structuredClone(mine);
                applyOps(next, r.ops);
                // The server's own stamps are not ops: they come with the doc, placed last as
                // the server places `_ver`.
                for (const stamp of ["modifiedAt", "_ver"]) {
                  delete next[stamp];
                  if (Object.hasOwn(r.doc, stamp)) next[stamp] = structuredClone(r.doc[stamp]);
                }
                held.set(r.id, next);
              } else held.set(r.id, r.doc);
            }
            for (const r of ev.removed ?? []) held.delete(r.id);
            meta.versionId = ev.versionId;
          }
          emit(true);
        } else if (frame.event === "closed") {
          const reason = (data as { reason: string }).reason;
          options.onClosed?.(reason);
          if (reason === "deauthorized") clear();
          if (reason === "object_deleted") {
            clear();
            ended = "object_deleted";
          }
          break;
        }
      }
      if (ended) return ended;
      // A stream that ended, with `closed` or without: a new POST and its fresh snapshot.
      throw new WeirError("stream.ended", "the stream ended; subscribing again", 0);
    } catch (e) {
      if (e instanceof CallbackError) throw e;
      if (signal?.aborted) return "aborted";
      if (e instanceof SyntaxError) throw e;  // not JSON where JSON belongs: not a retry's to fix
      const err = e instanceof WeirError ? e : new WeirError("network", e instanceof Error ? e.message : String(e), 0);
      if (err.code === "object.deleted") {
        clear();  // deleted while this client was away: as the `closed` frame would have said
        return "object_deleted";
      }
      if (err.status === 401) clear();
      else if (live) emit(false);
      if (err.status >= 400 && err.status < 500 && err.status !== 401 && err.status !== 429) throw err;
      const delay = backoffDelay(failures, minMs, maxMs);
      failures += 1;
      options.onRetry?.(err, delay);
      if (!(await pause(delay, signal))) return "aborted";
    } finally {
      signal?.removeEventListener("abort", stop);
      attempt.abort();
    }
  }
  return "aborted";
}
