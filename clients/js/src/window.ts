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
  projection?: Record<string, unknown>;
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
  /** True between a snapshot and the stream's end; false when the window was cleared. */
  live: boolean;
}

export interface SubscribeWindowOptions {
  signal?: AbortSignal;
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

function applyOps(target: Record<string, unknown>, ops: readonly { type: string; path: string[]; payload?: unknown }[]): void {
  for (const op of ops) {
    if (op.path.length === 0) {
      for (const [k, v] of Object.entries((op.payload ?? {}) as Record<string, unknown>)) {
        if (op.type === "$unset") delete target[k];
        else target[k] = structuredClone(v);
      }
      continue;
    }
    let at: Record<string, unknown> = target;
    for (const seg of op.path.slice(0, -1)) {
      const next = at[seg];
      if (next === null || typeof next !== "object") {
        if (op.type === "$unset") return;
        at[seg] = {};
      }
      at = at[seg] as Record<string, unknown>;
    }
    const last = op.path[op.path.length - 1]!;
    if (op.type === "$unset") delete at[last];
    else at[last] = structuredClone(op.payload);
  }
}

/**
 * Follows a window: `onWindow` gets the records in order after every snapshot and every change,
 * and an empty, not-live window when the view must be cleared. The returned promise resolves
 * when the subscription ends for good (aborted, another account signed in, the object deleted)
 * and rejects on an error a retry cannot fix (a 4xx other than 401/429: the request is wrong).
 */
export async function subscribeWindow(
  conn: Connection,
  space: string,
  request: WindowRequest,
  onWindow: (window: WindowState) => void,
  options: SubscribeWindowOptions = {},
): Promise<WindowEnd> {
  const signal = options.signal;
  const order = recordOrder(request.sort ?? []);
  let held = new Map<string, WeirRecord>();
  let meta: { total?: number; hasNext?: boolean; versionId?: string } = {};
  let expected = options.accountId;
  let failures = 0;
  const minMs = options.minRetryMs ?? 500;
  const maxMs = options.maxRetryMs ?? 30000;

  const emit = (live: boolean) => {
    const records = [...held.values()].sort(order);
    onWindow({ records, live, ...meta });
  };
  const clear = () => {
    held = new Map();
    meta = {};
    emit(false);
  };

  while (!signal?.aborted) {
    let ended: WindowEnd | undefined;
    try {
      const authRes = await conn.request("GET", "/v1/auth", { signal });
      if (!authRes.ok) throw await errorFrom(authRes);
      const auth = (await authRes.json()) as { authorized: boolean; accountId: string };
      if (!auth.authorized) {
        clear();
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
        signal,
      });
      if (!res.ok) throw await errorFrom(res);
      if (!res.body) throw new WeirError("network", "the subscription's answer has no body", res.status);
      for await (const frame of readSse(res.body, signal)) {
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
                // The server's own stamps are not ops: they come with the doc.
                for (const stamp of ["_ver", "modifiedAt"]) {
                  if (stamp in r.doc) next[stamp] = structuredClone(r.doc[stamp]);
                  else delete next[stamp];
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
      if (signal?.aborted) return "aborted";
      const err =
        e instanceof WeirError
          ? e
          : new WeirError("network", e instanceof Error ? e.message : String(e), 0);
      if (err.status === 401) clear();
      if (err.status >= 400 && err.status < 500 && err.status !== 401 && err.status !== 429) throw err;
      // The first retry after a stream that was live comes soon; failures in a row back off.
      const delay = backoffDelay(failures, minMs, maxMs);
      failures += 1;
      options.onRetry?.(err, delay);
      if (!(await pause(delay, signal))) return "aborted";
    }
  }
  return "aborted";
}
