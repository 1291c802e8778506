// The order Weir keeps windows in (core/sort_spec): the sort's dotted paths left to right, `-`
// for descending, the record id breaking ties; values compared across types as missing = null <
// numbers < strings < objects < arrays < booleans, strings by code point (UTF-8 byte order),
// objects member by member in their order, arrays element by element. A window's `changes` say
// which rows are in it, not where: the client places them with this order. Two things JSON.parse
// loses make it differ from the server's: integers beyond 2^53 (they become equal doubles), and
// the stored order of an object's integer-like keys (JS puts them first) when objects are
// compared as sort values.

type Json = unknown;

function rank(v: Json): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === "number") return 1;
  if (typeof v === "string") return 2;
  if (Array.isArray(v)) return 4;
  if (typeof v === "object") return 3;
  if (typeof v === "boolean") return 5;
  return 0;
}

function compareStrings(a: string, b: string): number {
  // Code point order, which is UTF-8 byte order (UTF-16 code units would order surrogates wrong).
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done || y.done) return x.done && y.done ? 0 : x.done ? -1 : 1;
    const cx = x.value.codePointAt(0)!;
    const cy = y.value.codePointAt(0)!;
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}

/** Weir's total order over JSON values; -1, 0 or 1. */
export function compareJson(a: Json, b: Json): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 1: {
      const x = a as number;
      const y = b as number;
      if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) ? (Number.isNaN(y) ? 0 : -1) : 1;
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 2:
      return compareStrings(a as string, b as string);
    case 3: {
      const ea = Object.entries(a as object);
      const eb = Object.entries(b as object);
      for (let i = 0; i < Math.min(ea.length, eb.length); i++) {
        const ck = compareStrings(ea[i]![0], eb[i]![0]);
        if (ck !== 0) return ck;
        const cv = compareJson(ea[i]![1], eb[i]![1]);
        if (cv !== 0) return cv;
      }
      return ea.length === eb.length ? 0 : ea.length < eb.length ? -1 : 1;
    }
    case 4: {
      const xa = a as Json[];
      const xb = b as Json[];
      for (let i = 0; i < Math.min(xa.length, xb.length); i++) {
        const c = compareJson(xa[i], xb[i]);
        if (c !== 0) return c;
      }
      return xa.length === xb.length ? 0 : xa.length < xb.length ? -1 : 1;
    }
    case 5:
      return a === b ? 0 : a ? 1 : -1;
    default:
      return 0;
  }
}

/** The value at a dotted path (a numeric segment indexes an array); undefined when missing. */
export function valueAt(doc: Json, path: string): Json {
  let at: Json = doc;
  for (const seg of path.split(".")) {
    if (Array.isArray(at) && /^(0|[1-9][0-9]*)$/.test(seg)) at = at[Number(seg)];
    else if (at !== null && typeof at === "object" && !Array.isArray(at) && Object.hasOwn(at, seg)) at = (at as Record<string, Json>)[seg];
    else return undefined;
    if (at === undefined) return undefined;
  }
  return at;
}

/** A comparator of records in the order of `sort` (Weir's sort syntax). */
export function recordOrder(sort: readonly string[] = []): (a: Record<string, unknown>, b: Record<string, unknown>) => number {
  const keys = sort.map((s) => (s.startsWith("-") ? { path: s.slice(1), sign: -1 } : { path: s, sign: 1 }));
  return (a, b) => {
    for (const k of keys) {
      const c = compareJson(valueAt(a, k.path), valueAt(b, k.path));
      if (c !== 0) return c * k.sign;
    }
    return compareJson(a["id"], b["id"]);
  };
}
