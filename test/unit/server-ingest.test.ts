/** The write path's pure parts: one write at a time per key, the transactions a batch is cut into, the file count. */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { redactValueForWrite } from "../../src/redact/index.ts";
import { CHUNK_CHARS, MAX_ENTRY_BYTES, checkEntry, jsonFacts, writeChunks } from "../../src/server/ingest.ts";
import { conversationLines } from "../../src/util/jsonl.ts";
import { makeEntry } from "../sync-fixtures.ts";
import { WriteLanes } from "../../src/server/lanes.ts";
import type { EntryRow } from "../../src/server/storage.ts";
import { listedFiles } from "../../src/server/write.ts";

const row = (files: number, chars: number): { row: EntryRow } => ({
  row: {
    commitHash: "a".repeat(40),
    sessionId: "s",
    branch: "main",
    tag: "FEATURE",
    capturedMs: 0,
    sortMs: 0,
    recordedMs: 0,
    groupRootId: null,
    hasUser: false,
    continuation: false,
    request: null,
    author: null,
    keyOwner: null,
    summary: "",
    conversation: "x".repeat(chars),
    searchText: "",
    files: Array.from({ length: files }, (_, i) => `f${i}`),
  },
});

describe("write lanes", () => {
  test("one write at a time per key, in arrival order; other keys do not wait", async () => {
    const lanes = new WriteLanes(8, 5_000);
    const log: string[] = [];
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const first = lanes.run("k", async () => (log.push("k1 start"), await gate, log.push("k1 end")));
    const second = lanes.run("k", async () => void log.push("k2"));
    await lanes.run("other", async () => void log.push("other"));
    expect(log).toEqual(["k1 start", "other"]);
    open();
    await Promise.all([first, second]);
    expect(log).toEqual(["k1 start", "other", "k1 end", "k2"]);
  });

  test("a full line, or a wait longer than the bound, is refused (null) without running; the order holds", async () => {
    const lanes = new WriteLanes(2, 50);
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const ran: number[] = [];
    const first = lanes.run("k", async () => (await gate, ran.push(1)));
    const waited = lanes.run("k", async () => ran.push(2));
    expect(await lanes.run("k", async () => ran.push(3))).toBeNull(); // two in line already
    expect(await waited).toBeNull(); // gave up after 50 ms
    // the one that gave up keeps its place until the one before it is done: the line stays full
    expect(await lanes.run("k", async () => ran.push(4))).toBeNull();
    expect(ran).toEqual([]);
    open();
    await first;
    await lanes.run("k", async () => ran.push(5));
    expect(ran).toEqual([1, 5]);
  });
});

describe("an entry's JSON, seen without writing it", () => {
  const deep: unknown[] = [];
  let at = deep;
  for (let i = 0; i < 50; i++) at.push((at = []));
  test.each([
    ["a NUL character", { title: "a\u0000b" }],
    ["a NUL character in a key", { ["x\u0000"]: 1 }],
    ["a NUL in a key whose value JSON leaves out", { ["x\u0000"]: undefined, y: "b" }],
    ["the text \\u0000 (JSON writes its backslash as two)", { title: "see \\u0000 here" }],
    ["a backslash at the end and u0000 in the next string", { a: "x\\", b: "u0000" }],
    ["other control characters", { a: "\u0001\u001f\n\t\"\\", b: ["\u007f", "\ud800", "\u2028"] }],
    ["undefined in a list", { a: [undefined, 1, "\u0000"] }],
    ["numbers, booleans, null", { a: -1.7976931348623157e308, b: 5e-324, c: true, d: null, e: [0, -0, 1e21] }],
    ["a deep value", { deep }],
    ["a plain entry", makeEntry("b".repeat(40))],
  ])("%s: what JSON.stringify shows", (_name, value) => {
    const json = JSON.stringify(value);
    const facts = jsonFacts(value);
    expect(facts.nul).toBe(json.includes("\\u0000"));
    expect(facts.maxLength).toBeGreaterThanOrEqual(json.length);
  });

  test("an entry whose JSON is over the cap is refused, one just under it is not", async () => {
    const sized = (n: number) => {
      const e = makeEntry("c".repeat(40), { conversationSnippet: "" });
      return { ...e, conversationSnippet: "x".repeat(n - JSON.stringify(e).length) };
    };
    expect(JSON.stringify(sized(MAX_ENTRY_BYTES)).length).toBe(MAX_ENTRY_BYTES);
    const opts = { nowMs: Date.parse("2026-01-02T00:00:00.000Z"), redact: false };
    expect(await checkEntry(sized(MAX_ENTRY_BYTES), opts)).toHaveProperty("row");
    expect(await checkEntry(sized(MAX_ENTRY_BYTES + 1), opts)).toEqual({ reason: "the entry is larger than 4 MiB" });
    // escaped characters count as JSON writes them
    const quotes = sized(MAX_ENTRY_BYTES - 1);
    quotes.conversationSnippet = `${quotes.conversationSnippet.slice(2)}""`;
    expect(await checkEntry(quotes, opts)).toEqual({ reason: "the entry is larger than 4 MiB" });
  });
});

