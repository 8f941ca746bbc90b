/** doctor end to end: install, break one thing on purpose, check doctor names it and exits 1. */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { binary, runBin, tempRepo, type TempRepo } from "../helpers.ts";

const repos: TempRepo[] = [];
afterEach(() => {
  while (repos.length) repos.pop()!.cleanup();
});

async function installed(): Promise<TempRepo> {
  const r = tempRepo();
  repos.push(r);
  const out = await runBin(["install"], { cwd: r.root, env: r.env });
  expect(out.code).toBe(0);
  return r;
}
const doctor = (r: TempRepo, args: string[] = [], env: Record<string, string> = {}) =>
  runBin(["doctor", ...args], { cwd: r.root, env: { ...r.env, ...env } });

function editJson(path: string, edit: (doc: any) => void): void {
  const doc = JSON.parse(readFileSync(path, "utf8"));
  edit(doc);
  writeFileSync(path, JSON.stringify(doc, null, 2));
}

/** A timeline commit whose tree object is then deleted from the object store. */
function brokenTimeline(r: TempRepo): void {
  const blob = r.git("hash-object", "-w", "--stdin");
  const tree = Bun.spawnSync(["git", "mktree"], { cwd: r.root, env: r.env, stdin: new Blob([`100644 blob ${blob}\tentry.json\n`]) }).stdout.toString().trim();
  const c = r.git("commit-tree", tree, "-m", "timeline");
  r.git("update-ref", "refs/heads/aiflare/timeline/v1", c);
  rmSync(join(r.root, ".git/objects", tree.slice(0, 2), tree.slice(2)));
}

test("a fresh install is healthy: every line ✓ or !, exit 0", async () => {
  const r = await installed();
  const out = await doctor(r);
  expect(out.code).toBe(0);
  expect(out.stdout).not.toContain("✗");
  for (const s of ["✓ Claude Code hooks in .claude/settings.local.json", "✓ git pre-push hook", "✓ git post-rewrite hook", "✓ .context-capture/ is not tracked", "! no backend configured"]) {
    expect(out.stdout).toContain(s);
  }
});

const breakages: [string, (r: TempRepo) => void, RegExp][] = [
  ["a hook entry removed", (r) => editJson(join(r.root, ".claude/settings.local.json"), (d) => delete d.hooks.SessionEnd), /✗ Claude Code hooks in \.claude\/settings\.local\.json lack SessionEnd/],
  ["the settings file broken", (r) => writeFileSync(join(r.root, ".claude/settings.local.json"), "{"), /✗ \.claude\/settings\.local\.json is not valid JSON/],
  ["all agent hooks gone", (r) => rmSync(join(r.root, ".claude/settings.local.json")), /✗ no agent hooks \(only git hooks\): agents record nothing/],
  [
    "hooks calling a binary that is gone",
    (r) => {
      const p = join(r.root, ".claude/settings.local.json");
      writeFileSync(p, readFileSync(p, "utf8").replaceAll(/"[^"]*aiflare hook/g, '"/nonexistent/aiflare hook'));
    },
    /✗ Claude Code hooks call \/nonexistent\/aiflare, which does not exist/,
  ],
  ["the skill deleted", (r) => rmSync(join(r.root, ".claude/skills/context-capture/SKILL.md")), /✗ \.claude\/skills\/context-capture\/SKILL\.md is missing/],
  ["pre-push not executable", (r) => chmodSync(join(r.root, ".git/hooks/pre-push"), 0o644), /✗ \.git\/hooks\/pre-push is not executable/],
  ["post-rewrite deleted", (r) => rmSync(join(r.root, ".git/hooks/post-rewrite")), /✗ git post-rewrite hook missing/],
  ["pre-push replaced by another tool", (r) => writeFileSync(join(r.root, ".git/hooks/pre-push"), "#!/bin/sh\nexit 0\n", { mode: 0o755 }), /✗ \.git\/hooks\/pre-push is not aiflare's/],
  [
    ".context-capture tracked by git",
    (r) => {
      mkdirSync(join(r.root, ".context-capture"), { recursive: true });
      writeFileSync(join(r.root, ".context-capture/notes"), "x");
      r.git("add", "-f", ".context-capture/notes");
      r.git("commit", "-q", "-m", "oops");
    },
    /✗ \.context-capture\/ has files tracked by git/,
  ],
  ["aiflare.yml invalid", (r) => writeFileSync(join(r.root, "aiflare.yml"), "endpoint: [unclosed"), /✗ aiflare\.yml is not valid YAML/],
  [
    "timeline branch at a missing object",
    (r) => {
      mkdirSync(join(r.root, ".git/refs/heads/aiflare/timeline"), { recursive: true });
      writeFileSync(join(r.root, ".git/refs/heads/aiflare/timeline/v1"), `${"ab".repeat(20)}\n`);
    },
    /✗ refs\/heads\/aiflare\/timeline\/v1 points at [0-9a-f]{40}, which is not a readable commit/,
  ],
  ["timeline tree object lost", brokenTimeline, /✗ git fsck reports problems/],
];

