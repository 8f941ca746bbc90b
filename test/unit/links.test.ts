import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { initSchema } from "../../src/store/index/db.ts";
import { cacheLink, cachedLink } from "../../src/store/index/links.ts";
import { linkedParts } from "../../src/store/index/recall.ts";
import {
  decodeSet,
  encodeSet,
  fingerprintOf,
  hashOfLine,
  linesOfPatch,
  MAX_FINGERPRINT_CHARS,
  MIN_BITS,
  normaliseLine,
  packHashes,
  readFingerprint,
  unpackHashes,
  type ChangeLines,
} from "../../src/core/links/fingerprint.ts";
import { partsForLines } from "../../src/core/links/match.ts";
import { linkPath, parseLink } from "../../src/store/links.ts";
import { makeEntry } from "../timeline-fixture.ts";

const change = (files: Record<string, { add?: string[]; del?: string[] }>): ChangeLines => ({
  files: new Map(
    Object.entries(files).map(([path, f]) => [
      path,
      {
        add: new Set((f.add ?? []).map((l) => hashOfLine(l)!).filter((h) => h !== null)),
        del: new Set((f.del ?? []).map((l) => hashOfLine(l)!).filter((h) => h !== null)),
      },
    ]),
  ),
});

describe("line fingerprints", () => {
  test.each([
    ["  return a + b;", "returna+b;"],
    ["\tconst x = 1;  ", "constx=1;"],
    ["}", ""],
    ["  });", ""],
    ["", ""],
  ])("normalises %p", (line, want) => expect(normaliseLine(line)).toBe(want));

  test("whitespace changes keep a line's hash; a short line has none", () => {
    expect(hashOfLine("  return a + b;")).toBe(hashOfLine("return a+b;"));
    expect(hashOfLine("}")).toBeNull();
    expect(hashOfLine("return a - b;")).not.toBe(hashOfLine("return a + b;"));
  });

  test("a patch's added and removed lines, per file (a quoted path, a deleted file)", () => {
    const patch = [
      "diff --git a/src/a.ts b/src/a.ts",
      "index 1111111..2222222 100644",
      "--- a/src/a.ts",
      "+++ b/src/a.ts",
      "@@ -1,3 +1,3 @@",
      " const keep = 1;",
      "-const total = 0;",
      "+const total = sum(xs);",
      "+}",
      'diff --git "a/my dir/b.ts" "b/my dir/b.ts"',
      "deleted file mode 100644",
      '--- "a/my dir/b.ts"',
      "+++ /dev/null",
      "@@ -1 +0,0 @@",
      "--- a removed line that starts with dashes",
      "",
    ].join("\n");
    const lines = linesOfPatch(patch);
    expect([...lines.files.keys()]).toEqual(["src/a.ts", "my dir/b.ts"]);
    expect([...lines.files.get("src/a.ts")!.add]).toEqual([hashOfLine("const total = sum(xs);")!]);
    expect([...lines.files.get("src/a.ts")!.del]).toEqual([hashOfLine("const total = 0;")!]);
    expect([...lines.files.get("my dir/b.ts")!.del]).toEqual([hashOfLine("-- a removed line that starts with dashes")!]);
  });

  test("packing round-trips and a malformed text gives nothing", () => {
    const hashes = [0, 1, 0xabcdef, 0xffffff];
    expect([...unpackHashes(packHashes(hashes))]).toEqual(hashes);
    expect(unpackHashes("%%%").size).toBe(0);
  });

  test.each([[[]], [[0]], [[5, 6, 7, 1000]], [[0, 0xffffff]], [Array.from({ length: 500 }, (_, i) => i * 33_331 + (i % 7))]])(
    "a coded set round-trips (%#)",
    (values) => {
      expect([...decodeSet(encodeSet(values))]).toEqual(values);
    },
  );

  test("a malformed coded set gives what could be read, never throws", () => {
    expect(decodeSet("%%%").size).toBe(0);
    expect(decodeSet("_w").size).toBe(0); // a Rice parameter out of range
    const cut = encodeSet([1, 2, 3, 400_000]).slice(0, 3);
    expect(() => decodeSet(cut)).not.toThrow();
  });

  test("a fingerprint reads back the lines it was made from", () => {
    const c = change({ "src/a.ts": { add: ["const total = sum(xs);"], del: ["const total = 0;"] } });
    const fp = readFingerprint(fingerprintOf("ab".repeat(20), c))!;
    expect(fp.patchId).toBe("ab".repeat(20));
    const f = fp.files.get("src/a.ts")!;
    expect([f.add.bits, [...f.add.values]]).toEqual([24, [...c.files.get("src/a.ts")!.add]]);
    expect([...f.del.values]).toEqual([...c.files.get("src/a.ts")!.del]);
  });

  test("a version 1 fingerprint (packed 24-bit hashes) still reads", () => {
    const h = hashOfLine("const total = sum(xs);")!;
    const fp = readFingerprint({ v: 1, files: [{ path: "a.ts", add: packHashes([h]), del: "" }] })!;
    expect(fp.files.get("a.ts")!.add.has(h)).toBe(true);
  });

  test("a change of 300 lines keeps every added line, its hashes cut to fit the size cap", () => {
    const lines = Array.from({ length: 300 }, (_, i) => `export const value${i} = compute(${i});`);
    const paths = Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`src/module-${i}.ts`, { add: lines.slice(i * 100, i * 100 + 100), del: lines.slice(i, i + 3) }]));
    const c = change(paths);
    const fp = fingerprintOf("cd".repeat(20), c);
    expect(JSON.stringify(fp).length).toBeLessThanOrEqual(MAX_FINGERPRINT_CHARS);
    expect(fp.addMax).toBeUndefined();
    expect(fp.bits!).toBeLessThan(24);
    const read = readFingerprint(fp)!;
    for (const [path, f] of c.files) for (const h of f.add) expect(read.files.get(path)!.add.has(h)).toBe(true);
    // a line it does not hold is rarely taken for one of them: n / 2^bits
    const others = Array.from({ length: 2000 }, (_, i) => hashOfLine(`const other${i} = elsewhere(${i});`)!);
    const wrong = others.filter((h) => read.files.get("src/module-0.ts")!.add.has(h)).length;
    expect(wrong).toBeLessThan(2000 * 0.02);
  });

  test("a change too large even at the fewest bits keeps its smallest hashes, under the size cap", () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `export const value${i} = compute(${i});`);
    const paths = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`src/some/deeper/folder/file-${i}.ts`, { add: lines.slice(i * 60, i * 60 + 60), del: lines.slice(1000 + i * 10, 1010 + i * 10) }]));
    const fp = fingerprintOf("cd".repeat(20), change(paths));
    expect(JSON.stringify(fp).length).toBeLessThanOrEqual(MAX_FINGERPRINT_CHARS);
    expect(fp.bits).toBe(MIN_BITS);
    expect(fp.addMax).toBeNumber();
    const kept = [...readFingerprint(fp)!.files.values()].flatMap((f) => [...f.add.values]);
    expect(Math.max(...kept)).toBe(fp.addMax!);
  });
});

