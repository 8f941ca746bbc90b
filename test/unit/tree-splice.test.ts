import { describe, expect, test } from "bun:test";
import { findTreeEntry, MODE_BLOB, MODE_TREE, parseTree, serializeTree, spliceTree, type TreeEntry } from "../../src/store/objects.ts";

// names that sit next to each other in git's order only through its rules: a subtree sorts as if its name ended
// with "/" ("a" as a tree comes after "a.b" and "a-c" but before "a0"), and bytes above ASCII come last
const NAMES = ["a", "a.b", "a-c", "a0", "ab", "abc", "abc-def", "abc.json", "b", "00", "0f", "ff", "é", "\u{1F600}", "\uFF21", "x".repeat(60)];

function rand(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return (s >>> 8) % n;
  };
}

const hashOf = (i: number) => i.toString(16).padStart(40, "0");

describe("raw tree edits", () => {
  test("spliceTree gives the bytes serializeTree writes for the edited entries, on random trees and edits", () => {
    const r = rand(11);
    const names = NAMES;
    for (let round = 0; round < 400; round++) {
      const base = new Map<string, TreeEntry>();
      for (const name of names) if (r(2)) base.set(name, { mode: r(2) ? MODE_TREE : MODE_BLOB, name, hash: hashOf(r(1000)) });
      const changes = new Map<string, TreeEntry | null>();
      for (let k = r(4); k >= 0; k--) {
        const name = names[r(names.length)]!;
        changes.set(name, r(4) === 0 ? null : { mode: r(2) ? MODE_TREE : MODE_BLOB, name, hash: hashOf(r(1000)) });
      }
      const after = new Map(base);
      for (const [name, e] of changes) {
        if (e) after.set(name, e);
        else after.delete(name);
      }
      const spliced = spliceTree(serializeTree([...base.values()]), changes);
      expect(spliced.equals(serializeTree([...after.values()]))).toBe(true);
    }
  });

  test("spliceTree on an empty tree, and removing every entry", () => {
    const e: TreeEntry = { mode: MODE_BLOB, name: "x.json", hash: hashOf(1) };
    expect(spliceTree(Buffer.alloc(0), new Map([["x.json", e]])).equals(serializeTree([e]))).toBe(true);
    expect(spliceTree(serializeTree([e]), new Map([["x.json", null]])).length).toBe(0);
    expect(spliceTree(Buffer.alloc(0), new Map([["gone", null]])).length).toBe(0);
    expect(() => spliceTree(Buffer.alloc(0), new Map([["x", { mode: MODE_BLOB, name: "x", hash: "nope" }]]))).toThrow(/bad tree entry hash/);
  });

  test("findTreeEntry finds each entry by its exact name and nothing else", () => {
    const entries = NAMES.map((name, i) => ({ mode: i % 3 ? MODE_BLOB : MODE_TREE, name, hash: hashOf(i + 1) }));
    const raw = serializeTree(entries);
    for (const e of parseTree(raw)) expect(findTreeEntry(raw, e.name)).toEqual(e);
    for (const missing of ["", "a.", "abc-de", "A", "e", "\u{1F601}"]) expect(findTreeEntry(raw, missing)).toBeNull();
    expect(() => findTreeEntry(Buffer.from("100644 broken"), "x")).toThrow(/malformed tree/);
  });
});
