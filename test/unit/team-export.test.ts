/** The Agent Trace record's parts and the team cache, without a process. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addedRanges, modelId, recordId } from "../../src/core/export/agent-trace.ts";
import { MISS_TTL_MS, cachedTeamEntries, recordPull, storeTeamAnswer, teamCandidates, withTeamCache } from "../../src/store/team-cache.ts";
import { makeEntry } from "../sync-fixtures.ts";

const hash = (s: string) => new Bun.CryptoHasher("sha1").update(s).digest("hex");

describe("Agent Trace pieces", () => {
  test("added ranges: per new file path, hunks that add lines, deletions and removed files left out", () => {
    const patch = [
      "diff --git a/src/a.ts b/src/a.ts",
      "--- a/src/a.ts",
      "+++ b/src/a.ts",
      "@@ -3,0 +4,2 @@",
      "+x",
      "+y",
      "@@ -10,2 +12,0 @@",
      "-gone",
      "-gone",
      "@@ -20 +20 @@",
      "-old",
      "+new",
      "diff --git a/old.txt b/old.txt",
      "--- a/old.txt",
      "+++ /dev/null",
      "@@ -1,3 +0,0 @@",
      "diff --git a/only-removed.ts b/only-removed.ts",
      "--- a/only-removed.ts",
      "+++ b/only-removed.ts",
      "@@ -5,1 +4,0 @@",
      "-z",
    ].join("\n");
    expect([...addedRanges(patch)]).toEqual([["src/a.ts", [{ start_line: 4, end_line: 5 }, { start_line: 20, end_line: 20 }]]]);
  });

  test.each([
    ["claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"],
    ["gpt-5-codex", "openai/gpt-5-codex"],
    ["o3", "openai/o3"],
    ["gemini-2.5-pro", "google/gemini-2.5-pro"],
    ["anthropic/claude-opus-4-5", "anthropic/claude-opus-4-5"],
    ["local-model", "local-model"],
    [undefined, undefined],
  ])("model id %p → %p", (model, id) => {
    expect(modelId(model)).toBe(id);
  });

  test("record ids are UUIDs, stable per commit and distinct between commits", () => {
    const a = recordId(hash("a"));
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(recordId(hash("a"))).toBe(a);
    expect(recordId(hash("b"))).not.toBe(a);
  });
});

describe("team cache", () => {
  test("keeps entries per backend, remembers misses for a while, a pull forgets them", () => {
    const dir = mkdtempSync(join(tmpdir(), "aiflare-team-"));
    try {
      const [a, b] = [hash("a"), hash("b")];
      const t0 = Date.parse("2026-01-01T00:00:00Z");
      withTeamCache(dir, (db) => {
        storeTeamAnswer(db, "srv1 p", [makeEntry(a, { title: "A", changedFiles: ["src/x.ts"], committedAt: "2026-01-01T00:00:00Z" })], [b], t0);
        const hit = cachedTeamEntries(db, "srv1 p", [a, b], t0 + 1000);
        expect(hit.found.get(a)?.title).toBe("A");
        expect([...hit.misses]).toEqual([b]);
        // another backend or project knows nothing of it
        expect(cachedTeamEntries(db, "srv2 p", [a], t0).found.size).toBe(0);
        // a miss is asked again once old
        expect(cachedTeamEntries(db, "srv1 p", [b], t0 + MISS_TTL_MS + 1).misses.size).toBe(0);
        recordPull(db, "srv1 p", 1, t0 + 2000);
        expect(cachedTeamEntries(db, "srv1 p", [b], t0 + 3000).misses.size).toBe(0);
        // candidates of a squash: entries that changed one of its paths in the window
        const t = Date.parse("2026-01-01T00:00:00Z");
        expect(teamCandidates(db, "srv1 p", ["src/x.ts"], t - 1, t + 1, "", 10).map((c) => c.commitHash)).toEqual([a]);
        expect(teamCandidates(db, "srv1 p", ["src/y.ts"], t - 1, t + 1, "", 10)).toEqual([]);
        expect(teamCandidates(db, "srv1 p", ["src/x.ts"], t - 1, t + 1, a, 10)).toEqual([]);
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
