/**
 * A teammate's clone knows the team's why: developer A's agent commits on a branch and A syncs to a real
 * `aiflare serve`; the branch is merged and pushed; developer B clones fresh, configures the backend, and `why`
 * shows A's intents, looked up on the server, and after `aiflare pull` with the server stopped.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { binary, runBin, runHook, testEnv, tempRepo, type TempRepo } from "../helpers.ts";
import { agentCommit, capture, session, startTemplate } from "./capture-support.ts";
import { newProject, useServe } from "./serve-support.ts";
import { launchBrowser, showRoute, startUi } from "../dashboard-support.ts";

setDefaultTimeout(120_000);

/** The Agent Trace record schema as published (test/fixtures/agent-trace/SOURCE.md), compiled. */
function traceValidator() {
  const schema = JSON.parse(readFileSync(join(import.meta.dir, "..", "fixtures", "agent-trace", "trace-record.schema.json"), "utf8"));
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  return ajv.compile(schema);
}
beforeAll(() => {
  binary();
});
const { tempDir, serve } = useServe();

const git = (cwd: string, env: Record<string, string>, ...args: string[]) => {
  const r = Bun.spawnSync(["git", ...args], { cwd, env });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
};

/** Developer A: an agent session on branch `feature` with two requests, each committed and summarised. */
async function developerA(a: TempRepo) {
  a.git("checkout", "-q", "-b", "feature");
  const s = session(a, "sess-alice");
  await runHook(a, "session-start", { ...startTemplate, session_id: "sess-alice", cwd: a.root, source: "startup", model: "claude-sonnet-4-5" });
  await s.prompt("make the parser accept trailing commas");
  const one = agentCommit(a, "parser: trailing commas", { "src/parse.ts": "export function parse(text) {\n  return JSON.parse(text.replace(/,\\s*([}\\]])/g, '$1'));\n}\n" });
  await s.bash('git commit -m "parser: trailing commas"', one.stdout);
  expect((await capture(a, ["--commit-hash", one.hash, "--intent", "Problem: configs with trailing commas failed. Solution: strip them before parsing.", "--title", "Accept trailing commas", "--tag", "FEATURE"], { CLAUDE_CODE_SESSION_ID: "sess-alice" })).code).toBe(0);
  await s.stop("done");
  await s.prompt("log what failed to parse");
  const two = agentCommit(a, "parser: log failures", {
    "src/parse.ts": "export function parse(text) {\n  return JSON.parse(text.replace(/,\\s*([}\\]])/g, '$1'));\n}\nexport function report(err) {\n  console.error('parse failed', err);\n}\n",
  });
  await s.bash('git commit -m "parser: log failures"', two.stdout);
  expect((await capture(a, ["--commit-hash", two.hash, "--intent", "Problem: silent parse failures. Solution: a report function that logs them.", "--title", "Log parse failures", "--tag", "FEATURE"], { CLAUDE_CODE_SESSION_ID: "sess-alice" })).code).toBe(0);
  // a second branch, squash-merged later
  a.git("checkout", "-q", "-b", "feature2", "main");
  await s.prompt("give the parser a version constant");
  const three = agentCommit(a, "version constant", { "src/version.ts": "export const PARSER_VERSION = '1.0.0';\nexport const PARSER_NAME = 'tolerant-json';\n" });
  await s.bash('git commit -m "version constant"', three.stdout);
  expect((await capture(a, ["--commit-hash", three.hash, "--intent", "Problem: bug reports never say which parser. Solution: a version constant.", "--title", "Parser version constant", "--tag", "FEATURE"], { CLAUDE_CODE_SESSION_ID: "sess-alice" })).code).toBe(0);
  return { one: one.hash, two: two.hash, three: three.hash };
}

