/** The write path's pure parts: one write at a time per key, the transactions a batch is cut into, the file count. */
import { describe, expect, test } from "bun:test";
import { writeChunks } from "../../src/server/ingest.ts";
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

describe("batch cuts", () => {
  test.each([
    ["small entries: one transaction", [row(2, 1000), row(2, 1000), row(2, 1000)], [3]],
    ["file rows over 1,000 start a new one", [row(600, 10), row(600, 10), row(100, 10)], [1, 2]],
    ["text over 256 KiB starts a new one", [row(1, 200_000), row(1, 100_000), row(1, 10)], [1, 2]],
    ["an entry larger than a transaction goes alone", [row(1000, 10), row(1, 300_000), row(1, 10)], [1, 1, 1]],
  ])("%s", (_name, rows, sizes) => {
    expect(writeChunks(rows).map((c) => c.length)).toEqual(sizes);
  });

  test("listedFiles counts each entry's changed files up to 1,000, ignoring what is not a list", () => {
    expect(listedFiles([{ changedFiles: ["a", "b"] }, { changedFiles: Array(5000).fill("x") }, { changedFiles: "a" }, null, 7])).toBe(1002);
  });
});