describe("which part wrote a line", () => {
  const at = (h: string, minute: number, add: string[]) =>
    makeEntry({
      commitHash: h.repeat(40),
      committedAt: `2026-11-01T10:${String(minute).padStart(2, "0")}:00.000Z`,
      fingerprint: fingerprintOf(undefined, change({ "src/p.ts": { add } })),
    });
  const first = at("a", 1, ["export function parse(text: string) {", "return text.split('\\n');"]);
  const fix = at("b", 2, ["return text.split('\\n').filter(Boolean);"]);
  const file = ["export function parse(text: string) {", "  return text.split('\\n').filter(Boolean);", "}", "", "export const human = 'written by a person';"];

  test.each([
    [1, ["a"]], // written by the first part
    [2, ["b"]], // rewritten by the fix: the newest part that wrote it
    [3, ["a"]], // a brace: the part that opened its block
    [5, []], // a person's line: none
  ])("line %p", (line, want) => {
    const found = partsForLines("src/p.ts", file, line, line, [first, fix]);
    expect(found.map((e) => e.commitHash[0])).toEqual(want);
  });

  // a: a function; b: a second one repeating a's statement; a person's block; doc comments
  const a = at("a", 1, ["export function load(path: string) {", "const data = readFileSync(path);", "return JSON.parse(data);", " * Loads the settings file."]);
  const b = at("b", 2, ["export function save(path: string, value: unknown) {", "const data = readFileSync(path);", "writeFileSync(path, merge(data, value));"]);
  const text = [
    "/**",
    " * Loads the settings file.",
    " */",
    "export function load(path: string) {",
    "  const data = readFileSync(path);",
    "  return JSON.parse(data);",
    "}",
    "export function save(path: string, value: unknown) {",
    "  const data = readFileSync(path);",
    "  writeFileSync(path, merge(data, value));",
    "}",
    "export function personal() {",
    "  if (ready()) {",
    "    return settle(everything);",
    "  }",
    "}",
  ];
  test.each([
    [1, ["a"]], // an opening comment mark: what follows it
    [3, ["a"]], // a comment's end: what it closes
    [5, ["a"]], // a statement both parts added: the part that wrote the lines around it
    [9, ["b"]],
    [11, ["b"]],
    [15, []], // a brace closing a person's block stays the person's
    [16, []],
  ])("short and repeated lines: line %p", (line, want) => {
    expect(partsForLines("src/p.ts", text, line, line, [a, b]).map((e) => e.commitHash[0])).toEqual(want);
  });
});

