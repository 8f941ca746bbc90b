import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cutDelta, deltaHasUser, takeDeltaFile } from "../../src/core/capture/delta.ts";
import { inferTag } from "../../src/core/capture/facts.ts";
import { groupRootFor } from "../../src/core/capture/grouping.ts";
import { appendSnippet } from "../../src/core/capture/record.ts";
import { parseRewritePairs } from "../../src/core/capture/rewrite.ts";
import { mergeEntries } from "../../src/store/timeline.ts";
import type { Entry, Tag } from "../../src/store/entry.ts";

const A = "a".repeat(40);
const R = "c".repeat(40);

describe("groupRootFor (SPEC §5)", () => {
  const cases: [string, { commitHash: string; groupRootId: string | null } | null, boolean, boolean, string | null][] = [
    ["no previous entry: new root", null, true, false, null],
    ["no previous entry, agent alone: still a root", null, false, false, null],
    ["agent commits on its own: previous root's group", { commitHash: A, groupRootId: null }, false, false, A],
    ["agent commits on its own after a member: same root", { commitHash: A, groupRootId: R }, false, false, R],
    ["AskUserQuestion answer: same group", { commitHash: A, groupRootId: null }, true, true, A],
    ["continuation after a member: same root", { commitHash: A, groupRootId: R }, true, true, R],
    ["user typed a new request: new root", { commitHash: A, groupRootId: R }, true, false, null],
    ["continuation flag without user lines: same group", { commitHash: A, groupRootId: null }, false, true, A],
  ];
  for (const [name, prev, hasUser, cont, want] of cases) {
    test(name, () => expect(groupRootFor(prev, hasUser, cont)).toBe(want));
  }
});

describe("inferTag", () => {
  const cases: [string, Tag][] = [
    ["feat: add x", "FEATURE"],
    ["feat(api)!: break y", "FEATURE"],
    ["fix(parser): crash on empty input", "BUGFIX"],
    ["Fix: capitalised", "BUGFIX"],
    ["refactor: split module", "REFACTORING"],
    ["perf: faster", "REFACTORING"],
    ["test: cover edge", "TEST"],
    ["docs(readme): usage", "DOCS"],
    ["chore: bump deps", "FEATURE"],
    ["Add a button", "FEATURE"],
    ["fixes the thing", "FEATURE"],
  ];
  for (const [subject, tag] of cases) test(subject, () => expect(inferTag(subject)).toBe(tag));
});

describe("delta cut", () => {
  let dir = "";
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const files = () => ({ prompts: join(dir, "p"), offset: join(dir, "o"), delta: join(dir, "d") });
  const line = (role: string, content: string) => `${JSON.stringify({ role, content })}\n`;

  test("each cut takes the lines after the offset; two cuts keep their own lines", () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-delta-"));
    const f = files();
    writeFileSync(f.prompts, line("user", "do A") + line("assistant", "done A"));
    const first = cutDelta(f);
    expect(first.lines).toBe(2);
    expect(first.hasUser).toBe(true);
    expect(readFileSync(f.offset, "utf8").trim()).toBe("2");
    writeFileSync(f.prompts, readFileSync(f.prompts, "utf8") + line("assistant", "also B"));
    const second = cutDelta(f);
    expect(second.text).toBe(line("assistant", "also B"));
    expect(second.hasUser).toBe(false);
    expect(readFileSync(f.delta, "utf8")).toBe(second.text);
    const third = cutDelta(f);
    expect(third.text).toBe("");
  });

  test("a partial last line waits for the next cut", () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-delta-"));
    const f = files();
    writeFileSync(f.prompts, `${line("user", "x")}{"role":"assist`);
    expect(cutDelta(f).lines).toBe(1);
    writeFileSync(f.prompts, `${line("user", "x")}${line("assistant", "y")}`);
    expect(cutDelta(f).text).toBe(line("assistant", "y"));
  });

  test("an offset past the end (log restarted) cuts from the start", () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-delta-"));
    const f = files();
    writeFileSync(f.offset, "40\n");
    writeFileSync(f.prompts, line("user", "again"));
    expect(cutDelta(f).lines).toBe(1);
  });

  test("takeDeltaFile reads and deletes", () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-delta-"));
    const f = files();
    writeFileSync(f.delta, line("user", "z"));
    expect(takeDeltaFile(f)).toBe(line("user", "z"));
    expect(existsSync(f.delta)).toBe(false);
    expect(takeDeltaFile(f)).toBe("");
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
