import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commitCut, deltaHasUser, peekDelta } from "../../src/core/capture/delta.ts";
import { appendLogLines, readLogState } from "../../src/core/session-log.ts";
import { commitFacts, inferTag } from "../../src/core/capture/facts.ts";
import { ObjectStore } from "../../src/store/objects.ts";
import { tempRepo } from "../helpers.ts";
import { groupRootFor } from "../../src/core/capture/grouping.ts";
import { appendSnippet } from "../../src/core/capture/record.ts";
import { parseRewritePairs } from "../../src/core/capture/rewrite.ts";
import { mergeEntries } from "../../src/store/timeline.ts";
import type { Entry, Tag } from "../../src/store/entry.ts";

const A = "a".repeat(40);
const R = "c".repeat(40);

describe("groupRootFor (SPEC §5)", () => {
  const cases: [string, { commitHash: string; groupRootId: string | null } | null, boolean, string | null][] = [
    ["no previous entry: new root", null, true, null],
    ["no previous entry, agent alone: still a root", null, false, null],
    ["agent commits on its own: previous root's group", { commitHash: A, groupRootId: null }, false, A],
    ["agent commits on its own after a member: same root", { commitHash: A, groupRootId: R }, false, R],
    ["user typed a new request: new root", { commitHash: A, groupRootId: R }, true, null],
  ];
  for (const [name, prev, newRequest, want] of cases) {
    test(name, () => expect(groupRootFor(prev, newRequest)).toBe(want));
  }
});

describe("inferTag", () => {
  const cases: [string, string[], Tag | null][] = [
    ["feat: add x", [], "FEATURE"],
    ["feat(api)!: break y", [], "FEATURE"],
    ["fix(parser): crash on empty input", [], "BUGFIX"],
    ["Fix: capitalised", [], "BUGFIX"],
    ["refactor: split module", [], "REFACTORING"],
    ["perf: faster", [], "REFACTORING"],
    ["test: cover edge", [], "TEST"],
    ["docs(readme): usage", [], "DOCS"],
    // the prefix wins over the files
    ["fix: a typo in the guide", ["docs/guide.md"], "BUGFIX"],
    // no prefix: the files say it, or nothing does
    ["Cover the parser", ["test/parser.test.ts", "src/__tests__/x.ts", "pkg/a_test.go", "tests/test_io.py"], "TEST"],
    ["Explain setup", ["docs/setup.md", "README.md", "CHANGELOG"], "DOCS"],
    ["Add a button", ["src/button.ts"], null],
    ["Add a button and its test", ["src/button.ts", "src/button.test.ts"], null],
    ["chore: bump deps", ["package.json"], null],
    ["fixes the thing", [], null],
  ];
  for (const [subject, files, tag] of cases) test(`${subject} ${files.join(" ")}`, () => expect(inferTag(subject, files)).toBe(tag));
});

