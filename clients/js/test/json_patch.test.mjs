// The package's RFC 6902 apply against the public conformance suite (json-patch-tests, the copy
// under tests/conformance): every enabled case's expected document, and every error case
// refused with the document left as it was.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { JsonPatchError, applyPatch } from "../dist/index.js";

const dir = resolve(dirname(fileURLToPath(import.meta.url)), "../../../tests/conformance/json-patch-tests");

for (const file of ["tests.json", "spec_tests.json"]) {
  test(`json-patch-tests ${file}`, () => {
    const cases = JSON.parse(readFileSync(resolve(dir, file), "utf8"));
    let run = 0;
    for (const c of cases) {
      if (c.disabled) continue;
      const before = JSON.stringify(c.doc);
      if (c.error !== undefined) {
        assert.throws(() => applyPatch(c.doc, c.patch), JsonPatchError, c.comment ?? c.error);
        assert.equal(JSON.stringify(c.doc), before, "a refused patch changes nothing");
      } else if (c.expected !== undefined) {
        assert.deepEqual(applyPatch(c.doc, c.patch), c.expected, c.comment);
        assert.equal(JSON.stringify(c.doc), before, "the input is not modified");
      } else {
        applyPatch(c.doc, c.patch);
      }
      run += 1;
    }
    assert.ok(run >= (file === "tests.json" ? 50 : 10), `${run} cases`);
  });
}

test("what the suite leaves out: escapes, member order, __proto__", () => {
  assert.throws(() => applyPatch({ "a~2": 1 }, [{ op: "remove", path: "/a~2" }]), JsonPatchError);
  assert.throws(() => applyPatch({}, [{ op: "add", path: "/a~", value: 1 }]), JsonPatchError);
  // replace keeps a member where it was.
  assert.deepEqual(Object.keys(applyPatch({ a: 1, b: 2, c: 3 }, [{ op: "replace", path: "/a", value: 9 }])), ["a", "b", "c"]);
  // A member named __proto__ is a member, not the prototype.
  const d = applyPatch({}, [{ op: "add", path: "/__proto__", value: { x: 1 } }]);
  assert.ok(Object.hasOwn(d, "__proto__"));
  assert.equal(Object.getPrototypeOf(d), Object.prototype);
  assert.equal(d.x, undefined);
});
