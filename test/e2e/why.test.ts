import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { binary, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { convo, makeEntry, writeTimeline } from "../timeline-fixture.ts";

let repo: TempRepo;
const c: string[] = [];

/** app.ts gets 8 commits; it is renamed from old.ts; lines 1-2 never change after the first commit. */
beforeAll(() => {
  binary();
  repo = tempRepo();
  let text = "line 1\nline 2\n";
  c.push(repo.commit("create old.ts", { "src/old.ts": text }));
  repo.git("mv", "src/old.ts", "src/app.ts");
  repo.git("commit", "-q", "-m", "rename to app.ts");
  c.push(repo.git("rev-parse", "HEAD"));
  for (let i = 3; i <= 8; i++) {
    text += `line ${i}\n`;
    c.push(repo.commit(`add line ${i}`, { "src/app.ts": text }));
  }
  c.push(repo.commit("unrelated", { "README.md": "other\n" }));
  writeTimeline(repo.root, repo.env, {
    entries: [
      makeEntry({
        commitHash: c[0]!,
        title: "Start the app module",
        intent: "We need a module to hold the app.",
        alternatives: "- one big file: rejected",
        capturedAt: "2026-11-20T09:00:00.000Z",
        conversationSnippet: convo(["user", "Create the app module"], ["assistant", "Done"]),
      }),
      makeEntry({
        commitHash: c[7]!,
        title: "Add line 8",
        tag: "REFACTORING",
        intent: "Line 8 completes the set.",
        capturedAt: "2026-11-21T09:00:00.000Z",
        conversationSnippet: convo(["user", "Add the eighth line"]),
      }),
    ],
  });
});
afterAll(() => repo.cleanup());

const why = (...args: string[]) => runBin(["why", ...args], { cwd: repo.root, env: repo.env });

describe("why", () => {
  test("a file: newest first, 5 by default, across the rename", async () => {
    const r = await why("src/app.ts");
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe("src/app.ts · 5 most recent of 8 commits");
    expect(lines[2]).toBe(`● ${c[7]!.slice(0, 7)}  REFACTORING  Add line 8`);
    expect(r.stdout).toContain("    Line 8 completes the set.");
    expect(r.stdout).toContain('  💬 "Add the eighth line"');
    expect(r.stdout).toContain(`○ ${c[6]!.slice(0, 7)}  add line 7  (Test Author, `);
    expect(r.stdout).toContain("no aiflare entry");
    expect(r.stdout).not.toContain(c[2]!.slice(0, 7));
  });

  test("--limit 0 shows all, through the rename to the first commit", async () => {
    const r = await why("src/app.ts", "--limit", "0", "--json");
    const out = JSON.parse(r.stdout) as { total: number; commits: { commitHash: string; entry: { title: string } | null }[] };
    expect(out.total).toBe(8);
    expect(out.commits.map((x) => x.commitHash)).toEqual([...c.slice(0, 8)].reverse());
    expect(out.commits[7]!.entry?.title).toBe("Start the app module");
  });

  test("lines: git's line history finds the commit that wrote them, even before the rename", async () => {
    const r = await why("src/app.ts:1-2");
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")[0]).toBe("src/app.ts:1-2 · 1 commit");
    expect(r.stdout).toContain("Start the app module");
    expect(r.stdout).toContain("    We need a module to hold the app.");
    expect(r.stdout).toContain("  Alternatives\n    - one big file: rejected");
    expect(r.stdout).toContain('  💬 "Create the app module"');
  });

  test("one line, JSON", async () => {
    const r = await why("src/app.ts:8", "--json");
    expect(JSON.parse(r.stdout)).toMatchObject({
      file: "src/app.ts",
      lines: { start: 8, end: 8 },
      total: 1,
      commits: [{ commitHash: c[7], subject: "add line 8", author: "Test Author", entry: { title: "Add line 8" } }],
    });
  });

  test("--limit caps and says so", async () => {
    const r = await why("src/app.ts:3-8", "--limit", "2");
    expect(r.stdout.split("\n")[0]).toBe("src/app.ts:3-8 · 2 most recent of 6 commits");
  });

  test("errors and empty answers", async () => {
    const past = await why("src/app.ts:50-60");
    expect(past.code).toBe(1);
    expect(past.stderr).toContain("git log could not follow src/app.ts:50-60");
    const missing = await why("never-existed.txt");
    expect(missing).toMatchObject({ code: 1, stdout: "" });
    expect(missing.stderr).toContain("never-existed.txt: no such file, here or in git's history");
    // a file that exists but was never committed: an empty answer, not an error
    writeFileSync(join(repo.root, "scratch.txt"), "draft\n");
    const none = await why("scratch.txt");
    expect(none).toMatchObject({ code: 0, stdout: "No commit touched scratch.txt.\n" });
    const bad = await why("src/app.ts:9-3");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("Bad line range");
  });
});

describe("why on a file with many recorded commits", () => {
  let hot: TempRepo;
  const h: string[] = [];
  let side = "";
  beforeAll(() => {
    hot = tempRepo();
    let clock = 1_800_000_000;
    const tick = () => {
      clock += 100;
      hot.env.GIT_AUTHOR_DATE = hot.env.GIT_COMMITTER_DATE = `${clock} +0000`;
    };
    for (let i = 1; i <= 7; i++) {
      tick();
      h.push(hot.commit(`agent change ${i}`, { "src/hot.ts": `v${i}\n` }));
    }
    // a commit on another branch that changed the file: git log on HEAD does not list it, the index does
    hot.git("checkout", "-q", "-b", "side");
    tick();
    side = hot.commit("side change", { "src/hot.ts": "side\n" });
    hot.git("checkout", "-q", "main");
    tick();
    h.push(hot.commit("human change", { "src/hot.ts": "v8\n" }));
    const at = (hash: string) => new Date(Number(hot.git("show", "-s", "--format=%ct", hash)) * 1000).toISOString();
    writeTimeline(hot.root, hot.env, {
      entries: [...h.slice(0, 7), side].map((hash, i) =>
        makeEntry({ commitHash: hash, title: `Recorded ${i + 1}`, changedFiles: ["src/hot.ts"], capturedAt: at(hash), committedAt: at(hash) }),
      ),
    });
  });
  afterAll(() => hot.cleanup());

  test("shows the newest five from the index and git together, and says older ones may exist", async () => {
    const r = await runBin(["why", "src/hot.ts", "--json"], { cwd: hot.root, env: hot.env });
    const out = JSON.parse(r.stdout) as { complete: boolean; commits: { commitHash: string; entry: { title: string } | null }[] };
    expect(out.complete).toBe(false);
    expect(out.commits).toHaveLength(5);
    expect(out.commits[0]!.commitHash).toBe(h[7]!); // the human commit: only git knows it
    expect(out.commits[0]!.entry).toBeNull();
    expect(out.commits.map((c) => c.commitHash)).toContain(side); // only the index knows it
    const text = await runBin(["why", "src/hot.ts"], { cwd: hot.root, env: hot.env });
    expect(text.stdout.split("\n")[0]).toBe("src/hot.ts · 5 most recent commits (--limit 0 for all)");
  });

  test("--limit 0 asks git for the whole history, with the recorded commits of other branches", async () => {
    const r = await runBin(["why", "src/hot.ts", "--limit", "0", "--json"], { cwd: hot.root, env: hot.env });
    const out = JSON.parse(r.stdout) as { complete: boolean; total: number };
    expect(out).toMatchObject({ complete: true, total: 9 });
  });
});
