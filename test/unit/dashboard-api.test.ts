/** The local read API over a timeline built with git plumbing: paging, filters, sessions' cuts, stats, errors. */
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { answerLocalApi } from "../../src/core/dashboard/api.ts";
import { tempRepo, type TempRepo } from "../helpers.ts";
import { convo, fakeHash, makeEntry, writeTimeline } from "../timeline-fixture.ts";

let repos: TempRepo[] = [];
afterEach(() => {
  for (const r of repos) r.cleanup();
  repos = [];
});

const NOW = new Date(Date.UTC(2026, 10, 30, 12));

function setup(entries: ReturnType<typeof makeEntry>[], sessions: Record<string, string> = {}) {
  const repo = tempRepo();
  repos.push(repo);
  writeTimeline(repo.root, repo.env, { entries, sessions });
  const paths = { root: repo.root, commonDir: join(repo.root, ".git") };
  return async (path: string) => {
    const res = (await answerLocalApi(new URL(`http://127.0.0.1${path}`), paths, NOW))!;
    return { status: res.status, body: (await res.json()) as any };
  };
}

describe("local read API", () => {
  test("timeline pages with an opaque cursor through entries that share a timestamp, none lost or repeated", async () => {
    const entries = Array.from({ length: 12 }, (_, i) =>
      makeEntry({
        commitHash: fakeHash(i),
        title: `Entry ${i}`,
        // seven entries captured in the same millisecond, in the middle of the range
        capturedAt: new Date(Date.UTC(2026, 10, 29, 10, i < 3 ? i : i < 10 ? 5 : i)).toISOString(),
        claudeSessionId: `s-${i % 3}`,
      }),
    );
    const api = setup(entries);
    const all = (await api("/api/v1/timeline?limit=100")).body.entries.map((e: any) => e.commitHash);
    expect(all).toHaveLength(12);
    const seen: string[] = [];
    let cursor: string | null = "";
    let pages = 0;
    while (cursor !== null) {
      const r = await api(`/api/v1/timeline?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(r.status).toBe(200);
      seen.push(...r.body.entries.map((e: any) => e.commitHash));
      for (const e of r.body.entries) expect(Object.keys(r.body.sessions)).toContain(e.claudeSessionId);
      cursor = r.body.nextCursor;
      pages++;
    }
    expect(pages).toBe(4);
    expect(seen).toEqual(all);
    expect((await api("/api/v1/timeline?cursor=nonsense")).status).toBe(400);
  });

  test("summaries leave out the conversation and carry the group id; filters combine", async () => {
    const api = setup([
      makeEntry({ commitHash: fakeHash(1), tag: "BUGFIX", branch: "main", conversationSnippet: convo(["user", "fix it"]) }),
      makeEntry({ commitHash: fakeHash(2), tag: "FEATURE", branch: "dev", groupRootId: fakeHash(1), changedFiles: ["src/a/b.ts"] }),
      makeEntry({ commitHash: fakeHash(3), tag: "DOCS", branch: "dev", title: "Explain the parser", changedFiles: ["docs/x.md"] }),
    ]);
    const r = await api("/api/v1/timeline?branch=dev&tag=FEATURE,DOCS");
    expect(r.body.entries.map((e: any) => e.commitHash).sort()).toEqual([fakeHash(2), fakeHash(3)].sort());
    const member = r.body.entries.find((e: any) => e.commitHash === fakeHash(2));
    expect(member.groupId).toBe(fakeHash(1));
    expect("conversationSnippet" in member).toBe(false);
    expect((await api("/api/v1/timeline?file=src/a")).body.entries.map((e: any) => e.commitHash)).toEqual([fakeHash(2)]);
    expect((await api("/api/v1/timeline?q=parser")).body.entries.map((e: any) => e.commitHash)).toEqual([fakeHash(3)]);
    expect((await api("/api/v1/timeline?tag=NOPE")).status).toBe(400);
    const entry = await api(`/api/v1/entries/${fakeHash(2).slice(0, 8)}`);
    expect(entry.body.entry.commitHash).toBe(fakeHash(2));
    expect(entry.body.group.map((e: any) => e.commitHash)).toEqual([fakeHash(1), fakeHash(2)]);
    expect((await api("/api/v1/entries/ffffffff")).status).toBe(404);
    expect((await api("/api/v1/entries/<script>")).status).toBe(400);
    expect((await api("/api/v1/files?path=docs/")).body).toMatchObject({ path: "docs", entries: [{ commitHash: fakeHash(3) }] });
    expect((await api("/api/v1/nothing")).status).toBe(404);
  });

  test("a session's transcript comes with the line after which each commit was cut", async () => {
    const t = (m: number) => new Date(Date.UTC(2026, 10, 29, 10, m)).toISOString();
    const api = setup(
      [
        makeEntry({ commitHash: fakeHash(1), claudeSessionId: "s1", capturedAt: t(1), conversationSnippet: convo(["user", "a"], ["assistant", "b"]) }),
        makeEntry({ commitHash: fakeHash(2), claudeSessionId: "s1", capturedAt: t(2), conversationSnippet: "", groupRootId: fakeHash(1) }),
        makeEntry({ commitHash: fakeHash(3), claudeSessionId: "s1", capturedAt: t(3), conversationSnippet: convo(["user", "c"]) }),
      ],
      { s1: convo(["user", "a"], ["assistant", "b"], ["user", "c"], ["assistant", "done"]) },
    );
    const r = await api("/api/v1/sessions/s1");
    expect(r.body.transcript.trim().split("\n")).toHaveLength(4);
    expect(r.body.entries.map((e: any) => e.commitHash)).toEqual([fakeHash(1), fakeHash(2), fakeHash(3)]);
    expect(r.body.cuts).toEqual([
      { commitHash: fakeHash(1), afterLine: 2 },
      { commitHash: fakeHash(2), afterLine: 2 },
      { commitHash: fakeHash(3), afterLine: 3 },
    ]);
    expect((await api("/api/v1/sessions/unknown")).status).toBe(404);
  });

  test("stats count entries per day and tag over the last days, and the most changed files", async () => {
    const api = setup([
      makeEntry({ commitHash: fakeHash(1), tag: "BUGFIX", capturedAt: "2026-11-30T09:00:00Z", changedFiles: ["a.ts", "b.ts"] }),
      makeEntry({ commitHash: fakeHash(2), tag: "BUGFIX", capturedAt: "2026-11-28T09:00:00Z", changedFiles: ["a.ts"], claudeSessionId: "s2" }),
      makeEntry({ commitHash: fakeHash(3), tag: "DOCS", capturedAt: "2026-10-01T09:00:00Z", changedFiles: ["old.md"] }),
    ]);
    const r = await api("/api/v1/stats?days=7");
    expect(r.body.entries).toBe(2);
    expect(r.body.sessions).toBe(2);
    expect(r.body.perTag).toEqual({ BUGFIX: 2 });
    expect(r.body.perDay).toHaveLength(7);
    expect(r.body.perDay.at(-1)).toEqual({ day: "2026-11-30", count: 1 });
    expect(r.body.perDay.find((d: any) => d.day === "2026-11-28").count).toBe(1);
    expect(r.body.topFiles).toEqual([
      { path: "a.ts", count: 2 },
      { path: "b.ts", count: 1 },
    ]);
    expect((await api("/api/v1/stats?days=0")).status).toBe(400);
  });
});
