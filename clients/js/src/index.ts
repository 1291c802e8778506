// @weir/client: one object per node (`new WeirClient({ baseUrl })`) with the windowed API, the
// AG-UI state stream and the write API; the pieces are exported too.

import { Connection, type ConnectionOptions } from "./connection.js";
import { errorFrom } from "./errors.js";
import type { JsonValue } from "./json_patch.js";
import { subscribeState, type SubscribeStateOptions } from "./state.js";
import {
  query,
  subscribeWindow,
  type QueryResult,
  type SubscribeWindowOptions,
  type WindowEnd,
  type WindowRequest,
  type WindowState,
} from "./window.js";
import { Writes } from "./writes.js";

export class WeirClient {
  readonly connection: Connection;
  /** The write API. */
  readonly writes: Writes;

  constructor(options: ConnectionOptions) {
    this.connection = new Connection(options);
    this.writes = new Writes(this.connection);
  }

  /** `GET /v1/auth`: who the node takes the caller for. */
  async auth(signal?: AbortSignal): Promise<{ authorized: boolean; accountId: string }> {
    const res = await this.connection.request("GET", "/v1/auth", { signal });
    if (!res.ok) throw await errorFrom(res);
    return (await res.json()) as { authorized: boolean; accountId: string };
  }

  /** A window once (`POST …/query`). */
  query(space: string, request: WindowRequest, signal?: AbortSignal): Promise<QueryResult> {
    return query(this.connection, space, request, signal);
  }

  /** A live window (`POST …/query/subscribe`) with the recovery loop; see subscribeWindow. */
  subscribeWindow(space: string, request: WindowRequest, onWindow: (w: WindowState) => void, options?: SubscribeWindowOptions): Promise<WindowEnd> {
    return subscribeWindow(this.connection, space, request, onWindow, options);
  }

  /** An object's property document, live (the AG-UI state stream). */
  subscribeState(space: string, objectId: string, onState: (state: JsonValue) => void, options?: SubscribeStateOptions): Promise<void> {
    return subscribeState(this.connection, space, objectId, onState, options);
  }
}

export { Connection, type ConnectionOptions } from "./connection.js";
export { WeirError } from "./errors.js";
export { applyPatch, jsonEqual, JsonPatchError, type JsonValue, type PatchOperation } from "./json_patch.js";
export { compareJson, recordOrder, valueAt } from "./order.js";
export { readSse, type SseFrame } from "./sse.js";
export { subscribeState, type SubscribeStateOptions } from "./state.js";
export {
  query,
  subscribeWindow,
  type QueryResult,
  type SubscribeWindowOptions,
  type WeirRecord,
  type WindowEnd,
  type WindowRequest,
  type WindowState,
} from "./window.js";
export {
  Writes,
  type BatchBody,
  type CrossUnitOutcome,
  type CrossUnitResult,
  type CrossUnitWrite,
  type UpdateOps,
  type WriteOptions,
  type WriteResult,
} from "./writes.js";