describe("link files", () => {
  test("path fan-out and parsing", () => {
    const h = "1f".repeat(20);
    expect(linkPath(h)).toBe(`links/1f/${h.slice(2)}.json`);
    const link = { commitHash: h, method: "squash", parts: [{ commitHash: "2a".repeat(20), method: "lines", lines: 3 }], coverage: 1, computedAt: "2026-11-01T00:00:00.000Z" };
    expect(parseLink(JSON.stringify(link))?.parts[0]!.lines).toBe(3);
    expect(parseLink("{")).toBeNull();
    expect(parseLink(JSON.stringify({ ...link, commitHash: "nope" }))).toBeNull();
  });
});

describe("the index's memory of misses", () => {
  const addEntry = (db: Database, hash: string, ms: number) =>
    db
      .query(
        `INSERT INTO entries (commit_hash, blob_oid, session_id, tag, agent_type, branch, title, captured_at, captured_ms, recorded_ms, prompts)
         VALUES (?, 'x', 's', 'FEATURE', 'CLAUDE_CODE', 'main', 't', '', ?, ?, '[]')`,
      )
      .run(hash, ms, ms);

  test("a miss holds until an entry old enough to be a part arrives; a later commit's entry does not undo it", () => {
    const db = new Database(":memory:");
    initSchema(db);
    const squash = "5".repeat(40);
    addEntry(db, "1".repeat(40), 1_000);
    cacheLink(db, squash, null, 5_000);
    expect(cachedLink(db, squash)).toBe("none");
    addEntry(db, "2".repeat(40), 9_000); // committed after the squash: cannot be one of its parts
    expect(cachedLink(db, squash)).toBe("none");
    addEntry(db, "3".repeat(40), 4_000); // imported later, from before the squash: worth another look
    expect(cachedLink(db, squash)).toBeUndefined();
    db.close();
  });
});

describe("recall's view of links", () => {
  test("a blamed squash stands for its parts; an index without the cache gives nothing", () => {
    const db = new Database(":memory:");
    initSchema(db);
    expect(linkedParts(db, ["5".repeat(40)]).size).toBe(0);
    const [a, b, squash] = ["a".repeat(40), "b".repeat(40), "5".repeat(40)];
    const link = { commitHash: squash, method: "squash" as const, parts: [a, b].map((h) => ({ commitHash: h, method: "lines" as const, lines: 2 })), coverage: 1, computedAt: "2026-11-01T00:00:00.000Z" };
    cacheLink(db, squash, link);
    cacheLink(db, "6".repeat(40), null, 1);
    expect(linkedParts(db, [squash, "6".repeat(40), "7".repeat(40)])).toEqual(new Map([[squash, [a, b]]]));
    db.close();
  });
});

