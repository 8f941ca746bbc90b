/**
 * How a batch is cut into transactions does not change what is stored: a batch of 100 entries of a few KB (with
 * duplicates or refused entries, older captures of stored entries, secrets, entries the server groups) stores the
 * same as the same entries sent one at a time, on SQLite (several transactions) and on PostgreSQL (one, its first
 * entries written while the rest are checked, or one written step by step as its entries are checked).
 */
import { describe, expect, test } from "bun:test";
import { createProject } from "../../src/server/admin.ts";
import type { EntryRow, Storage } from "../../src/server/storage.ts";
import { ingest } from "../../src/server/write.ts";
import type { Entry } from "../../src/store/entry.ts";
import { makeEntry } from "../sync-fixtures.ts";
import { hash, useBackends, type Backend } from "./backends.ts";

const BACKENDS = useBackends();
const line = (role: string, content: string) => `${JSON.stringify({ role, content })}\n`;
const words = "the parser keeps the offsets of every token so that an error points at its column ";
const at = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * 3_600_000).toISOString();
const TOKEN = `ghp_${"a1B2c3D4e5".repeat(3)}abcdef`;

/** Entry `n` of the batch: about 9 KB of text once stored; every third one grouped by the server. */
function entry(n: number, over: Partial<Entry> = {}): Entry {
  const e = makeEntry(hash(`batch ${n}`), {
    title: `Change ${n}`,
    claudeSessionId: `session-${n % 7}`,
    changedFiles: [`src/mod${n % 5}/file${n}.ts`, `test/mod${n % 5}.test.ts`],
    committedAt: at(n),
    capturedAt: at(n),
    continuation: n % 4 === 1,
    conversationSnippet: Array.from({ length: 6 }, (_, k) => line(k % 2 || n % 3 === 2 ? "assistant" : "user", `${n} ${k} ${words.repeat(7)}`)).join(""),
    ...over,
  });
  if (n % 3 === 0) delete (e as Partial<Entry>).groupRootId;
  return e;
}

/** The entry naming its group (`groupRootId` null when `entry` left it to the server), as aiflare sends entries. */
const withItsGroup = (e: Entry): Entry => ({ ...e, groupRootId: e.groupRootId ?? null });