describe("delta cut", () => {
  let dir = "";
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const files = () => ({ prompts: join(dir, "p"), offset: join(dir, "o"), delta: join(dir, "d"), pendingQuestion: join(dir, "q") });
  const line = (role: string, content: string) => `${JSON.stringify({ role, content })}\n`;
  const cut = (f: ReturnType<typeof files>) => {
    const d = peekDelta(f);
    commitCut(f, d);
    return d;
  };

  test("each cut takes the lines after the byte offset; two cuts keep their own lines", () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-delta-"));
    const f = files();
    writeFileSync(f.prompts, line("user", "do A") + line("assistant", "done A"));
    const first = cut(f);
    expect(first.lines).toBe(2);
    expect(first.hasUser).toBe(true);
    expect(readLogState(f)).toMatchObject({ lines: 2, cut: Buffer.byteLength(line("user", "do A") + line("assistant", "done A")) });
    writeFileSync(f.prompts, readFileSync(f.prompts, "utf8") + line("assistant", "also B"));
    const second = cut(f);
    expect(second.text).toBe(line("assistant", "also B"));
    expect(second.hasUser).toBe(false);
    expect(readFileSync(f.delta, "utf8")).toBe(second.text);
    expect(cut(f).text).toBe("");
  });

  test("a cut changes more of the session's state in the same write when asked", () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-delta-"));
    const f = files();
    writeFileSync(f.prompts, line("user", "do A"));
    commitCut(f, peekDelta(f), (s) => ({ pending: [...s.pending, A], reflogSeen: "stamp" }));
    expect(readLogState(f)).toMatchObject({ lines: 1, cut: Buffer.byteLength(line("user", "do A")), pending: [A], reflogSeen: "stamp" });
  });

  test("a peek without a cut leaves the lines for the next commit", () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-delta-"));
    const f = files();
    writeFileSync(f.prompts, line("user", "x"));
    expect(peekDelta(f).lines).toBe(1);
    expect(peekDelta(f).lines).toBe(1);
  });

  test("a partial last line waits for the next cut", () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-delta-"));
    const f = files();
    writeFileSync(f.prompts, `${line("user", "x")}{"role":"assist`);
    expect(cut(f).lines).toBe(1);
    writeFileSync(f.prompts, `${line("user", "x")}${line("assistant", "y")}`);
    expect(cut(f).text).toBe(line("assistant", "y"));
  });

  test("an offset past the end (log restarted) cuts from the start; a first-format offset counts lines", () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-delta-"));
    const f = files();
    writeFileSync(f.offset, "40\n");
    writeFileSync(f.prompts, line("user", "again"));
    expect(peekDelta(f).lines).toBe(1);
    writeFileSync(f.offset, "1\n");
    writeFileSync(f.prompts, line("user", "one") + line("assistant", "two"));
    expect(peekDelta(f).text).toBe(line("assistant", "two"));
  });

  test("an append after a torn line starts a new line; the torn line is never read", () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-delta-"));
    const f = files();
    writeFileSync(f.prompts, `${line("user", "one")}{"role":"user","cont`);
    appendLogLines(f.prompts, [{ role: "user", content: "two" }]);
    const text = readFileSync(f.prompts, "utf8");
    expect(text.split("\n")[2]).toBe(JSON.stringify({ role: "user", content: "two" }));
    expect(peekDelta(f).text).toBe(line("user", "one") + line("user", "two"));
  });

  test("a user line before the question is a new request; one after it is the answer", () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-delta-"));
    const f = files();
    const before = appendLogLines(f.prompts, [{ role: "user", content: "new request" }]);
    expect(before).toBe(0);
    const at = appendLogLines(f.prompts, [{ role: "assistant", content: "which?" }, { role: "user", content: "this" }]);
    writeFileSync(f.pendingQuestion, `${at}\n`);
    expect(peekDelta(f)).toMatchObject({ hasUser: true, continuation: true });
    writeFileSync(f.pendingQuestion, "0\n");
    expect(peekDelta(f)).toMatchObject({ hasUser: false, continuation: true });
    expect(existsSync(f.pendingQuestion)).toBe(true);
  });

  test("a cut clears the question marker its delta was read with, and keeps one written after the read", () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-delta-"));
    const f = files();
    appendLogLines(f.prompts, [{ role: "user", content: "do A" }]);
    const plain = peekDelta(f);
    // a question asked and answered between the read and the cut: its marker belongs to the next delta
    const at = appendLogLines(f.prompts, [{ role: "assistant", content: "which?" }, { role: "user", content: "this" }]);
    writeFileSync(f.pendingQuestion, `${at}\n`);
    commitCut(f, plain);
    expect(readFileSync(f.pendingQuestion, "utf8")).toBe(`${at}\n`);
    const next = peekDelta(f);
    expect(next).toMatchObject({ continuation: true, lines: 2 });
    commitCut(f, next);
    expect(existsSync(f.pendingQuestion)).toBe(false);
  });

  test("a cut given the state read under the lock writes from it, not from a second read", () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-delta-"));
    const f = files();
    appendLogLines(f.prompts, [{ role: "user", content: "do A" }]);
    const state = readLogState(f);
    writeFileSync(f.offset, `${JSON.stringify({ cut: 0, stored: 0, lines: 0, pending: [A] })}\n`);
    commitCut(f, peekDelta(f, state), undefined, true, state);
    expect(readLogState(f).pending).toEqual([]);
  });

  test("deltaHasUser ignores broken lines", () => {
    expect(deltaHasUser(`not json\n${line("assistant", "a")}`)).toBe(false);
    expect(deltaHasUser(`not json\n${line("user", "a")}`)).toBe(true);
  });
});