describe("doctor finds each thing broken on purpose", () => {
  for (const [name, breakIt, expected] of breakages) {
    test(name, async () => {
      const r = await installed();
      breakIt(r);
      const out = await doctor(r);
      expect(out.stdout).toMatch(expected);
      expect(out.stdout).toContain("fix:");
      expect(out.code).toBe(1);
    });
  }

  test("a chained hook that is not executable is a warning, not a failure", async () => {
    const r = tempRepo();
    repos.push(r);
    writeFileSync(join(r.root, ".git/hooks/pre-push"), "#!/bin/sh\nexit 0\n", { mode: 0o644 });
    expect((await runBin(["install"], { cwd: r.root, env: r.env })).code).toBe(0);
    const out = await doctor(r);
    expect(out.stdout).toContain("! chained pre-push.aiflare-chained is not executable");
    expect(out.code).toBe(0);
  });

  test("old session files are reported with the way to remove them", async () => {
    const r = await installed();
    mkdirSync(join(r.root, ".context-capture"), { recursive: true });
    const p = join(r.root, ".context-capture/.claude-prompts-old-session");
    writeFileSync(p, "{}\n");
    const t = (Date.now() - 10 * 24 * 3600 * 1000) / 1000;
    utimesSync(p, t, t);
    const out = await doctor(r);
    expect(out.stdout).toContain("! 1 session file(s) in .context-capture/ untouched for over 7 days");
    expect(out.stdout).toContain("rm .context-capture/.claude-prompts-old-session");
  });

  test("a healthy timeline branch passes git fsck", async () => {
    const r = await installed();
    const c = r.git("commit-tree", r.git("mktree"), "-m", "timeline");
    r.git("update-ref", "refs/heads/aiflare/timeline/v1", c);
    const out = await doctor(r);
    expect(out.stdout).toContain("✓ aiflare/timeline/v1 readable, git fsck clean");
    expect(out.code).toBe(0);
  });

  test("--json gives every check with its status", async () => {
    const r = await installed();
    rmSync(join(r.root, ".git/hooks/post-rewrite"));
    const out = await doctor(r, ["--json"]);
    expect(out.code).toBe(1);
    const report = JSON.parse(out.stdout);
    expect(report.ok).toBe(false);
    expect(report.results.find((c: { id: string }) => c.id === "git-hook:post-rewrite")).toMatchObject({ status: "fail", fix: "run aiflare install" });
    expect(report.results.find((c: { id: string }) => c.id === "git-hook:pre-push").status).toBe("ok");
  });
});