/** `storage` with its putEntries calls counted, and its streamed writes with the size of each chunk they took. */
function counted(storage: Storage): { storage: Storage; calls: () => number; streams: number[][] } {
  let calls = 0;
  const streams: number[][] = [];
  const proxy = new Proxy(storage, {
    get(target, prop, receiver) {
      if (prop === "putEntries") return (...args: Parameters<Storage["putEntries"]>) => (calls++, target.putEntries(...args));
      if (prop === "putEntriesStreamed" && target.putEntriesStreamed) {
        return (projectId: string, chunks: AsyncIterable<EntryRow[]>, trustUntilMs: number) => {
          const sizes: number[] = [];
          streams.push(sizes);
          async function* seen() {
            for await (const chunk of chunks) {
              sizes.push(chunk.length);
              yield chunk;
            }
          }
          return target.putEntriesStreamed!(projectId, seen(), trustUntilMs);
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
  return { storage: proxy, calls: () => calls, streams };
}

/** Everything the read side can see of a project's entries. */
async function stored(storage: Storage, projectId: string, hashes: string[]) {
  const entries = (await storage.entriesByHashes(projectId, hashes)).sort((a, b) => (a.commitHash < b.commitHash ? -1 : 1));
  const ids = async (q: Parameters<Storage["timeline"]>[1]) => (await storage.timeline(projectId, q)).map((e) => e.commitHash);
  return {
    entries,
    groups: await Promise.all(entries.map(async (e) => (await storage.group(projectId, e.groupRootId ?? e.commitHash)).map((m) => m.commitHash))),
    timeline: await ids({ limit: 500 }),
    byFile: await ids({ limit: 500, file: "src/mod2" }),
    bySearch: await ids({ limit: 500, words: ["offsets", "parser"] }),
    stats: await storage.stats(projectId, 0),
    sessions: await storage.sessionFacts(projectId, [...Array(7).keys()].map((i) => `session-${i}`)),
  };
}

/** The batch stored whole (its putEntries calls counted) and the same entries stored one at a time. */
async function bothWays(backend: Backend, batch: Entry[], before: Entry[]) {
  const hashes = [...new Set(batch.map((e) => e.commitHash))];
  const sides = [];
  for (const oneAtATime of [false, true]) {
    const db = await backend.fresh();
    const { storage, calls, streams } = counted(await db.open());
    const { project } = await createProject(storage, "demo");
    const opts = { nowMs: Date.parse(at(200)), keyOwner: "ada" };
    await ingest(storage, project.id, before, opts);
    const already = calls();
    const streamedBefore = streams.length;
    const results = [];
    for (const part of oneAtATime ? batch.map((e) => [e]) : [batch]) results.push(await ingest(storage, project.id, part, opts));
    sides.push({ calls: calls() - already, streams: streams.slice(streamedBefore), results, stored: await stored(storage, project.id, hashes) });
    await storage.close();
  }
  const [whole, single] = sides;
  expect(whole!.stored).toEqual(single!.stored);
  return { answer: whole!.results[0]!, calls: whole!.calls, streams: whole!.streams, stored: whole!.stored, hashes };
}

for (const backend of BACKENDS) {
  describe(`${backend.name}: a batch's transactions`, () => {
    test("a batch of 100 with a commit sent twice stores what its entries sent one at a time store; PostgreSQL writes it in one transaction", async () => {
      const batch = Array.from({ length: 100 }, (_, n) => entry(n));
      // the same commit twice: a newer capture later in the batch wins, an older one later loses
      batch[40] = entry(10, { title: "Change 10, captured again", capturedAt: at(11) });
      batch[41] = entry(20, { title: "Change 20, an older capture", capturedAt: at(19) });
      // a secret an older client let through, and an older capture of an entry the server holds in a newer one
      batch[50] = entry(50, { conversationSnippet: line("user", `use ${TOKEN} for the API`) });
      batch[60] = entry(60, { title: "Change 60, older" });
      const { answer, calls, stored, hashes } = await bothWays(backend, batch, [entry(60, { title: "Change 60, newer", capturedAt: at(90) })]);
      // what the batch answered: every commit but the one the server holds newer
      expect(answer.rejected).toEqual([]);
      expect(answer.conflicts.map((c) => c.index)).toEqual([60]);
      expect(answer.commits).toEqual(hashes.filter((h) => h !== hash("batch 60")));
      expect(stored.entries).toHaveLength(98);
      const byHash = new Map(stored.entries.map((e) => [e.commitHash, e]));
      expect(JSON.parse(byHash.get(hash("batch 10"))!.summary).title).toBe("Change 10, captured again");
      expect(JSON.parse(byHash.get(hash("batch 20"))!.summary).title).toBe("Change 20");
      expect(JSON.parse(byHash.get(hash("batch 60"))!.summary).title).toBe("Change 60, newer");
      expect(byHash.get(hash("batch 50"))!.conversation).not.toContain(TOKEN);
      expect(stored.stats.entries).toBe(98);
      // the text is about 900 KB: several transactions where one holds the event loop, one on PostgreSQL
      if (backend.name === "postgres") expect(calls).toBe(1);
      else expect(calls).toBeGreaterThan(1);
    });

    test("a batch of 100 written while it is checked stores what its entries sent one at a time store, answers in batch order", async () => {
      const batch = Array.from({ length: 100 }, (_, n) => entry(n));
      // refused, an older capture of a stored entry and a secret, both among the first entries and among the rest
      batch[3] = { ...entry(3), claudeSessionId: "../escape" };
      batch[5] = entry(5, { title: "Change 5, older" });
      batch[7] = entry(7, { conversationSnippet: line("user", `use ${TOKEN} for the API`) });
      batch[63] = { ...entry(63), capturedAt: "yesterday" };
      batch[65] = entry(65, { title: "Change 65, older" });
      batch[77] = entry(77, { conversationSnippet: line("user", `use ${TOKEN} for the API`) });
      const newer = [entry(5, { title: "Change 5, newer", capturedAt: at(90) }), entry(65, { title: "Change 65, newer", capturedAt: at(90) })];
      const { answer, calls, stored, hashes } = await bothWays(backend, batch, newer);
      expect(answer.rejected.map((r) => r.index)).toEqual([3, 63]);
      expect(answer.conflicts.map((c) => c.index)).toEqual([5, 65]);
      const lost = new Set([3, 5, 63, 65].map((n) => hash(`batch ${n}`)));
      expect(answer.commits).toEqual(hashes.filter((h) => !lost.has(h)));
      expect(stored.entries).toHaveLength(98);
      for (const e of stored.entries) expect(e.conversation).not.toContain(TOKEN);
      expect(stored.stats.entries).toBe(98);
      // on PostgreSQL the first 10 entries are written while the other 90 are checked, then those
      if (backend.name === "postgres") expect(calls).toBe(2);
      else expect(calls).toBeGreaterThan(1);
    });

    test("a batch whose entries all name their group is written as it is checked: the same as one at a time, answered in batch order", async () => {
      // every entry with its group (as aiflare sends them), in no order of their hashes
      const withGroup = (n: number, over: Partial<Entry> = {}) => withItsGroup(entry(n, over));
      const batch = Array.from({ length: 100 }, (_, n) => withGroup((n * 37) % 100));
      batch[2] = { ...withGroup(74), claudeSessionId: "../escape" };
      batch[9] = withGroup(33, { title: "Change 33, older" });
      batch[40] = withGroup(80, { conversationSnippet: line("user", `use ${TOKEN} for the API`) });
      batch[71] = { ...withGroup(27), capturedAt: "yesterday" };
      batch[88] = withGroup(56, { title: "Change 56, older" });
      const newer = [withGroup(33, { title: "Change 33, newer", capturedAt: at(90) }), withGroup(56, { title: "Change 56, newer", capturedAt: at(90) })];
      const { answer, calls, streams, stored, hashes } = await bothWays(backend, batch, newer);
      expect(answer.rejected.map((r) => r.index)).toEqual([2, 71]);
      expect(answer.conflicts.map((c) => [c.index, c.commitHash])).toEqual([
        [9, hash("batch 33")],
        [88, hash("batch 56")],
      ]);
      const lost = new Set([74, 33, 27, 56].map((n) => hash(`batch ${n}`)));
      expect(answer.commits).toEqual(hashes.filter((h) => !lost.has(h)));
      expect(stored.entries).toHaveLength(98);
      for (const e of stored.entries) expect(e.conversation).not.toContain(TOKEN);
      if (backend.name === "postgres") {
        // one transaction, its rows handed over in steps of 5, 10, 20, 40 and the rest, less the two refused
        expect(calls).toBe(0);
        expect(streams).toHaveLength(1);
        expect(streams[0]!.reduce((a, b) => a + b, 0)).toBe(98);
        expect(streams[0]!.length).toBe(5);
      } else expect(streams).toEqual([]);
    });

    test("a streamed batch larger than one transaction holds ends its stream there and writes the rest as usual", async () => {
      // about 4 MB of text once stored: more than one PostgreSQL transaction takes (2 MB)
      const big = (n: number) =>
        withItsGroup(entry(n, { conversationSnippet: Array.from({ length: 8 }, (_, k) => line("user", `${n} ${k} ${words.repeat(50)}`)).join("") }));
      const batch = Array.from({ length: 100 }, (_, n) => big(n));
      const { answer, calls, streams, stored, hashes } = await bothWays(backend, batch, []);
      expect(answer.rejected).toEqual([]);
      expect(answer.conflicts).toEqual([]);
      expect(answer.commits).toEqual(hashes);
      expect(stored.entries).toHaveLength(100);
      if (backend.name === "postgres") {
        expect(streams).toHaveLength(1);
        const streamedRows = streams[0]!.reduce((a, b) => a + b, 0);
        expect(streamedRows).toBeGreaterThan(0);
        expect(streamedRows).toBeLessThan(100);
        expect(calls).toBeGreaterThan(0);
      }
    });
  });
}
