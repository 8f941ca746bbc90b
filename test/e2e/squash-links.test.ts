/**
 * The why survives squash and rebase merges: agent commits recorded through the hooks on a branch, the branch
 * landed on main by `git merge --squash` (or by cherry-picks, as a rebase-merge does), deleted and its commits
 * garbage-collected; `why` and `history show` on main still show the parts' intents.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { binary, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { agentCommit, capture, fsckClean, session, showEntry } from "./capture-support.ts";
import { answerLocalApi } from "../../src/core/dashboard/api.ts";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { newProject, useServe } from "./serve-support.ts";
import { launchBrowser, startUi } from "../dashboard-support.ts";

const { tempDir, serve } = useServe();

/** Three agent commits on a branch: a module, a second function, and a fix to the first function's line. */
async function agentBranch(repo: TempRepo, branch: string, sessionId: string): Promise<string[]> {
  repo.git("checkout", "-q", "-b", branch);
  const s = session(repo, sessionId);
  const steps: [string, Record<string, string>, string][] = [
    [
      "feat: parse the price list",
      { "src/prices.ts": "export function parsePrices(text: string) {\n  return text.split('\\n').map(Number);\n}\n" },
      "Prices arrive as one number per line; parse them into numbers for the cart.",
    ],
    [
      "feat: total of the prices",
      {
        "src/prices.ts":
          "export function parsePrices(text: string) {\n  return text.split('\\n').map(Number);\n}\n\nexport function totalOf(prices: number[]) {\n  return prices.reduce((a, b) => a + b, 0);\n}\n",
      },
      "The checkout needs the sum of the cart's prices.",
    ],
    [
      "fix: skip blank price lines",
      {
        "src/prices.ts":
          "export function parsePrices(text: string) {\n  return text.split('\\n').filter((l) => l.trim() !== '').map(Number);\n}\n\nexport function totalOf(prices: number[]) {\n  return prices.reduce((a, b) => a + b, 0);\n}\n",
      },
      "A trailing newline made a NaN price: blank lines are skipped now.",
    ],
  ];
  const hashes: string[] = [];
  for (const [message, files, intent] of steps) {
    await s.prompt(`please: ${message}`);
    const { hash, stdout } = agentCommit(repo, message, files);
    await s.bash(`git add -A && git commit -m "${message}"`, stdout);
    const done = await capture(repo, ["--commit-hash", hash, "--intent", intent, "--title", message.slice(0, 50)], {
      CLAUDE_SESSION_ID: sessionId,
    });
    expect(done.code).toBe(0);
    hashes.push(hash);
  }
  return hashes;
}

/** Deletes the branch and every trace of its commits. */
function forget(repo: TempRepo, branch: string, commits: string[]): void {
  repo.git("branch", "-D", branch);
  repo.git("reflog", "expire", "--expire=now", "--all");
  repo.git("gc", "--prune=now", "--quiet");
  for (const c of commits) expect(repo.tryGit("cat-file", "-e", `${c}^{commit}`).code).not.toBe(0);
}

/** Squash-merges `branch` into main as one commit titled `message`, then forgets the branch; the squash's hash. */
function squashAndForget(repo: TempRepo, branch: string, parts: string[], message: string): string {
  repo.git("checkout", "-q", "main");
  repo.git("merge", "--squash", branch);
  repo.git("commit", "-q", "-m", message);
  const squash = repo.git("rev-parse", "HEAD");
  forget(repo, branch, parts);
  return squash;
}

const why = async (repo: TempRepo, target: string) => {
  const r = await runBin(["why", target, "--json"], { cwd: repo.root, env: repo.env });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as { commits: Record<string, any>[] };
};

