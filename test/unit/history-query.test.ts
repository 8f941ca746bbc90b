import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ftsQuery } from "../../src/core/history/filters.ts";
import { entriesForPath, entriesMatching, entriesOfSession, entryCommitsForPath, timelinePage } from "../../src/core/history/query.ts";
import { withIndex } from "../../src/store/index-db.ts";
import { tempRepo, type TempRepo } from "../helpers.ts";
import { convo, fakeHash, makeEntry, writeTimeline } from "../timeline-fixture.ts";

let repo: TempRepo | undefined;
afterEach(() => repo?.cleanup());

/** 7 entries, one a minute, alternating two sessions; each changes src/a/f<i>.ts, the even ones also docs/x.md. */
function setup() {
  repo = tempRepo();
  const entries = Array.from({ length: 7 }, (_, i) =>
    makeEntry({
      commitHash: fakeHash(i),
      title: `Entry ${i}`,
      claudeSessionId: i % 2 ? "session-odd" : "session-even",
      capturedAt: new Date(Date.UTC(2026, 10, 29, 10, i)).toISOString(),
      changedFiles: [`src/a/f${i}.ts`, ...(i % 2 ? [] : ["docs/x.md"])],
      conversationSnippet: convo(["user", i === 3 ? "make the parser-cache faster" : `request ${i}`]),
    }),
  );
  writeTimeline(repo.root, repo.env, { entries });
  return join(repo.root, ".git");
}

describe("the index's query functions", () => {
  test("timeline pages: newest first, a cursor to the next page, null after the last", async () => {
    const pages = await withIndex(setup(), (db) => {
      const seen: string[][] = [];
      let cursor: string | null = null;
      do {
        const page = timelinePage(db, { limit: 3 }, cursor);
        seen.push(page.entries.map((e) => e.title));
        cursor = page.nextCursor;
      } while (cursor);
      return seen;
    });
    expect(pages).toEqual([["Entry 6", "Entry 5", "Entry 4"], ["Entry 3", "Entry 2", "Entry 1"], ["Entry 0"]]);
  });

  test("by file, by directory, by session and by text", async () => {
    const r = await withIndex(setup(), (db) => ({
      file: entriesForPath(db, "docs/x.md").map((e) => e.title),
      dir: entriesForPath(db, "src/a/").length,
      notPrefix: entriesForPath(db, "src/a/f1").length,
      commits: entryCommitsForPath(db, "src/a/f2.ts").map((c) => c.commitHash),
      session: entriesOfSession(db, "session-o").map((e) => e.title),
      text: entriesMatching(db, ftsQuery("parser cache")!).map((e) => e.title),
    }));
    expect(r).toEqual({
      file: ["Entry 6", "Entry 4", "Entry 2", "Entry 0"],
      dir: 7,
      notPrefix: 0,
      commits: [fakeHash(2)],
      session: ["Entry 1", "Entry 3", "Entry 5"],
      text: ["Entry 3"],
    });
  });
});
