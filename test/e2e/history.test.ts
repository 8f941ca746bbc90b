import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { binary, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { convo, makeEntry, writeTimeline } from "../timeline-fixture.ts";

let repo: TempRepo;
const h: Record<string, string> = {};

/** A small project: two sessions, a group of two, a bugfix in src/, docs in docs/. */
beforeAll(() => {
  binary();
  repo = tempRepo();
  h.ko = repo.commit("Add Korean keys", { "docs/guide/ko.md": "안녕\n" });
  h.en = repo.commit("Add English and Chinese", { "docs/guide/en.md": "hi\n", "docs/guide/zh.md": "你好\n" });
  h.fix = repo.commit("Guard empty config", { "src/config.ts": "export {}\n" });
  h.plain = repo.commit("Manual tweak", { "src/other.ts": "x\n" });
  const s1 = "3f2a9c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b";
  const s2 = "9d8c7b6a-0000-1111-2222-333344445555";
  writeTimeline(repo.root, repo.env, {
    entries: [
      makeEntry({
        commitHash: h.ko!,
        title: "Add Korean keys for the Getting Started guide",
        claudeSessionId: s1,
        capturedAt: "2026-11-29T10:14:00.000Z",
        changedFiles: ["docs/guide/ko.md"],
        intent: "Readers asked for a guide in Korean.",
        diffSummary: "- docs/guide/ko.md: new page",
        conversationSnippet: convo(["user", "Make a Getting Started guide page"], ["assistant", "I wrote the Korean page."]),
      }),
      makeEntry({
        commitHash: h.en!,
        title: "Add English and Chinese translations",
        claudeSessionId: s1,
        groupRootId: h.ko!,
        continuation: true,
        capturedAt: "2026-11-29T10:39:00.000Z",
        changedFiles: ["docs/guide/en.md", "docs/guide/zh.md"],
        alternatives: "Machine translation at build time: rejected, quality.",
        conversationSnippet: convo(["user", "Add English and Chinese too"], ["assistant", "Added both translations."]),
      }),
      makeEntry({
        commitHash: h.fix!,
        title: "Guard against an empty config file",
        tag: "BUGFIX",
        agentType: "CODEX",
        claudeSessionId: s2,
        branch: "fix/config",
        capturedAt: "2026-12-03T08:00:00.000Z",
        changedFiles: ["src/config.ts"],
        intent: "Startup crashed on an empty aiflare.yml.",
        conversationSnippet: convo(["user", "The app crashes when the config is empty"], ["assistant", "Guarded the parser."]),
      }),
    ],
    sessions: { [s1]: convo(["user", "Getting Started guide in three languages"], ["assistant", "Sure."]) },
  });
});
afterAll(() => repo.cleanup());

const run = (...args: string[]) => runBin(args, { cwd: repo.root, env: repo.env });
const listJson = async (...args: string[]) => {
  const r = await run("history", "list", "--json", ...args);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as { commitHash: string }[]).map((e) => e.commitHash);
};