describe("batch cuts", () => {
  test.each([
    ["small entries: one transaction", [row(2, 1000), row(2, 1000), row(2, 1000)], [3]],
    ["file rows over 1,000 start a new one", [row(600, 10), row(600, 10), row(100, 10)], [1, 2]],
    ["text over 256 KiB starts a new one", [row(1, 200_000), row(1, 100_000), row(1, 10)], [1, 2]],
    ["an entry larger than a transaction goes alone", [row(1000, 10), row(1, 300_000), row(1, 10)], [1, 1, 1]],
  ])("%s", (_name, rows, sizes) => {
    expect(writeChunks(rows, CHUNK_CHARS.holding).map((c) => c.length)).toEqual(sizes);
  });

  test("listedFiles counts each entry's changed files up to 1,000, ignoring what is not a list", () => {
    expect(listedFiles([{ changedFiles: ["a", "b"] }, { changedFiles: Array(5000).fill("x") }, { changedFiles: "a" }, null, 7])).toBe(1002);
  });
});

describe("the server's redaction pass", () => {
  /** The delta as the server redacted it a line at a time before its lines were scanned together. */
  function lineByLine(snippet: string): string {
    return snippet
      .split("\n")
      .map((line) => {
        if (line === "") return line;
        let rec: unknown;
        try {
          rec = JSON.parse(line);
        } catch {
          return redactValueForWrite(line);
        }
        const out = JSON.stringify(redactValueForWrite(rec));
        return out === JSON.stringify(rec) ? line : out;
      })
      .join("\n");
  }

  const transcripts = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const p = join(dir, name);
      return statSync(p).isDirectory() ? transcripts(p) : p.endsWith(".jsonl") ? [p] : [];
    });

  test("stores every real transcript in the fixtures, as delta, as redacting it line by line stores it", async () => {
    const token = "ghp_0123456789abcdefABCDEF0123456789abcd";
    const files = transcripts(join(import.meta.dir, "..", "fixtures", "claude-code"));
    expect(files.length).toBeGreaterThan(10);
    const differ: string[] = [];
    for (const [i, f] of files.entries()) {
      // the file as it is, with a secret added to every third, and with a line that is not JSON
      let snippet = readFileSync(f, "utf8").slice(0, 400_000);
      if (i % 3 === 0) snippet += `${JSON.stringify({ role: "user", content: `use ${token} now` })}\nnot json /home/alice/x\n`;
      const e = makeEntry("a".repeat(40), { conversationSnippet: snippet, intent: `see /Users/bob/a and ${token}` });
      const r = await checkEntry(e, { nowMs: Date.now() });
      if (!("row" in r)) {
        differ.push(`${f}: ${r.reason}`);
        continue;
      }
      const want = lineByLine(snippet);
      if (r.row.conversation !== want) differ.push(f);
      const lines = conversationLines(want);
      const search = [e.title, "see ~/a and <REDACTED:github-pat>", e.alternatives, e.diffSummary, lines.map((l) => l.content).join("\n")].join("\n");
      if (r.row.searchText !== search.slice(0, 200_000)) differ.push(`${f}: search text`);
      if (r.row.hasUser !== lines.some((l) => l.role === "user")) differ.push(`${f}: first request`);
      expect(r.row.conversation).not.toContain(token);
      expect(JSON.parse(r.row.summary).intent).toBe("see ~/a and <REDACTED:github-pat>");
    }
    expect(differ).toEqual([]);
  }, 300_000);
});
