// RFC 6902 JSON Patch, applied all or nothing: what an AG-UI STATE_DELTA carries. Written here
// rather than taken from npm so the package has no runtime dependency (it is small, and the
// state stream only needs apply): RFC 6901 pointers, the six operations, `test` by deep
// equality, `-` to append, and a failure that leaves the document as it was.

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export interface PatchOperation {
  op: "add" | "remove" | "replace" | "move" | "copy" | "test";
  path: string;
  value?: JsonValue;
  from?: string;
}

export class JsonPatchError extends Error {
  constructor(message: string, readonly index: number) {
    super(message);
    this.name = "JsonPatchError";
  }
}

function tokens(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw new Error(`not a JSON Pointer: "${pointer}"`);
  return pointer
    .slice(1)
    .split("/")
    .map((t) => {
      if (/~(?![01])/.test(t)) throw new Error(`"${t}": "~" must be followed by 0 or 1`);
      return t.replace(/~1/g, "/").replace(/~0/g, "~");
    });
}

function isObject(v: unknown): v is { [key: string]: JsonValue } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function arrayIndex(token: string, length: number, forAdd: boolean): number {
  if (forAdd && token === "-") return length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new Error(`"${token}" is not an array index`);
  const i = Number(token);
  if (i > length || (!forAdd && i === length)) throw new Error(`index ${i} is out of bounds`);
  return i;
}

/** Deep equality as RFC 6902's `test` defines it (objects regardless of member order). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/** Sets an own member (`__proto__` included, as JSON has it) without touching prototypes. */
function setMember(obj: { [key: string]: JsonValue }, key: string, value: JsonValue): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

function parentOf(doc: JsonValue, path: string[]): JsonValue {
  let at: JsonValue = doc;
  for (const t of path.slice(0, -1)) {
    if (Array.isArray(at)) at = at[arrayIndex(t, at.length, false)] as JsonValue;
    else if (isObject(at) && Object.prototype.hasOwnProperty.call(at, t)) at = at[t] as JsonValue;
    else throw new Error(`path not found at "${t}"`);
  }
  return at;
}

function get(doc: JsonValue, pointer: string): JsonValue {
  const path = tokens(pointer);
  if (path.length === 0) return doc;
  const parent = parentOf(doc, path);
  const last = path[path.length - 1]!;
  if (Array.isArray(parent)) return parent[arrayIndex(last, parent.length, false)] as JsonValue;
  if (isObject(parent) && Object.prototype.hasOwnProperty.call(parent, last)) return parent[last] as JsonValue;
  throw new Error(`path not found: "${pointer}"`);
}

/** Applies `patch` to a copy of `doc` and returns it; throws JsonPatchError (doc untouched). */
export function applyPatch(doc: JsonValue, patch: readonly PatchOperation[]): JsonValue {
  let root: JsonValue = structuredClone(doc);
  patch.forEach((op, index) => {
    try {
      if (typeof op !== "object" || op === null || typeof op.path !== "string") throw new Error("an operation needs a string path");
      if ((op.op === "add" || op.op === "replace" || op.op === "test") && !("value" in op)) throw new Error(`"${op.op}" needs a value`);
      if ((op.op === "move" || op.op === "copy") && typeof op.from !== "string") throw new Error(`"${op.op}" needs a string from`);
      const path = tokens(op.path);
      const add = (value: JsonValue) => {
        if (path.length === 0) {
          root = value;
          return;
        }
        const parent = parentOf(root, path);
        const last = path[path.length - 1]!;
        if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, true), 0, value);
        else if (isObject(parent)) setMember(parent, last, value);
        else throw new Error(`cannot add under a scalar at "${op.path}"`);
      };
      const remove = (): JsonValue => {
        if (path.length === 0) throw new Error("cannot remove the root");
        const parent = parentOf(root, path);
        const last = path[path.length - 1]!;
        if (Array.isArray(parent)) return parent.splice(arrayIndex(last, parent.length, false), 1)[0] as JsonValue;
        if (isObject(parent) && Object.prototype.hasOwnProperty.call(parent, last)) {
          const v = parent[last] as JsonValue;
          delete parent[last];
          return v;
        }
        throw new Error(`path not found: "${op.path}"`);
      };
      switch (op.op) {
        case "add":
          add(structuredClone(op.value as JsonValue));
          break;
        case "remove":
          remove();
          break;
        case "replace": {
          get(root, op.path);
          const value = structuredClone(op.value as JsonValue);
          if (path.length === 0) {
            root = value;
            break;
          }
          // In place: an object member keeps its position.
          const parent = parentOf(root, path);
          const last = path[path.length - 1]!;
          if (Array.isArray(parent)) parent[arrayIndex(last, parent.length, false)] = value;
          else setMember(parent as { [key: string]: JsonValue }, last, value);
          break;
        }
        case "move": {
          if (op.from === undefined) throw new Error("move needs from");
          if (op.path.startsWith(op.from + "/")) throw new Error("cannot move into a child");
          const fromPath = tokens(op.from);
          const value = get(root, op.from);
          if (fromPath.length === 0) throw new Error("cannot move the root");
          const parent = parentOf(root, fromPath);
          const last = fromPath[fromPath.length - 1]!;
          if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, false), 1);
          else delete (parent as Record<string, JsonValue>)[last];
          add(value);
          break;
        }
        case "copy":
          if (op.from === undefined) throw new Error("copy needs from");
          add(structuredClone(get(root, op.from)));
          break;
        case "test":
          if (!jsonEqual(get(root, op.path), op.value)) throw new Error(`test failed at "${op.path}"`);
          break;
        default:
          throw new Error(`unknown op "${(op as { op: string }).op}"`);
      }
    } catch (e) {
      throw new JsonPatchError(`patch operation ${index}: ${(e as Error).message}`, index);
    }
  });
  return root;
}