describe("history list", () => {
  test("plain output when piped: sessions newest first, group nested, prompts", async () => {
    const r = await run("history", "list");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        'Session 9d8c7b6a · "The app crashes when the config is empty" · Codex · 2026-12-03 08:00',
        `● ${h.fix!.slice(0, 7)}  BUGFIX   Guard against an empty config file                 08:00`,
        '     💬 "The app crashes when the config is empty"',
        "",
        'Session 3f2a9c1e · "Getting Started guide in three languages" · Claude Code · 2026-11-29 10:14–10:39',
        `● ${h.ko!.slice(0, 7)}  FEATURE  Add Korean keys for the Getting Started guide      10:14`,
        '     💬 "Make a Getting Started guide page"',
        `  └ ${h.en!.slice(0, 7)}  FEATURE  Add English and Chinese translations             10:39`,
        '     💬 "Add English and Chinese too"',
        "",
      ].join("\n"),
    );
    expect(r.stdout).not.toContain("\x1b[");
  });

  test("FORCE_COLOR colours it even when piped", async () => {
    const r = await runBin(["history", "list"], { cwd: repo.root, env: { ...repo.env, NO_COLOR: "", FORCE_COLOR: "1" } });
    expect(r.stdout).toContain("\x1b[31mBUGFIX");
  });

  test("--json prints entry objects with the SPEC fields, newest first", async () => {
    const r = await run("history", "list", "--json");
    const arr = JSON.parse(r.stdout) as Record<string, unknown>[];
    expect(arr.map((e) => e.commitHash)).toEqual([h.fix, h.en, h.ko]);
    expect(Object.keys(arr[1]!).sort()).toEqual(
      [
        "commitHash", "title", "intent", "alternatives", "diffSummary", "tag", "changedFiles", "agentType",
        "claudeSessionId", "branch", "conversationSnippet", "continuation", "groupRootId", "capturedAt",
      ].sort(),
    );
    expect(arr[1]).toMatchObject({ groupRootId: h.ko, continuation: true, changedFiles: ["docs/guide/en.md", "docs/guide/zh.md"] });
    // written entry by entry as it is read, yet exactly what JSON.stringify of the whole array prints
    expect(r.stdout).toBe(`${JSON.stringify(arr, null, 2)}\n`);
    const none = await run("history", "list", "--json", "--grep", "nothingmatchesthis");
    expect(none.stdout).toBe("[]\n");
  });

  const filters: [string, string[], () => string[]][] = [
    ["--tag", ["--tag", "bugfix"], () => [h.fix!]],
    ["--tag several", ["--tag", "BUGFIX,feature"], () => [h.fix!, h.en!, h.ko!]],
    ["--session prefix", ["--session", "3f2a9c1e"], () => [h.en!, h.ko!]],
    ["--session full id", ["--session", "9d8c7b6a-0000-1111-2222-333344445555"], () => [h.fix!]],
    ["--file a file", ["--file", "docs/guide/zh.md"], () => [h.en!]],
    ["--file a directory", ["--file", "docs"], () => [h.en!, h.ko!]],
    ["--file a directory with a slash", ["--file", "docs/guide/"], () => [h.en!, h.ko!]],
    ["--file is not a prefix match", ["--file", "doc"], () => []],
    ["--grep in conversation", ["--grep", "crashes"], () => [h.fix!]],
    ["--grep in intent, word prefix", ["--grep", "Korea"], () => [h.ko!]],
    ["--grep in alternatives", ["--grep", "machine translation"], () => [h.en!]],
    ["--grep every word must match", ["--grep", "translation crashes"], () => []],
    ["--since a date", ["--since", "2026-12-01"], () => [h.fix!]],
    ["--until a date includes the day", ["--until", "2026-11-29"], () => [h.en!, h.ko!]],
    ["--since a time", ["--since", "2026-11-29 10:30"], () => [h.fix!, h.en!]],
    ["--limit", ["--limit", "2"], () => [h.fix!, h.en!]],
    ["combined", ["--tag", "feature", "--file", "docs", "--limit", "1"], () => [h.en!]],
  ];
  for (const [name, args, want] of filters) {
    test(`filter ${name}`, async () => expect(await listJson(...args)).toEqual(want()));
  }

  test("--since 7d is relative to now", async () => {
    expect(await listJson("--until", "100000d")).toEqual([]);
    expect(await listJson("--since", "100000 days ago")).toHaveLength(3);
  });

  test("--file is relative to the current directory, like a git pathspec", async () => {
    const r = await runBin(["history", "list", "--json", "--file", "zh.md"], { cwd: join(repo.root, "docs/guide"), env: repo.env });
    expect((JSON.parse(r.stdout) as { commitHash: string }[]).map((e) => e.commitHash)).toEqual([h.en!]);
  });

  test("bare `history` lists, with filters", async () => {
    const r = await run("history", "--tag", "BUGFIX");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Guard against an empty config file");
    expect(r.stdout).not.toContain("Korean");
  });

  test("no match says so", async () => {
    const r = await run("history", "list", "--grep", "nothingmatcheshere");
    expect(r).toMatchObject({ code: 0, stdout: "No entries match (3 recorded). Try fewer filters.\n" });
  });

  test("bad flags are errors that say what to do", async () => {
    const r = await run("history", "list", "--since", "soon");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('aiflare history list: cannot read --since "soon"');
    const t = await run("history", "list", "--tag", "CHORE");
    expect(t.stderr).toContain("Use one or more of: FEATURE, BUGFIX, REFACTORING, TEST, DOCS");
  });
});