describe("entries and rewrites", () => {
  const base: Entry = {
    commitHash: A,
    title: "t",
    intent: "",
    alternatives: "",
    diffSummary: "",
    tag: "FEATURE",
    changedFiles: ["a"],
    agentType: "CLAUDE_CODE",
    claudeSessionId: "s",
    branch: "main",
    conversationSnippet: '{"role":"user","content":"1"}\n',
    continuation: false,
    groupRootId: null,
    capturedAt: "2024-01-01T00:00:00.000Z",
  };
  test("mergeEntries keeps the first's summary and joins snippets and files", () => {
    const m = mergeEntries({ ...base, intent: "why" }, { ...base, title: "other", changedFiles: ["b", "a"], continuation: true, conversationSnippet: '{"role":"assistant","content":"2"}' });
    expect(m.intent).toBe("why");
    expect(m.title).toBe("t");
    expect(m.changedFiles).toEqual(["a", "b"]);
    expect(m.continuation).toBe(true);
    expect(m.conversationSnippet.split("\n").filter(Boolean)).toHaveLength(2);
  });
  test("appendSnippet keeps one record per line", () => {
    expect(appendSnippet("a", "b\n")).toBe("a\nb\n");
    expect(appendSnippet("a\n", "b\n")).toBe("a\nb\n");
    expect(appendSnippet("", "b\n")).toBe("b\n");
    expect(appendSnippet("a\n", "")).toBe("a\n");
  });
  test("parseRewritePairs reads git's lines and skips junk", () => {
    const b = "b".repeat(40);
    expect(parseRewritePairs(`${A} ${b}\n${A} ${b} extra\nnot a line\n`)).toEqual([
      [A, b],
      [A, b],
    ]);
  });
});

describe("--changed-files parsing", () => {
  const { splitPathList, unquoteGitPath } = require("../../src/core/capture/capture.ts") as typeof import("../../src/core/capture/capture.ts");
  const cases: [string, string[]][] = [
    ["a.ts, b.ts", ["a.ts", "b.ts"]],
    [' "src/my dir/a \\"b\\".js" ,c.js', ['src/my dir/a "b".js', "c.js"]],
    ['"x,y.ts",z', ["x,y.ts", "z"]],
    ['"caf\\303\\251.md"', ["café.md"]],
    [",,", []],
  ];
  for (const [text, want] of cases) test(JSON.stringify(text), () => expect(splitPathList(text)).toEqual(want));
  test("a plain path is left as it is", () => expect(unquoteGitPath("plain.ts")).toBe("plain.ts"));
});

describe("renames a commit records", () => {
  const body = (n: number, tag: string) => Array.from({ length: 10 }, (_, i) => `line ${i} of ${tag}`).slice(0, n).join("\n") + "\n";
  const cases: { name: string; before: Record<string, string>; after: Record<string, string>; renames: { from: string; to: string }[] }[] = [
    { name: "same content", before: { "a.ts": body(10, "a") }, after: { "b.ts": body(10, "a") }, renames: [{ from: "a.ts", to: "b.ts" }] },
    {
      name: "moved into a directory with a line changed",
      before: { "a.ts": body(10, "a") },
      after: { "src/a.ts": body(9, "a") + "a new line\n" },
      renames: [{ from: "a.ts", to: "src/a.ts" }],
    },
    { name: "a file removed and an unrelated one added", before: { "a.ts": body(10, "a") }, after: { "b.ts": body(10, "b") }, renames: [] },
    { name: "a file only changed", before: { "a.ts": body(10, "a") }, after: { "a.ts": body(9, "a") }, renames: [] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const repo = tempRepo();
      try {
        repo.commit("before", c.before);
        for (const f of Object.keys(c.before)) repo.git("rm", "-q", f);
        const hash = repo.commit("after", c.after);
        expect(commitFacts(new ObjectStore(join(repo.root, ".git")), hash).renames).toEqual(c.renames);
      } finally {
        repo.cleanup();
      }
    });
  }
});
