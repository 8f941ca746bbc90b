/** The timeline tells the truth in the terminal: one order of commits, honest tags, consistent arguments. */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { binary, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import type { Page } from "playwright-core";
import { launchBrowser, startUi, type RunningUi } from "../dashboard-support.ts";
import { agentCommit, session, showEntry } from "./capture-support.ts";

// a browser and an `aiflare ui` per page test take seconds on a loaded machine
setDefaultTimeout(60_000);
import { convo, makeEntry, writeTimeline } from "../timeline-fixture.ts";

/** Runs `fn` on the dashboard of `aiflare ui` over `repo`, in headless Chromium, once its timeline is shown. */
async function onDashboard(repo: TempRepo, fn: (page: Page, ui: RunningUi) => Promise<void>): Promise<void> {
  const ui = await startUi(repo.root, repo.env);
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    await page.goto(ui.url);
    await page.waitForSelector("body[data-ready='1'] .session-card");
    await fn(page, ui);
  } finally {
    await browser.close();
    await ui.stop();
  }
}

describe("one order of commits (committedAt, recordedAt, commit hash)", () => {
  let repo: TempRepo;
  /** five commits of one second, in the order they were made */
  let made: string[];
  beforeAll(() => {
    binary();
    repo = tempRepo();
    const hashes = Array.from({ length: 5 }, (_, i) => repo.commit(`part ${i}`));
    // recorded in descending hash order, each more than a second after the commit (a late capture or an import):
    // neither the hash nor the order the index happens to read them in gives the commit order
    made = [...hashes].sort().reverse();
    writeTimeline(repo.root, repo.env, {
      entries: made.map((commitHash, i) =>
        makeEntry({
          commitHash,
          title: `Part ${i}`,
          groupRootId: i === 0 ? null : made[0]!,
          committedAt: "2026-11-29T10:00:00.000Z",
          recordedAt: `2026-11-29T10:00:0${2 + i}.000Z`,
          capturedAt: "2026-11-29T10:30:00.000Z",
          conversationSnippet: i === 0 ? convo(["user", "do it in five parts"]) : convo(["assistant", `part ${i}`]),
        }),
      ),
    });
  });
  afterAll(() => repo.cleanup());

  test("history list --json: newest first by recordedAt within the second", async () => {
    const r = await runBin(["history", "list", "--json"], { cwd: repo.root, env: repo.env });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { commitHash: string }[]).map((e) => e.commitHash)).toEqual([...made].reverse());
  });

  test("history list: the group in commit order under its root; history show lists the group the same way", async () => {
    const r = await runBin(["history", "list"], { cwd: repo.root, env: repo.env });
    expect(r.code).toBe(0);
    const titles = r.stdout.split("\n").flatMap((l) => /Part \d/.exec(l)?.[0] ?? []);
    expect(titles).toEqual(["Part 0", "Part 1", "Part 2", "Part 3", "Part 4"]);
    const show = await runBin(["history", "show", made[0]!], { cwd: repo.root, env: repo.env });
    expect(show.code).toBe(0);
    expect(show.stdout.split("\n").flatMap((l) => /Part \d/.exec(l)?.[0] ?? [])).toEqual(["Part 0", "Part 0", "Part 1", "Part 2", "Part 3", "Part 4"]);
  });

  test("the dashboard page shows the group in the same order (headless Chromium over aiflare ui)", async () => {
    await onDashboard(repo, async (page) => {
      const titles = await page.locator(".session-card .title").allTextContents();
      expect(titles.filter((t) => /^Part \d$/.test(t))).toEqual(["Part 0", "Part 1", "Part 2", "Part 3", "Part 4"]);
    });
  });
});