describe("doctor --online", () => {
  const seen: { key: string | null; body: string }[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      seen.push({ key: req.headers.get("x-api-key"), body: await req.text() });
      if (new URL(req.url).pathname !== "/api/v1/captures/batch") return new Response("no", { status: 404 });
      return new Response("{}", { status: req.headers.get("x-api-key") === "good-key-1234" ? 200 : 401 });
    },
  });
  afterAll(() => server.stop(true));
  const endpoint = `http://127.0.0.1:${server.port}`;

  test("reachable with a good key", async () => {
    const r = await installed();
    writeFileSync(join(r.root, "aiflare.yml"), `endpoint: ${endpoint}\napi_key: good-key-1234\n`);
    const out = await doctor(r, ["--online"]);
    expect(out.stdout).toContain(`✓ ${endpoint} reachable, key accepted (200)`);
    expect(out.stdout).toContain("key …1234");
    expect(out.stdout).not.toContain("good-key-1234");
    expect(out.code).toBe(0);
    expect(seen.at(-1)).toEqual({ key: "good-key-1234", body: '{"captures":[]}' });
  });

  test("a rejected key fails", async () => {
    const r = await installed();
    const out = await doctor(r, ["--online"], { AIFLARE_ENDPOINT: endpoint, AIFLARE_API_KEY: "bad-key" });
    expect(out.stdout).toContain("✗ " + endpoint + " rejects the API key (401)");
    expect(out.code).toBe(1);
  });

  test("an unreachable backend fails; without --online nothing is sent", async () => {
    const r = await installed();
    const count = seen.length;
    const env = { AIFLARE_ENDPOINT: "http://127.0.0.1:9", AIFLARE_API_KEY: "k" };
    expect((await doctor(r, [], env)).code).toBe(0);
    expect(seen.length).toBe(count);
    const out = await doctor(r, ["--online"], env);
    expect(out.stdout).toContain("✗ http://127.0.0.1:9 unreachable");
    expect(out.code).toBe(1);
  });
});

test("outside any install, doctor says aiflare is not installed and exits 1", async () => {
  const r = tempRepo();
  repos.push(r);
  const out = await doctor(r);
  expect(out.code).toBe(1);
  expect(out.stdout).toContain("✗ no agent hooks: aiflare is not installed in this repository");
  expect(readdirSync(r.root).sort()).toEqual([".git", "README.md"]);
});

describe("doctor is consistent", () => {
  test("hooks that call aiflare by another path are not 'different'; the path is the binary line's business", async () => {
    const r = await installed();
    const copy = join(r.dir, "bin", "aiflare");
    mkdirSync(join(r.dir, "bin"));
    copyFileSync(binary(), copy);
    chmodSync(copy, 0o755);
    const p = join(r.root, ".claude/settings.local.json");
    writeFileSync(p, readFileSync(p, "utf8").replaceAll(/"[^" ]*aiflare hook/g, `"${copy} hook`));
    expect(readFileSync(p, "utf8")).toContain(`"${copy} hook stop"`);
    const out = await doctor(r);
    expect(out.stdout).toContain("✓ Claude Code hooks in .claude/settings.local.json");
    expect(out.stdout).not.toContain("differ");
    expect(out.stdout).toContain(`✓ Claude Code hooks call ${copy}`);
    expect(out.code).toBe(0);
  });

  test("without agent hooks the binary line says it is the git hooks that call aiflare", async () => {
    const r = await installed();
    rmSync(join(r.root, ".claude/settings.local.json"));
    const out = await doctor(r);
    expect(out.stdout).toContain("✗ no agent hooks (only git hooks)");
    expect(out.stdout).toMatch(/✓ git hooks call \S+/);
    expect(out.stdout).not.toMatch(/^✓ hooks call/m);
  });

  test("a tracked .claude/settings.local.json is a warning with the fix", async () => {
    const r = await installed();
    r.git("add", "-f", ".claude/settings.local.json");
    r.git("commit", "-q", "-m", "settings");
    const out = await doctor(r);
    expect(out.stdout).toContain("! .claude/settings.local.json is tracked by git, but it holds this machine's path to aiflare");
    expect(out.stdout).toContain("git rm --cached .claude/settings.local.json");
    expect(out.code).toBe(0);
  });
});
