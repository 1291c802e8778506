// @weir/client's types against docs/openapi.yaml (types generated into openapi.gen.d.ts by
// openapi-typescript; scripts/dev test generates them and runs `tsc -p test/types`). What the
// client sends must be a request the document accepts; what the document says the node answers
// must be what the client reads. A drift on either side fails the compile here.
import type { components } from "./openapi.gen.js";
import type {
  BatchBody,
  CrossUnitResult,
  CrossUnitWrite,
  PatchOperation,
  QueryResult,
  UpdateOps,
  WindowRequest,
  WriteResult,
} from "../../src/index.js";

type S = components["schemas"];
/** true when every From is a To. */
type Assignable<From, To> = [From] extends [To] ? true : false;
function holds<T extends true>(): T | void {}

// Requests: the three windowed scopes (the client's one request type covers them all, told
// apart by objectId and dataset).
type ObjectScope = WindowRequest & { objectId: string; dataset: string };
type ObjectsScope = Omit<WindowRequest, "objectId" | "dataset">;
type DatasetScope = Omit<WindowRequest, "objectId"> & { dataset: string };
holds<Assignable<ObjectScope, S["ObjectWindowQuery"]>>();
holds<Assignable<ObjectScope, S["ObjectWindowSubscribe"]>>();
holds<Assignable<ObjectsScope, S["ObjectsWindowQuery"]>>();
holds<Assignable<ObjectsScope, S["ObjectsWindowSubscribe"]>>();
holds<Assignable<DatasetScope, S["DatasetWindowQuery"]>>();
holds<Assignable<DatasetScope, S["DatasetWindowSubscribe"]>>();
// Writes.
holds<Assignable<BatchBody, S["RecordBatch"]>>();
holds<Assignable<CrossUnitWrite, S["CrossUnitBatchWrite"]>>();
holds<Assignable<{ writes: CrossUnitWrite[] }, S["CrossUnitBatch"]>>();
holds<Assignable<UpdateOps, S["UpdateOperators"]>>();
holds<Assignable<PatchOperation, S["JsonPatchRequestOperation"]>>();

// Answers: what the document says the node sends, read as the client types it.
holds<Assignable<S["WindowSnapshot"], QueryResult>>();
holds<Assignable<S["WriteResult"], Omit<WriteResult, "replayed">>>();
holds<Assignable<S["CrossUnitBatchResult"], CrossUnitResult>>();
holds<Assignable<S["AuthStatus"], { authorized: boolean; accountId: string }>>();