describe("the team's why on a teammate's clone", () => {
  test("B's why shows A's intents from the team server, and from the pulled cache with the server stopped", async () => {
    const home = tempDir();
    const db = join(tempDir(), "team.sqlite");
    const key = await newProject(db, home);
    const server = await serve(db, home);
    const backend = { AIFLARE_ENDPOINT: server.url, AIFLARE_API_KEY: key };

    const a = tempRepo();
    const origin = join(a.dir, "origin.git");
    git(a.dir, a.env, "init", "-q", "--bare", "-b", "main", origin);
    a.git("remote", "add", "origin", origin);
    a.git("push", "-q", "origin", "main");
    const { one, two, three } = await developerA(a);
    const sent = await runBin(["sync"], { cwd: a.root, env: { ...a.env, ...backend } });
    expect(sent.code).toBe(0);
    a.git("push", "-q", "origin", "feature", "feature2");

    // a maintainer merges the branch on another clone and pushes
    const m = join(a.dir, "maintainer");
    git(a.dir, a.env, "clone", "-q", origin, m);
    git(m, a.env, "merge", "-q", "--no-ff", "-m", "Merge feature", "origin/feature");
    git(m, a.env, "merge", "-q", "--squash", "origin/feature2");
    git(m, a.env, "commit", "-q", "-m", "Parser version (#2)");
    git(m, a.env, "push", "-q", "origin", "main");
    const squashHash = git(m, a.env, "rev-parse", "HEAD");

    // A pulls the merged main: git's post-merge hook (as aiflare install writes it) links the squash to A's entry
    // once, on A's timeline branch, without any why; the next sync (a push's) takes the link to the server
    const hook = join(a.root, ".git", "hooks", "post-merge");
    writeFileSync(hook, (await import("../../src/core/install/templates.ts")).gitHookText("post-merge", `'${binary()}'`), { mode: 0o755 });
    a.git("checkout", "-q", "main");
    const pull = Bun.spawnSync(["git", "pull", "-q", "--no-rebase", "origin", "main"], { cwd: a.root, env: a.env });
    expect(pull.exitCode).toBe(0);
    expect(pull.stderr.toString()).toBe("");
    const linkFile = `aiflare/timeline/v1:links/${squashHash.slice(0, 2)}/${squashHash.slice(2)}.json`;
    const landed = JSON.parse(a.git("show", linkFile));
    expect(landed.method).toBe("patch-id"); // a squash of one commit is the same patch
    expect(landed.parts.map((p: any) => p.commitHash)).toEqual([three]);
    expect(a.git("log", "--format=%B", "aiflare/timeline/v1").split("\n").filter((l) => l === `Link: ${squashHash}`)).toHaveLength(1);
    expect((await runBin(["sync"], { cwd: a.root, env: { ...a.env, ...backend } })).code).toBe(0);
    const onServer = (await (await fetch(`${server.url}/api/v1/entries/${squashHash}`, { headers: { "x-api-key": key } })).json()) as any;
    expect(onServer.entry).toBeNull();
    expect(onServer.link.parts.map((p: any) => p.commitHash)).toEqual([three]);
    expect(onServer.parts.map((p: any) => p.intent)).toEqual(["Problem: bug reports never say which parser. Solution: a version constant."]);

    // developer B: a fresh clone, no local entries, the backend configured
    const bHome = tempDir();
    const bEnv = testEnv(bHome);
    const b = join(bHome, "clone");
    git(bHome, bEnv, "clone", "-q", origin, b);
    const offlineFirst = await runBin(["why", "src/parse.ts:2"], { cwd: b, env: bEnv });
    expect(offlineFirst.code).toBe(0);
    expect(offlineFirst.stdout).toContain("no aiflare entry");

    // a session starting in B's clone: without a backend nothing to say; with one, the team's recent why of the
    // branch, asked of the server within the hook's short deadline and marked as the team's
    const startIn = (env: Record<string, string>) =>
      runBin(["hook", "session-start"], { cwd: b, env, stdin: JSON.stringify({ ...startTemplate, session_id: "sess-bob", cwd: b, source: "startup" }) });
    const quiet = await startIn(bEnv);
    expect([quiet.code, quiet.stdout]).toEqual([0, ""]);
    const startedOnline = await startIn({ ...bEnv, ...backend });
    expect(startedOnline.code).toBe(0);
    const context = JSON.parse(startedOnline.stdout).hookSpecificOutput.additionalContext as string;
    expect(context).toContain(`Commit ${two.slice(0, 7)}`);
    expect(context).toContain("Log parse failures");
    expect(context).toContain("Accept trailing commas");
    expect(context).toContain('from "the team');

    const online = await runBin(["why", "src/parse.ts:2"], { cwd: b, env: { ...bEnv, ...backend } });
    expect(online.code).toBe(0);
    expect(online.stdout).toContain("Accept trailing commas");
    expect(online.stdout).toContain("configs with trailing commas failed");
    expect(online.stdout).toContain("from the team server");
    const lines5 = JSON.parse((await runBin(["why", "src/parse.ts:5", "--json"], { cwd: b, env: { ...bEnv, ...backend } })).stdout);
    expect(lines5.commits[0].commitHash).toBe(two);
    expect(lines5.commits[0].entry.intent).toContain("silent parse failures");
    expect(lines5.commits[0].from).toBe("team");
    // nothing of the team's was written into B's git refs as if captured there
    expect(Bun.spawnSync(["git", "rev-parse", "--verify", "-q", "aiflare/timeline/v1"], { cwd: b, env: bEnv }).exitCode).not.toBe(0);

    const pulled = await runBin(["pull"], { cwd: b, env: { ...bEnv, ...backend } });
    expect(pulled.code).toBe(0);
    expect(pulled.stdout).toContain("Pulled 3 entries");
    expect(existsSync(join(b, ".git", "aiflare", "team.sqlite"))).toBe(true);
    await server.stop();
    // with the server gone, the session start still has the team's why, from the pulled cache
    const cached = await startIn({ ...bEnv, ...backend });
    expect(cached.code).toBe(0);
    expect(cached.stderr).toBe("");
    expect(JSON.parse(cached.stdout).hookSpecificOutput.additionalContext).toContain("Log parse failures");

    // B's dashboard shows the team's pulled entries, marked as the team's: the timeline, an entry, a file, a squash
    const ui = await startUi(b, { ...bEnv, ...backend });
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(ui.url);
      await page.waitForSelector("body[data-ready='1'] .session-card");
      const rows = await page.$$eval(".entry-row", (els) => els.map((el) => (el as any).innerText as string));
      expect(rows.some((r) => r.includes("Accept trailing commas") && r.includes("team · Test Committer"))).toBe(true);
      expect(rows.some((r) => r.includes("Log parse failures") && r.includes("team"))).toBe(true);
      await showRoute(page, `#/entry/${two}`, "article.entry h1");
      const entryText = await page.$eval("article.entry", (el) => (el as any).innerText as string);
      expect(entryText).toContain("Log parse failures");
      expect(entryText).toContain("team · Test Committer");
      expect(entryText).toContain("silent parse failures");
      await showRoute(page, "#/file?path=src/parse.ts", "main .card");
      const fileText = await page.$eval("main", (el) => (el as any).innerText as string);
      expect(fileText).toContain("Accept trailing commas");
      expect(fileText).toContain("Log parse failures");
      expect(fileText).toContain("2 entries");
      await showRoute(page, `#/entry/${squashHash}`, "article.entry.linked .part");
      const squashText = await page.$eval("article.entry.linked", (el) => (el as any).innerText as string);
      expect(squashText).toContain("Parser version constant");
      expect(squashText).toContain("bug reports never say which parser");
      expect(squashText).toContain("team · Test Committer");
    } finally {
      await browser.close();
      await ui.stop();
    }

    // the squash commit has no entry anywhere: its part is found among the team's pulled entries by its lines
    const squashed = await runBin(["why", "src/version.ts:1", "--json"], { cwd: b, env: { ...bEnv, ...backend } });
    expect(squashed.code).toBe(0);
    const sq = JSON.parse(squashed.stdout).commits[0];
    expect(sq.subject).toBe("Parser version (#2)");
    expect(sq.entry).toBeNull();
    expect(sq.parts.map((p: any) => p.commitHash)).toEqual([three]);
    expect(sq.parts[0].intent).toContain("bug reports never say which parser");
    const squashedText = await runBin(["why", "src/version.ts:1"], { cwd: b, env: { ...bEnv, ...backend } });
    expect(squashedText.stdout).toContain("Parser version constant");
    // nothing was written into B's refs for it either
    expect(Bun.spawnSync(["git", "for-each-ref", "refs/heads/aiflare"], { cwd: b, env: bEnv }).stdout.toString()).toBe("");

    // every line with its commit and the request that wrote it, from the pulled cache
    const blame = await runBin(["why", "src/parse.ts", "--blame"], { cwd: b, env: { ...bEnv, ...backend } });
    expect(blame.code).toBe(0);
    const rows = blame.stdout.split("\n");
    expect(rows[0]).toBe("src/parse.ts · 6 lines, 6 written in 2 recorded requests");
    expect(rows).toContain(`2 ${one.slice(0, 8)} [1] ${"  return JSON.parse(text.replace(/,\\s*([}\\]])/g, '$1'));"}`);
    expect(rows).toContain(`5 ${two.slice(0, 8)} [2]   console.error('parse failed', err);`);
    expect(blame.stdout).toContain(`[1] ${one.slice(0, 8)}  FEATURE  Accept trailing commas · from the team server`);
    expect(blame.stdout).toContain("Asked: make the parser accept trailing commas");
    expect(blame.stdout).toContain("Asked: log what failed to parse");
    const blameJson = JSON.parse((await runBin(["why", "src/parse.ts", "--blame", "--json"], { cwd: b, env: { ...bEnv, ...backend } })).stdout);
    expect(blameJson.lines.map((l: any) => l.commitHash)).toEqual([one, one, one, two, two, two]);
    expect(blameJson.commits[two].entry.title).toBe("Log parse failures");
    expect(blameJson.commits[two].from).toBe("team");
    // a squash's lines, each with the part that wrote it
    const squashBlame = await runBin(["why", "src/version.ts", "--blame"], { cwd: b, env: { ...bEnv, ...backend } });
    expect(squashBlame.stdout).toContain("src/version.ts · 2 lines, 2 written in 1 recorded request");
    expect(squashBlame.stdout).toContain(`[1] ${three.slice(0, 8)}  FEATURE  Parser version constant · from the team server`);
    const readmeBlame = await runBin(["why", "README.md", "--blame"], { cwd: b, env: { ...bEnv, ...backend } });
    expect(readmeBlame.stdout).toContain("README.md · 1 lines, 0 written in 0 recorded requests");

    const offline = await runBin(["why", "src/parse.ts", "--json"], { cwd: b, env: { ...bEnv, ...backend } });
    expect(offline.code).toBe(0);
    const byHash = new Map(JSON.parse(offline.stdout).commits.map((c: any) => [c.commitHash, c.entry?.title ?? null]));
    expect(byHash.get(one)).toBe("Accept trailing commas");
    expect(byHash.get(two)).toBe("Log parse failures");
    // the team's entries as Agent Trace records, valid by the format's published schema
    const exported = await runBin(["export", "--format", "agent-trace"], { cwd: b, env: { ...bEnv, ...backend } });
    expect(exported.code).toBe(0);
    const records = exported.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const validate = traceValidator();
    for (const r of records) expect({ record: r.vcs.revision, valid: validate(r), errors: validate.errors ?? null }).toEqual({ record: r.vcs.revision, valid: true, errors: null });
    const squash = git(b, bEnv, "rev-parse", "HEAD");
    expect(records.map((r) => r.vcs.revision)).toEqual([one, two, squash]);
    // the squash's lines, through its part: that part's model, its request in the metadata
    expect(records[2].files).toEqual([{ path: "src/version.ts", conversations: [{ contributor: { type: "ai", model_id: "anthropic/claude-sonnet-4-5" }, ranges: [{ start_line: 1, end_line: 2 }] }] }]);
    expect(records[2].metadata.aiflare.parts.map((p: any) => [p.commitHash, p.title])).toEqual([[three, "Parser version constant"]]);
    expect(records[0].version).toBe("0.1.0");
    expect(records[0].files).toEqual([{ path: "src/parse.ts", conversations: [{ contributor: { type: "ai", model_id: "anthropic/claude-sonnet-4-5" }, ranges: [{ start_line: 1, end_line: 3 }] }] }]);
    expect(records[1].files[0].conversations[0].ranges).toEqual([{ start_line: 4, end_line: 6 }]);
    expect(records[1].metadata.aiflare.title).toBe("Log parse failures");
    const onlyTwo = await runBin(["export", "--format", "agent-trace", `${one}..HEAD`], { cwd: b, env: { ...bEnv, ...backend } });
    expect(onlyTwo.stdout.trim().split("\n").map((l) => JSON.parse(l).vcs.revision)).toEqual([two, squash]);
    const badFormat = await runBin(["export", "--format", "csv"], { cwd: b, env: bEnv });
    expect(badFormat.code).not.toBe(0);
    expect(badFormat.stderr).toContain("agent-trace");

    // the server is down: a lookup of what the cache lacks answers without the team, quickly and silently
    const started = performance.now();
    const readme = await runBin(["why", "README.md"], { cwd: b, env: { ...bEnv, ...backend } });
    expect(readme.code).toBe(0);
    expect(readme.stderr).toBe("");
    expect(performance.now() - started).toBeLessThan(10_000);
    // pulling with the server down is an error that says where it tried
    const down = await runBin(["sync", "--pull"], { cwd: b, env: { ...bEnv, ...backend } });
    expect(down.code).not.toBe(0);
    expect(down.stderr).toContain(server.url);
  });
});