describe("a commit's change read from git", () => {
  test("the patch id is git's own, for a root, a big, an empty and a merge commit; a missing commit has none", async () => {
    const { tempRepo } = await import("../helpers.ts");
    const { readChange, commitPatch } = await import("../../src/core/links/fingerprint.ts");
    const repo = tempRepo();
    try {
      const root = repo.git("rev-list", "--max-parents=0", "HEAD");
      // far more than a pipe holds
      const big = repo.commit("a big change", { "big.txt": Array.from({ length: 20_000 }, (_, i) => `line ${i} of a long generated file`).join("\n") });
      repo.git("commit", "-q", "--allow-empty", "-m", "nothing changed");
      const empty = repo.git("rev-parse", "HEAD");
      repo.git("checkout", "-q", "-b", "side", root);
      repo.commit("on the side", { "side.txt": "side\n" });
      repo.git("checkout", "-q", "-");
      repo.git("merge", "-q", "--no-ff", "-m", "merge side", "side");
      const merge = repo.git("rev-parse", "HEAD");
      const gitsOwn = (hash: string) =>
        Bun.spawnSync(["sh", "-c", `git diff-tree -p --no-color --no-ext-diff --no-textconv --root -m --first-parent ${hash} | git patch-id --stable`], { cwd: repo.root, env: repo.env })
          .stdout.toString()
          .split(" ", 1)[0]!
          .trim();
      const commonDir = `${repo.root}/.git`;
      for (const hash of [root, big, merge]) {
        const change = (await readChange(commonDir, hash))!;
        expect(change.patchId).toBe(gitsOwn(hash));
        expect(change.patchId).toMatch(/^[0-9a-f]{40}$/);
        expect(change.lines).toEqual(linesOfPatch((await commitPatch(commonDir, hash))!));
      }
      expect((await readChange(commonDir, empty))!.patchId).toBe("");
      expect(await readChange(commonDir, "0".repeat(40))).toBeNull();
    } finally {
      repo.cleanup();
    }
  });

  test("the worker's fingerprint: whole under its cap; over it, the line hashes alone, git stopped", async () => {
    const { tempRepo } = await import("../helpers.ts");
    const { fingerprintCommit, commitPatch, quickFingerprint } = await import("../../src/core/links/fingerprint.ts");
    const { wholeFingerprint } = await import("../../src/core/capture/record.ts");
    const { ObjectStore } = await import("../../src/store/objects.ts");
    const repo = tempRepo();
    try {
      const big = repo.commit("a big change", { "big.txt": Array.from({ length: 20_000 }, (_, i) => `line ${i} of a long generated file`).join("\n") });
      const commonDir = `${repo.root}/.git`;
      const size = (await commitPatch(commonDir, big))!.length;
      expect(size).toBeGreaterThan(500_000);
      // under the cap: git's patch id and every line
      expect(await wholeFingerprint(commonDir, big, size + 1)).toEqual((await fingerprintCommit(commonDir, big))!);
      expect((await wholeFingerprint(commonDir, big, size + 1))!.patchId).toMatch(/^[0-9a-f]{40}$/);
      // over it: no patch read whole, the fingerprint the commit's objects give
      expect(await commitPatch(commonDir, big, 64 * 1024)).toBeNull();
      const store = new ObjectStore(commonDir);
      const quick = quickFingerprint(store, big)!;
      store.close();
      const capped = (await wholeFingerprint(commonDir, big, 64 * 1024))!;
      expect(capped).toEqual(quick);
      expect(capped.patchId).toBeUndefined();
      expect(capped.files.map((f) => f.path)).toEqual(["big.txt"]);
    } finally {
      repo.cleanup();
    }
  });
});
