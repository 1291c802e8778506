// The write API (docs/protocols.md "HTTP write API"): each call resolves with the versionId once
// the write is durable, or rejects with a WeirError carrying the envelope's code. An
// `idempotencyKey` makes a retry safe (applied at most once).

import type { Connection } from "./connection.js";
import { errorFrom } from "./errors.js";
import type { PatchOperation } from "./json_patch.js";

export interface WriteOptions {
  /** Sent as `Idempotency-Key` (1–255 visible ASCII characters). */
  idempotencyKey?: string | undefined;
  signal?: AbortSignal | undefined;
}

export interface WriteResult {
  versionId: string;
  /** Answered from its idempotency key, not applied again. */
  replayed: boolean;
}

/** `$set` / `$unset` / `$inc` with dotted paths. */
export interface UpdateOps {
  $set?: Record<string, unknown>;
  $unset?: Record<string, unknown>;
  $inc?: Record<string, number>;
}

export interface BatchBody {
  /** Records, each with its string `id`. */
  upsert?: (Record<string, unknown> & { id: string })[];
  delete?: string[];
}

export interface CrossUnitWrite extends BatchBody {
  objectId: string;
  dataset: string;
}

export interface CrossUnitOutcome {
  status: number;
  versionId?: string;
  replayed?: boolean;
  error?: { code: string; message: string; details?: Record<string, unknown> };
}

export interface CrossUnitResult {
  writes: CrossUnitOutcome[];
  failed: number;
}

async function send(conn: Connection, method: string, path: string, body: unknown, options: WriteOptions, contentType?: string): Promise<Response> {
  const headers: Record<string, string> = {};
  if (options.idempotencyKey !== undefined) headers["Idempotency-Key"] = options.idempotencyKey;
  if (contentType) headers["Content-Type"] = contentType;
  const res = await conn.request(method, path, { body, headers, signal: options.signal });
  if (!res.ok) throw await errorFrom(res);
  return res;
}

async function versioned(res: Response): Promise<WriteResult> {
  const body = (await res.json()) as { versionId: string };
  return { versionId: body.versionId, replayed: res.headers.get("Idempotency-Replayed") === "true" };
}

export class Writes {
  constructor(private readonly conn: Connection) {}

  private record(space: string, objectId: string, dataset: string, id: string): string {
    return this.conn.spacePath(space, "objects", objectId, "datasets", dataset, "records", id);
  }

  /** Upserts a whole record. */
  async put(space: string, objectId: string, dataset: string, id: string, record: Record<string, unknown>, options: WriteOptions = {}): Promise<WriteResult> {
    return versioned(await send(this.conn, "PUT", this.record(space, objectId, dataset, id), record, options));
  }

  /** `$set` / `$unset` / `$inc` on an existing record, atomically. */
  async update(space: string, objectId: string, dataset: string, id: string, ops: UpdateOps, options: WriteOptions = {}): Promise<WriteResult> {
    return versioned(await send(this.conn, "PATCH", this.record(space, objectId, dataset, id), ops, options));
  }

  /** An RFC 6902 JSON Patch on an existing record, all or nothing. */
  async patch(space: string, objectId: string, dataset: string, id: string, patch: readonly PatchOperation[], options: WriteOptions = {}): Promise<WriteResult> {
    return versioned(await send(this.conn, "PATCH", this.record(space, objectId, dataset, id), patch, options, "application/json-patch+json"));
  }

  async delete(space: string, objectId: string, dataset: string, id: string, options: WriteOptions = {}): Promise<WriteResult> {
    return versioned(await send(this.conn, "DELETE", this.record(space, objectId, dataset, id), undefined, options));
  }

  /** Upserts and deletes on one dataset, atomically, with one versionId. */
  async batch(space: string, objectId: string, dataset: string, body: BatchBody, options: WriteOptions = {}): Promise<WriteResult> {
    const path = this.conn.spacePath(space, "objects", objectId, "datasets", dataset, "records");
    return versioned(await send(this.conn, "POST", path, body, options));
  }

  /**
   * A batch per dataset, of one object or many, in one request (`POST …/batch`). Each write is
   * atomic on its dataset; the outcome of each is in `writes`, in order (`failed` counts the
   * refused). A bad write rejects the whole request with nothing applied.
   */
  async crossUnitBatch(space: string, writes: CrossUnitWrite[], options: WriteOptions = {}): Promise<CrossUnitResult> {
    const res = await send(this.conn, "POST", this.conn.spacePath(space, "batch"), { writes }, options);
    return (await res.json()) as CrossUnitResult;
  }

  /** Upserts an object's property document. */
  async putObject(space: string, objectId: string, document: Record<string, unknown>, options: WriteOptions = {}): Promise<WriteResult> {
    return versioned(await send(this.conn, "PUT", this.conn.spacePath(space, "objects", objectId), document, options));
  }

  /** An RFC 6902 JSON Patch on an object's property document. */
  async patchObject(space: string, objectId: string, patch: readonly PatchOperation[], options: WriteOptions = {}): Promise<WriteResult> {
    return versioned(await send(this.conn, "PATCH", this.conn.spacePath(space, "objects", objectId), patch, options, "application/json-patch+json"));
  }

  /** Deletes every record of the object and its property document. */
  async deleteObject(space: string, objectId: string, options: WriteOptions = {}): Promise<WriteResult> {
    return versioned(await send(this.conn, "DELETE", this.conn.spacePath(space, "objects", objectId), undefined, options));
  }
}