describe("squash merge", () => {
  let repo: TempRepo;
  let parts: string[];
  let squash: string;

  beforeAll(async () => {
    binary();
    repo = tempRepo();
    parts = await agentBranch(repo, "agent/prices", "sess-squash-1");
    // every entry carries its change's fingerprint
    for (const h of parts) {
      const fp = showEntry(repo, h)!.fingerprint;
      expect(fp.patchId).toMatch(/^[0-9a-f]{40}$/);
      expect(fp.files[0].path).toBe("src/prices.ts");
    }
    squash = squashAndForget(repo, "agent/prices", parts, "Prices (#12)");
  });
  afterAll(() => repo.cleanup());

  test("why on each line names the part that wrote it", async () => {
    const expectations: [number, number][] = [
      [1, 0], // the function's first line: the first commit
      [2, 2], // its body, rewritten by the fix
      [5, 1], // totalOf: the second commit
      [6, 1],
    ];
    for (const [line, part] of expectations) {
      const out = await why(repo, `src/prices.ts:${line}`);
      const c = out.commits[0]!;
      expect(c.commitHash).toBe(squash);
      expect(c.entry).toBeNull();
      expect(c.link.method).toBe("squash");
      expect(c.parts.map((p: any) => p.commitHash)).toEqual(parts);
      expect(c.partsForLines).toEqual([parts[part]]);
    }
  });

  test("the text view says where the lines come from", async () => {
    const r = await runBin(["why", "src/prices.ts:2"], { cwd: repo.root, env: { ...repo.env, NO_COLOR: "1" } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`via squash ${squash.slice(0, 7)} of 3 agent commits`);
    expect(r.stdout).toContain("A trailing newline made a NaN price");
    expect(r.stdout).not.toContain("The checkout needs the sum");
    const file = await runBin(["why", "src/prices.ts"], { cwd: repo.root, env: { ...repo.env, NO_COLOR: "1" } });
    expect(file.stdout).toContain("Prices arrive as one number per line");
    expect(file.stdout).toContain("The checkout needs the sum");
  });

  test("history show of the squash lists its parts; the link is on the timeline branch", async () => {
    const r = await runBin(["history", "show", squash.slice(0, 10)], { cwd: repo.root, env: { ...repo.env, NO_COLOR: "1" } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("via squash");
    for (const text of ["Prices arrive as one number", "The checkout needs the sum", "A trailing newline made a NaN"]) {
      expect(r.stdout).toContain(text);
    }
    // computed once, however often it is shown
    const linkWrites = repo.git("log", "--format=%B", "aiflare/timeline/v1").split("\n").filter((l) => l === `Link: ${squash}`);
    expect(linkWrites).toHaveLength(1);
    const link = JSON.parse(repo.git("show", `aiflare/timeline/v1:links/${squash.slice(0, 2)}/${squash.slice(2)}.json`));
    expect(link.parts.map((p: any) => p.commitHash)).toEqual(parts);
    expect(link.coverage).toBe(1);
    expect(fsckClean(repo)).toBe(true);
  });

  test("the dashboard's read API answers the squash's entry page with its parts, and the file view with where they landed", async () => {
    const api = (path: string) => answerLocalApi(new URL(`http://127.0.0.1/api/v1/${path}`), { root: repo.root, commonDir: `${repo.root}/.git` });
    const page = (await (await api(`entries/${squash.slice(0, 10)}`))!.json()) as any;
    expect(page.entry).toBeNull();
    expect(page.commitHash).toBe(squash);
    expect(page.link.method).toBe("squash");
    expect(page.parts.map((p: any) => p.intent)).toEqual([
      "Prices arrive as one number per line; parse them into numbers for the cart.",
      "The checkout needs the sum of the cart's prices.",
      "A trailing newline made a NaN price: blank lines are skipped now.",
    ]);
    const files = (await (await api("files?path=src/prices.ts"))!.json()) as any;
    expect(files.landedIn[parts[0]!]).toBe(squash);
  });

  test("sync sends the link: the team server's entry page of the squash shows the parts", async () => {
    const home = tempDir();
    const db = join(home, "db.sqlite");
    const key = await newProject(db, home);
    const server = await serve(db, home);
    const env = { ...repo.env, AIFLARE_ENDPOINT: server.url, AIFLARE_API_KEY: key };
    const r = await runBin(["sync"], { cwd: repo.root, env });
    expect(r.code).toBe(0);
    const page = (await (await fetch(`${server.url}/api/v1/entries/${squash.slice(0, 10)}`, { headers: { "x-api-key": key } })).json()) as any;
    expect(page.entry).toBeNull();
    expect(page.link.parts.map((p: any) => p.commitHash)).toEqual(parts);
    expect(page.parts.map((p: any) => p.commitHash)).toEqual(parts);
  });

  test("aiflare ui in a browser: the squash's page shows each part with its intent", async () => {
    const ui = await startUi(repo.root, repo.env);
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(ui.url);
      await page.waitForSelector("body[data-ready='1']");
      await page.evaluate((h) => {
        (globalThis as any).location.hash = `#/entry/${h}`;
      }, squash);
      await page.waitForSelector("article.entry.linked .part");
      const text = await page.$eval("article.entry.linked", (el) => (el as any).innerText as string);
      expect(text).toContain(`Commit ${squash.slice(0, 7)}`);
      expect(text).toContain("a squash of 3 agent commits");
      for (const t of ["feat: parse the price list", "Prices arrive as one number per line", "A trailing newline made a NaN price"]) {
        expect(text).toContain(t);
      }
    } finally {
      await browser.close();
      await ui.stop();
    }
  });

  test("a human's commit with no entry is not given an agent's why", async () => {
    repo.commit("tune rounding", { "src/round.ts": "export const roundTo = (n: number, d: number) => Number(n.toFixed(d));\n" });
    const out = await why(repo, "src/round.ts:1");
    expect(out.commits[0]!.entry).toBeNull();
    expect(out.commits[0]!.parts).toBeUndefined();
    // the miss is remembered and the timeline is not written for it
    expect(repo.tryGit("log", "--format=%s", "aiflare/timeline/v1").stdout).not.toContain(out.commits[0]!.commitHash.slice(0, 12));
  });
});

describe("rebase merge", () => {
  let repo: TempRepo;
  let parts: string[];

  beforeAll(async () => {
    binary();
    repo = tempRepo();
    parts = await agentBranch(repo, "agent/rebase", "sess-rebase-1");
    repo.git("checkout", "-q", "main");
    // main moved on meanwhile, so the copies are new commits with the same patches
    repo.commit("docs: readme", { "README.md": "# test\n\nPrices.\n" });
    for (const p of parts) repo.git("cherry-pick", p);
    forget(repo, "agent/rebase", parts);
  });
  afterAll(() => repo.cleanup());

  test("each copy is matched to its original by patch id", async () => {
    const copies = repo.git("rev-list", "--max-count=3", "--reverse", "main").split("\n");
    for (let i = 0; i < 3; i++) {
      const r = await runBin(["history", "show", copies[i]!, "--json"], { cwd: repo.root, env: repo.env });
      expect(r.code).toBe(0);
      const shown = JSON.parse(r.stdout);
      expect(shown.link.method).toBe("patch-id");
      expect(shown.parts.map((p: any) => p.commitHash)).toEqual([parts[i]]);
    }
    const text = await runBin(["why", "src/prices.ts:5"], { cwd: repo.root, env: { ...repo.env, NO_COLOR: "1" } });
    expect(text.stdout).toContain("same patch");
    expect(text.stdout).toContain("The checkout needs the sum");
  });
});

describe("links computed when landed commits arrive, without a why", () => {
  const linkOnBranch = (repo: TempRepo, hash: string) => {
    const r = repo.tryGit("show", `aiflare/timeline/v1:links/${hash.slice(0, 2)}/${hash.slice(2)}.json`);
    return r.code === 0 ? JSON.parse(r.stdout) : null;
  };

  test("git pull --rebase over a commit of one's own: the post-rewrite hook links the squash it rebased onto", async () => {
    binary();
    const repo = tempRepo();
    try {
      const origin = join(repo.dir, "origin.git");
      repo.git("init", "-q", "--bare", "-b", "main", origin);
      repo.git("remote", "add", "origin", origin);
      repo.git("push", "-q", "origin", "main");
      const parts = await agentBranch(repo, "agent/prices", "sess-landed-1");
      repo.git("push", "-q", "origin", "agent/prices");
      // the forge squash-merges the pull request on its side
      const forge = join(repo.dir, "forge");
      repo.git("clone", "-q", origin, forge);
      const inForge = (...args: string[]) => Bun.spawnSync(["git", ...args], { cwd: forge, env: repo.env });
      expect(inForge("merge", "--squash", "origin/agent/prices").exitCode).toBe(0);
      expect(inForge("commit", "-q", "-m", "Prices (#7)").exitCode).toBe(0);
      expect(inForge("push", "-q", "origin", "main").exitCode).toBe(0);
      const squash = inForge("rev-parse", "HEAD").stdout.toString().trim();
      const { gitHookText } = await import("../../src/core/install/templates.ts");
      writeFileSync(join(repo.root, ".git", "hooks", "post-rewrite"), gitHookText("post-rewrite", `'${binary()}'`), { mode: 0o755 });
      repo.git("checkout", "-q", "main");
      repo.commit("docs: contributing", { "CONTRIBUTING.md": "Open a pull request.\n" });
      const pull = Bun.spawnSync(["git", "pull", "-q", "--rebase", "origin", "main"], { cwd: repo.root, env: repo.env });
      expect(pull.exitCode).toBe(0);
      expect(repo.git("rev-parse", "HEAD~1")).toBe(squash);
      const link = linkOnBranch(repo, squash);
      expect(link?.method).toBe("squash");
      expect(link?.parts.map((p: any) => p.commitHash)).toEqual(parts);
      // a plain branch switch links nothing and stays quiet
      const back = Bun.spawnSync(["git", "checkout", "-q", "agent/prices"], { cwd: repo.root, env: repo.env });
      expect([back.exitCode, back.stderr.toString()]).toEqual([0, ""]);
    } finally {
      repo.cleanup();
    }
  });

  test("the bounds: a pass links no more commits than allowed and starts none after its time; the rest waits", async () => {
    const repo = tempRepo();
    try {
      const parts = await agentBranch(repo, "agent/prices", "sess-landed-3");
      const squash = squashAndForget(repo, "agent/prices", parts, "Prices (#9)");
      const { linkLandedCommits } = await import("../../src/core/links/landed.ts");
      const paths = { root: repo.root, gitDir: join(repo.root, ".git"), commonDir: join(repo.root, ".git") };
      const none = await linkLandedCommits(paths, ["--first-parent", "HEAD"], { max: 0, budgetMs: 1000 });
      expect([none.looked, none.linked, none.deferred > 0]).toEqual([0, [], true]);
      let t = 0;
      const late = await linkLandedCommits(paths, ["--first-parent", "HEAD"], { max: 5, budgetMs: 1000, now: () => (t += 2000) });
      expect([late.looked, late.linked, late.deferred > 0]).toEqual([0, [], true]);
      expect(linkOnBranch(repo, squash)).toBeNull();
      const done = await linkLandedCommits(paths, ["--first-parent", "HEAD"], { max: 5, budgetMs: 60_000 });
      expect(done.linked).toEqual([squash]);
      expect(linkOnBranch(repo, squash)?.parts.map((p: any) => p.commitHash)).toEqual(parts);
      // computed once: a second pass looks at nothing (the link, and the base commit's miss, are remembered)
      const again = await linkLandedCommits(paths, ["--first-parent", "HEAD"], { max: 5, budgetMs: 60_000 });
      expect(again.looked).toBe(0);
    } finally {
      repo.cleanup();
    }
  });

  test("aiflare sync links a squash no view has shown yet, and sends the link", async () => {
    const repo = tempRepo();
    try {
      const parts = await agentBranch(repo, "agent/prices", "sess-landed-2");
      const squash = squashAndForget(repo, "agent/prices", parts, "Prices (#8)");
      expect(linkOnBranch(repo, squash)).toBeNull();
      const home = tempDir();
      const db = join(home, "db.sqlite");
      const key = await newProject(db, home);
      const server = await serve(db, home);
      const r = await runBin(["sync"], { cwd: repo.root, env: { ...repo.env, AIFLARE_ENDPOINT: server.url, AIFLARE_API_KEY: key } });
      expect(r.code).toBe(0);
      expect(linkOnBranch(repo, squash)?.parts.map((p: any) => p.commitHash)).toEqual(parts);
      const page = (await (await fetch(`${server.url}/api/v1/entries/${squash}`, { headers: { "x-api-key": key } })).json()) as any;
      expect(page.link.parts.map((p: any) => p.commitHash)).toEqual(parts);
    } finally {
      repo.cleanup();
    }
  });
});