describe("history show", () => {
  test("the whole entry, its group and the conversation turn by turn", async () => {
    const r = await run("history", "show", h.en!.slice(0, 7));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        `commit ${h.en}`,
        "Title     Add English and Chinese translations",
        "Tag       FEATURE",
        "Branch    main",
        "Session   3f2a9c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b · Claude Code",
        "Captured  2026-11-29 10:39",
        'Request   "Make a Getting Started guide page"',
        "Group     2 entries",
        `          ● ${h.ko!.slice(0, 7)}  Add Korean keys for the Getting Started guide`,
        `          └ ${h.en!.slice(0, 7)}  Add English and Chinese translations  ← this entry`,
        "          follows an answer to the agent's question",
        "",
        "Intent",
        "    Problem → Solution → Effect",
        "",
        "Alternatives",
        "    Machine translation at build time: rejected, quality.",
        "",
        "Diff summary",
        "    - file.txt: changed",
        "",
        "Changed files (2)",
        "    docs/guide/en.md",
        "    docs/guide/zh.md",
        "",
        "Conversation",
        "  User",
        "    Add English and Chinese too",
        "  Assistant",
        "    Added both translations.",
        "",
      ].join("\n"),
    );
  });

  test("accepts git revisions and prints JSON", async () => {
    const r = await run("history", "show", "HEAD~1", "--json");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ commitHash: h.fix, tag: "BUGFIX", branch: "fix/config" });
  });

  test("a commit without an entry, and an unknown commit", async () => {
    const none = await run("history", "show", "HEAD");
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`Commit ${h.plain!.slice(0, 10)} has no aiflare entry`);
    const unknown = await run("history", "show", "nosuchref");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No commit or entry "nosuchref"');
  });
});

describe("on a terminal", () => {
  // `script` gives the command a pseudo-terminal (24 rows when it cannot tell).
  const onTty = (args: string, extra: Record<string, string>) => {
    const r = Bun.spawnSync(["script", "-qec", `${binary()} ${args}`, "/dev/null"], {
      cwd: repo.root,
      env: { ...repo.env, NO_COLOR: "", PAGER: "sed s/^/PAGED:/", ...extra },
    });
    return r.stdout.toString().replace(/\r\n/g, "\n");
  };
  const hasScript = Bun.spawnSync(["sh", "-c", "command -v script"]).exitCode === 0;

  test.skipIf(!hasScript)("colour, and the pager only when the output is taller than the screen", () => {
    const long = onTty(`history show ${h.en}`, {});
    expect(long).toStartWith("PAGED:\x1b[33mcommit");
    expect(long.split("\n").filter((l) => l && !l.startsWith("PAGED:"))).toEqual([]);
    const short = onTty("history list --tag BUGFIX", {});
    expect(short).toContain("\x1b[31mBUGFIX");
    expect(short).not.toContain("PAGED:");
    expect(onTty(`history show ${h.en} --no-pager`, {})).not.toContain("PAGED:");
    expect(onTty(`history show ${h.en}`, { NO_COLOR: "1" })).not.toContain("\x1b[");
  });
});

describe("the index", () => {
  const commonDir = () => join(repo.root, ".git");
  const indexFile = () => join(commonDir(), "aiflare", "index.sqlite");

  test("is rebuilt silently after deletion, garbage and an old schema", async () => {
    const before = (await run("history", "list")).stdout;
    rmSync(indexFile(), { force: true });
    let r = await run("history", "list");
    expect(r).toMatchObject({ code: 0, stdout: before, stderr: "" });

    rmSync(`${indexFile()}-wal`, { force: true });
    rmSync(`${indexFile()}-shm`, { force: true });
    writeFileSync(indexFile(), "this is not a database ".repeat(500));
    r = await run("history", "list");
    expect(r).toMatchObject({ code: 0, stdout: before, stderr: "" });

    const db = new Database(indexFile());
    db.run("DELETE FROM entries");
    db.run("PRAGMA user_version = 1");
    db.close();
    r = await run("history", "list");
    expect(r).toMatchObject({ code: 0, stdout: before, stderr: "" });
    expect(existsSync(indexFile())).toBe(true);
  });

  test("a linked worktree shares the index in the common git dir", async () => {
    const wt = join(repo.dir, "wt");
    repo.git("worktree", "add", "-q", "--detach", wt);
    const there = await runBin(["history", "list"], { cwd: wt, env: repo.env });
    expect(there).toMatchObject({ code: 0, stdout: (await run("history", "list")).stdout });
    expect(existsSync(join(wt, ".git", "aiflare"))).toBe(false);
    expect(existsSync(indexFile())).toBe(true);
    const why = await runBin(["why", "docs/guide/zh.md", "--json"], { cwd: wt, env: repo.env });
    expect(JSON.parse(why.stdout).commits[0].entry.commitHash).toBe(h.en);
  });

  test("a first import large enough to be read on a second thread lists and searches every entry", async () => {
    const big = tempRepo();
    try {
      const n = 2_100; // above THREAD_MIN_ENTRIES (src/store/index/rows-thread.ts)
      writeTimeline(big.root, big.env, {
        entries: Array.from({ length: n }, (_, i) =>
          makeEntry({
            commitHash: new Bun.CryptoHasher("sha1").update(`big-${i}`).digest("hex"),
            title: `Entry ${i}`,
            conversationSnippet: convo(["user", `question ${i} about topic${i % 10}`]),
          }),
        ),
      });
      const all = await runBin(["history", "list", "--limit", "0", "--json"], { cwd: big.root, env: big.env });
      expect(all).toMatchObject({ code: 0, stderr: "" });
      expect(JSON.parse(all.stdout)).toHaveLength(n);
      const found = await runBin(["history", "list", "--limit", "0", "--json", "--grep", "topic7"], { cwd: big.root, env: big.env });
      expect(JSON.parse(found.stdout)).toHaveLength(n / 10);
      // built under a private name, then linked into place: nothing else is left beside it
      expect(readdirSync(join(big.root, ".git", "aiflare")).filter((f) => f.startsWith("index.sqlite"))).toEqual(["index.sqlite"]);
    } finally {
      big.cleanup();
    }
  }, 60_000);

  test("parallel processes creating it at once all succeed with the same answer", async () => {
    rmSync(indexFile(), { force: true });
    const runs = await Promise.all(Array.from({ length: 6 }, () => run("history", "list", "--json")));
    for (const r of runs) expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(new Set(runs.map((r) => r.stdout)).size).toBe(1);
    expect(JSON.parse(runs[0]!.stdout)).toHaveLength(3);
  });
});