describe("arguments: the same rules in every command and in the MCP tools", () => {
  let repo: TempRepo;
  let commits: string[];
  beforeAll(() => {
    binary();
    repo = tempRepo();
    commits = Array.from({ length: 4 }, (_, i) => repo.commit(`change ${i}`, { [`src/f${i}.ts`]: `${i}\n` }));
    writeTimeline(repo.root, repo.env, {
      entries: commits.map((commitHash, i) =>
        makeEntry({
          commitHash,
          title: `Change ${i}`,
          tag: i % 2 ? "BUGFIX" : "FEATURE",
          changedFiles: [`src/f${i}.ts`],
          claudeSessionId: `session-${i}`,
          committedAt: `2026-11-2${i}T10:00:00.000Z`,
        }),
      ),
    });
  });
  afterAll(() => repo.cleanup());
  const run = (...args: string[]) => runBin(args, { cwd: repo.root, env: repo.env });

  test("a bad --tag is a one-line usage error with exit 2, in history list and capture alike", async () => {
    for (const args of [["history", "list", "--tag", "CHORE"], ["capture", "--commit-hash", "HEAD", "--tag", "chore"]]) {
      const r = await run(...args);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain(`aiflare ${args.slice(0, args[0] === "history" ? 2 : 1).join(" ")}: `);
      expect(r.stderr).toMatch(/chore/i);
    }
    // any case is a tag
    const ok = await run("history", "list", "--tag", "bugfix", "--json");
    expect(ok.code).toBe(0);
    expect((JSON.parse(ok.stdout) as { commitHash: string }[]).map((e) => e.commitHash)).toEqual([commits[3]!, commits[1]!]);
  });

  test("--since after --until is an error, not an empty answer", async () => {
    const r = await run("history", "list", "--since", "2026-11-23", "--until", "2026-11-21");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--since");
    expect(r.stderr).toContain("--until");
    expect(r.stdout).toBe("");
  });

  test("--limit says how many more entries there are", async () => {
    const r = await run("history", "list", "--limit", "1");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Change 3");
    expect(r.stdout).not.toContain("Change 2");
    expect(r.stdout).toContain("3 older entries not shown");
    const all = await run("history", "list", "--limit", "4");
    expect(all.stdout).not.toContain("not shown");
  });

  test("MCP tools take what the CLI takes: a tag in any case or a list; a missing file is an error in both", async () => {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    const client = new Client({ name: "aiflare-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: binary(), args: ["mcp"], cwd: repo.root, env: repo.env, stderr: "pipe" }));
    type Text = { content: { text: string }[]; isError?: boolean };
    const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as Text;
    const hashes = (res: Text) => (JSON.parse(res.content[0]!.text) as { entries: { commitHash: string }[] }).entries.map((e) => e.commitHash);
    try {
      expect(hashes(await call("search_history", { tag: "bugfix" }))).toEqual([commits[3]!, commits[1]!]);
      expect(hashes(await call("search_history", { tag: "Feature,BUGFIX" }))).toEqual([...commits].reverse());
      expect(hashes(await call("search_history", { since: "2026-11-21", until: "2026-11-22" }))).toEqual([commits[2]!, commits[1]!]);
      const bad = await call("search_history", { tag: "chore" });
      expect(bad.isError).toBe(true);
      expect(bad.content[0]!.text).toContain("Unknown tag");
      const missing = await call("why", { file: "src/nowhere.ts" });
      expect(missing.isError).toBe(true);
      expect(missing.content[0]!.text).toContain("no such file");
    } finally {
      await client.close();
    }
    for (const args of [["why", "src/nowhere.ts"], ["why", "src/nowhere.ts", "--json"]]) {
      const cli = await run(...args);
      expect({ args, code: cli.code, stdout: cli.stdout }).toEqual({ args, code: 1, stdout: "" });
      expect(cli.stderr).toContain("no such file");
    }
  });
});

describe("entries without a written why claim no kind of work", () => {
  let repo: TempRepo;
  const h: Record<string, string> = {};
  beforeAll(async () => {
    binary();
    repo = tempRepo();
    const s = session(repo, "sess-tags");
    await s.prompt("make the four changes");
    const commits: [string, string, Record<string, string>][] = [
      ["button", "Add a button", { "src/button.ts": "button();\n" }],
      ["fix", "fix: guard an empty config", { "src/config.ts": "guard();\n" }],
      ["tests", "Cover the parser", { "test/parser.test.ts": "it();\n" }],
      ["docs", "Explain the setup", { "docs/setup.md": "# Setup\n", "README.md": "# x\n" }],
    ];
    for (const [name, message, files] of commits) {
      const c = agentCommit(repo, message, files);
      h[name] = c.hash;
      await s.bash(`git commit -m '${message}'`, c.stdout);
    }
  });
  afterAll(() => repo.cleanup());

  test("the commit hook takes the tag from the commit's prefix or its files, else leaves the entry untagged", () => {
    const tags = Object.fromEntries(Object.entries(h).map(([name, hash]) => [name, showEntry(repo, hash)?.tag]));
    expect(tags).toEqual({ button: null, fix: "BUGFIX", tests: "TEST", docs: "DOCS" });
    expect(showEntry(repo, h.button!)?.summaryStatus).toBe("pending");
  });

  test("the dashboard page badges an untagged entry as untagged and counts it apart", async () => {
    await onDashboard(repo, async (page, ui) => {
      const stats = (await (await fetch(`${ui.origin}/api/v1/stats?days=3660`, { headers: { Authorization: `Bearer ${ui.token}` } })).json()) as { perTag: Record<string, number> };
      expect(stats.perTag).toEqual({ UNTAGGED: 1, BUGFIX: 1, TEST: 1, DOCS: 1 });
      const badges = await page.locator(".session-card .tag").allTextContents();
      expect(badges.sort()).toEqual(["BUGFIX", "DOCS", "TEST", "untagged"]);
    });
  });

  test("history list, show and why say untagged and give the exact capture command for the missing why", async () => {
    const run = (...args: string[]) => runBin(args, { cwd: repo.root, env: repo.env });
    const list = await run("history", "list");
    expect(list.code).toBe(0);
    const buttonLine = list.stdout.split("\n").find((l) => l.includes("Add a button"))!;
    expect(buttonLine).toContain("untagged");
    expect(buttonLine).not.toContain("FEATURE");
    expect(list.stdout).toContain(`4 entries shown have no why recorded; record the newest: aiflare capture --commit-hash ${h.docs} --tag DOCS --intent`);
    const show = await run("history", "show", h.button!.slice(0, 8));
    expect(show.stdout).toMatch(/Tag\s+untagged/);
    expect(show.stdout).toContain(`aiflare capture --commit-hash ${h.button} --tag <FEATURE|BUGFIX|REFACTORING|TEST|DOCS> --intent`);
    const why = await run("why", "src/config.ts");
    expect(why.stdout).toContain("BUGFIX");
    expect(why.stdout).toContain(`No why recorded; record it: aiflare capture --commit-hash ${h.fix} --tag BUGFIX --intent`);
    // once the agent writes it, the entry has its tag and the hint goes
    const done = await run("capture", "--commit-hash", h.button!, "--tag", "feature", "--intent", "Users asked for a button.");
    expect(done.code).toBe(0);
    expect(showEntry(repo, h.button!)?.tag).toBe("FEATURE");
    const after = await run("why", "src/button.ts");
    expect(after.stdout).not.toContain("No why recorded");
  });
});