describe("updates", () => {
  test("new entries show up, and parallel readers and writers never fail", async () => {
    const other = tempRepo();
    try {
      const runIn = (...args: string[]) => runBin(args, { cwd: other.root, env: other.env });
      let n = 0;
      const add = (k: number) => {
        const entries = Array.from({ length: k }, () => {
          const i = n++;
          return makeEntry({
            commitHash: new Bun.CryptoHasher("sha1").update(`e${i}`).digest("hex"),
            title: `Step ${i}`,
            claudeSessionId: `s-${i % 3}`,
            capturedAt: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
          });
        });
        writeTimeline(other.root, other.env, { entries });
      };
      add(5);
      expect(JSON.parse((await runIn("history", "list", "--json")).stdout)).toHaveLength(5);
      add(1);
      const after = JSON.parse((await runIn("history", "list", "--json")).stdout) as { title: string }[];
      expect(after.map((e) => e.title)[0]).toBe("Step 5");
      // Readers race with a writer that keeps moving the tip.
      const readers: Promise<{ code: number; stderr: string }>[] = [];
      for (let round = 0; round < 4; round++) {
        add(3);
        for (let i = 0; i < 3; i++) readers.push(runIn("history", "list", "--json"));
      }
      for (const r of await Promise.all(readers)) expect(r).toMatchObject({ code: 0, stderr: "" });
      expect(JSON.parse((await runIn("history", "list", "--json")).stdout)).toHaveLength(18);
    } finally {
      other.cleanup();
    }
  });

  test("text shows the newest 100 and says how many more there are; JSON shows all", async () => {
    const big = tempRepo();
    try {
      const entries = Array.from({ length: 103 }, (_, i) =>
        makeEntry({
          commitHash: new Bun.CryptoHasher("sha1").update(`big${i}`).digest("hex"),
          title: `Entry ${i}`,
          capturedAt: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
        }),
      );
      writeTimeline(big.root, big.env, { entries });
      const at = (...args: string[]) => runBin(args, { cwd: big.root, env: big.env });
      const text = (await at("history", "list")).stdout;
      expect(text.match(/^[●└ ]+[0-9a-f]{7} /gm)).toHaveLength(100);
      expect(text).toContain("Entry 102");
      expect(text).not.toContain("Entry 2 ");
      expect(text).toEndWith("\n… 3 older entries not shown: --limit 0 shows all; --since, --grep or --file narrow them.\n");
      const all = (await at("history", "list", "--limit", "0")).stdout;
      expect(all.match(/^[●└ ]+[0-9a-f]{7} /gm)).toHaveLength(103);
      expect(all).not.toContain("not shown");
      expect(JSON.parse((await at("history", "list", "--json")).stdout)).toHaveLength(103);
    } finally {
      big.cleanup();
    }
  });

  test("an empty repository and a directory outside git", async () => {
    const empty = tempRepo();
    try {
      const r = await runBin(["history", "list"], { cwd: empty.root, env: empty.env });
      expect(r.stdout).toStartWith("No aiflare entries yet.");
      expect((await runBin(["history", "list", "--json"], { cwd: empty.root, env: empty.env })).stdout).toBe("[]\n");
      const out = await runBin(["history", "list"], { cwd: empty.home, env: empty.env });
      expect(out.code).toBe(1);
      expect(out.stderr).toContain("is not inside a git repository");
    } finally {
      empty.cleanup();
    }
  });
});
