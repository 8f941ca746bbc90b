import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempRepo, type TempRepo } from "../helpers.ts";
import { agentCommit, capture, fsckClean, session, showEntry, timelinePaths } from "./capture-support.ts";

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

describe("aiflare capture", () => {
  test("defaults: HEAD, its subject and changed files, CLAUDE_CODE, session from the environment", async () => {
    repo = tempRepo();
    const head = repo.commit("docs: explain setup", { "docs/setup.md": "x", "README.md": "y" });
    const r = await capture(repo, ["--intent", "because"], { CLAUDE_CODE_SESSION_ID: "env-sess" });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`Captured ${head.slice(0, 12)} DOCS "docs: explain setup" on aiflare/timeline/v1\n`);
    const e = showEntry(repo, head)!;
    expect(e.commitHash).toBe(head);
    expect(e.title).toBe("docs: explain setup");
    expect(e.changedFiles).toEqual(["README.md", "docs/setup.md"]);
    expect(e.agentType).toBe("CLAUDE_CODE");
    expect(e.claudeSessionId).toBe("env-sess");
    expect(e.groupRootId).toBeNull();
    expect(typeof e.capturedAt).toBe("string");
  });

  test("abbreviated hashes are stored full; capturing again updates, never duplicates; --json prints the entry", async () => {
    repo = tempRepo();
    const a = repo.commit("feat: a", { "x.ts": "x\n", "y.ts": "y\n" });
    repo.commit("feat: b");
    const short = a.slice(0, 7);
    const flags = ["--commit-hash", short, "--title", "A", "--intent", "i1", "--tag", "feature", "--changed-files", "x.ts, y.ts", "--claude-session-id", "s1"];
    expect((await capture(repo, flags)).code).toBe(0);
    const r = await capture(repo, ["--commit-hash", short, "--intent", "i2", "--alternatives", "none", "--diff-summary", "x.ts: y", "--json"]);
    expect(r.code).toBe(0);
    const printed = JSON.parse(r.stdout);
    expect(printed.commitHash).toBe(a);
    expect(printed.intent).toBe("i2");
    expect(printed.title).toBe("A");
    expect(printed.changedFiles).toEqual(["x.ts", "y.ts"]);
    expect(printed.claudeSessionId).toBe("s1");
    expect(showEntry(repo, a)).toEqual(printed);
    expect(timelinePaths(repo)).toEqual([`entries/${a.slice(0, 2)}/${a.slice(2)}.json`]);
  });

  // a flag's value that is not one it takes is a usage error (exit 2, like an unknown flag); the rest exit 1
  const invalid: [string, string[], Record<string, string>, RegExp, number][] = [
    ["unknown tag", ["--tag", "CHORE"], {}, /unknown --tag "CHORE": use one of FEATURE, BUGFIX/, 2],
    ["missing commit", ["--commit-hash", "0123456789abcdef"], {}, /does not exist in this repository/, 1],
    ["option-like commit", ["--commit-hash=--all"], {}, /--commit-hash must be a commit/, 2],
    ["invalid session flag", ["--claude-session-id", "../../etc"], {}, /session id "..\/..\/etc" is invalid/, 1],
    ["invalid session env", [], { CLAUDE_SESSION_ID: "a b" }, /is invalid/, 1],
    ["unknown agent type", ["--agent-type", "vim"], {}, /unknown --agent-type "VIM"/, 2],
    ["empty title", ["--title", "  "], {}, /aiflare capture: --title must not be empty\. See "aiflare capture --help"\./, 2],
    ["commit with a space", ["--commit-hash", " HEAD~1 x"], {}, /--commit-hash must be a commit hash or name such as HEAD \(no spaces, not starting with -\)/, 2],
    ["lower-case tag with a dash", ["--tag", "bug-fix"], {}, /unknown --tag "BUG_FIX": use one of FEATURE, BUGFIX, REFACTORING, TEST, DOCS/, 2],
    // several wrong: the first in the order title, commit, agent type, tag is the one reported
    ["several wrong flags", ["--tag", "x", "--agent-type", "y", "--commit-hash", "-x", "--title", " "], {}, /^aiflare capture: --title must not be empty/, 2],
    ["agent type before tag", ["--tag", "x", "--agent-type", "y"], {}, /^aiflare capture: unknown --agent-type "Y"/, 2],
  ];
  for (const [name, args, env, message, code] of invalid) {
    test(`exit ${code} with a message saying what to fix: ${name}`, async () => {
      repo = tempRepo();
      const r = await capture(repo, args, env);
      expect(r.code).toBe(code);
      expect(r.stderr).toMatch(message);
      expect(timelinePaths(repo)).toEqual([]);
    });
  }

  test("outside a repository: exit 1", async () => {
    repo = tempRepo();
    const r = await capture(repo, [], {}, repo.home);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("not inside a git repository");
  });

  test("without a hook entry it creates one from the named session's uncaptured lines and question marker, then takes them", async () => {
    repo = tempRepo();
    const dir = join(repo.root, ".context-capture");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, ".claude-prompts-s9"), '{"role":"assistant","content":"which?"}\n{"role":"user","content":"why"}\n');
    writeFileSync(join(dir, ".pending-question-s9"), "");
    const head = repo.commit("fix: it");
    const r = await capture(repo, ["--claude-session-id", "s9"]);
    expect(r.code).toBe(0);
    const e = showEntry(repo, head)!;
    expect(e.conversationSnippet).toBe('{"role":"assistant","content":"which?"}\n{"role":"user","content":"why"}\n');
    expect(e.continuation).toBe(true);
    expect(e.tag).toBe("BUGFIX");
    expect(e.summaryStatus).toBe("written");
    expect(existsSync(join(dir, ".pending-question-s9"))).toBe(false);
    // taken: a second commit captured the same way gets none of it
    const next = repo.commit("fix: more");
    expect((await capture(repo, ["--claude-session-id", "s9", "--commit-hash", next])).code).toBe(0);
    expect(showEntry(repo, next)!.conversationSnippet).toBe("");
  });

  test("no session anywhere: the newest prompts file is used, with a warning", async () => {
    repo = tempRepo();
    const dir = join(repo.root, ".context-capture");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, ".claude-prompts-older"), "");
    await Bun.sleep(20);
    writeFileSync(join(dir, ".claude-prompts-newest"), "");
    const head = repo.commit("feat: z");
    const r = await capture(repo, []);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("most recent session newest");
    expect(showEntry(repo, head)!.claudeSessionId).toBe("newest");
  });
});

describe("the commit hook", () => {
  test("a failed commit (nothing to commit) writes nothing and prints nothing", async () => {
    repo = tempRepo();
    const s = session(repo, "s1");
    await s.prompt("commit please");
    const r = repo.tryGit("commit", "-m", "nothing");
    expect(r.code).not.toBe(0);
    const out = await s.bash(`git commit -m "nothing"`, r.stdout);
    expect(out.stdout).toBe("");
    expect(timelinePaths(repo)).toEqual([]);
  });

  test("a commit that made nothing is known from the unchanged reflog; the next real commit is captured", async () => {
    repo = tempRepo();
    const s = session(repo, "s1");
    await s.prompt("one");
    const one = agentCommit(repo, "feat: one", { "1.txt": "1" });
    expect((await s.bash("git commit -qam one")).stdout).toContain(one.hash);
    // a command that commits nothing, twice (the second time the session has seen this reflog)
    for (const _ of [1, 2]) expect((await s.bash(`git commit -m "nothing"`, "nothing to commit, working tree clean")).stdout).toBe("");
    // a silent failure (no git output at all) after the reflog was seen: still nothing
    expect((await s.bash("git commit -q -m quiet")).stdout).toBe("");
    await s.prompt("two");
    const two = agentCommit(repo, "feat: two", { "2.txt": "2" });
    expect((await s.bash("git commit -qam two")).stdout).toContain(two.hash);
    expect(timelinePaths(repo)).toHaveLength(2);
    expect(showEntry(repo, two.hash)!.conversationSnippet).toContain("two");
  });

  test("a failed commit after a captured one does not capture it again or cut the delta", async () => {
    repo = tempRepo();
    const s = session(repo, "s1");
    await s.prompt("one");
    const c = agentCommit(repo, "feat: one", { "1.txt": "1" });
    await s.bash("git commit -qam one");
    await s.prompt("two");
    const failed = repo.tryGit("commit", "-q", "-m", "two");
    expect((await s.bash("git commit -qm two", failed.stdout)).stdout).toBe("");
    expect(timelinePaths(repo)).toHaveLength(1);
    expect(showEntry(repo, c.hash)!.conversationSnippet).not.toContain("two");
  });

  test("commands that only mention commit are ignored", async () => {
    repo = tempRepo();
    const s = session(repo, "s1");
    repo.commit("feat: made by the user");
    for (const cmd of [`echo "git commit -m x"`, "git log --grep commit", "git commit-tree HEAD^{tree} -m x"]) {
      expect((await s.bash(cmd)).stdout).toBe("");
    }
    expect(timelinePaths(repo)).toEqual([]);
  });

  test("several commits in one command each get an entry; the first has the delta, the rest join its group", async () => {
    repo = tempRepo();
    const s = session(repo, "s1");
    await s.prompt("split it into commits");
    const a = agentCommit(repo, "feat: a", { "a.txt": "a" });
    const b = agentCommit(repo, "test: b", { "b.txt": "b" });
    const out = await s.bash(`git add a.txt && git commit -q -m "feat: a"\ngit add b.txt && git commit -q -m "test: b"`);
    expect(out.stdout).toContain(a.hash);
    expect(out.stdout).toContain(b.hash);
    expect(showEntry(repo, a.hash)!.conversationSnippet).toContain("split it");
    expect(showEntry(repo, b.hash)!.groupRootId).toBe(a.hash);
    expect(showEntry(repo, b.hash)!.tag).toBe("TEST");
  });

  test("git -C and cd find the repository the command ran in (a nested repository)", async () => {
    repo = tempRepo();
    const sub = join(repo.root, "vendor", "lib");
    mkdirSync(sub, { recursive: true });
    const g = (...args: string[]) => Bun.spawnSync(["git", ...args], { cwd: sub, env: repo!.env });
    g("init", "-q", "-b", "dev");
    writeFileSync(join(sub, "f.txt"), "x");
    g("add", "f.txt");
    g("commit", "-q", "-m", "feat: nested");
    const hash = g("rev-parse", "HEAD").stdout.toString().trim();
    const s = session(repo, "s1");
    await s.prompt("commit the vendored lib");
    const out = await s.bash(`git -C vendor/lib commit -q -m "feat: nested"`);
    expect(out.stdout).toContain(hash);
    expect(showEntry(repo, hash, sub)!.branch).toBe("dev");
    expect(timelinePaths(repo)).toEqual([]);
  });

  test("works mid-merge (MERGE_HEAD present) and records the merge commit", async () => {
    repo = tempRepo();
    repo.git("checkout", "-q", "-b", "side");
    repo.commit("feat: side", { "side.txt": "s" });
    repo.git("checkout", "-q", "main");
    repo.commit("feat: main", { "main.txt": "m" });
    repo.git("merge", "--no-commit", "--no-ff", "side");
    expect(existsSync(join(repo.root, ".git", "MERGE_HEAD"))).toBe(true);
    const s = session(repo, "s1");
    await s.prompt("finish the merge");
    repo.git("commit", "-q", "--no-edit");
    const head = repo.git("rev-parse", "HEAD");
    const out = await s.bash("git commit --no-edit");
    expect(out.stdout).toContain(head);
    expect(showEntry(repo, head)!.changedFiles).toEqual(["side.txt"]);
    expect(fsckClean(repo)).toBe(true);
  });

  test("in a linked worktree the entry lands in the common git dir", async () => {
    repo = tempRepo();
    const wt = join(repo.dir, "wt");
    repo.git("worktree", "add", "-q", "-b", "feature", wt);
    const g = (...args: string[]) => Bun.spawnSync(["git", ...args], { cwd: wt, env: repo!.env });
    writeFileSync(join(wt, "w.txt"), "w");
    g("add", "w.txt");
    g("commit", "-q", "-m", "feat: in worktree");
    const hash = g("rev-parse", "HEAD").stdout.toString().trim();
    const s = session(repo, "s1");
    const out = await s.bash("git commit -q -m 'feat: in worktree'", "", wt);
    expect(out.stdout).toContain(hash);
    const e = showEntry(repo, hash)!;
    expect(e.branch).toBe("feature");
    expect(e.changedFiles).toEqual(["w.txt"]);
    expect(existsSync(join(repo.root, ".git", "refs", "heads", "aiflare", "timeline", "v1"))).toBe(true);
    expect(existsSync(join(wt, ".context-capture"))).toBe(true);
    // and capture run inside the worktree completes it
    expect((await capture(repo, ["--intent", "wt"], { CLAUDE_SESSION_ID: "s1" }, wt)).code).toBe(0);
    expect(showEntry(repo, hash)!.intent).toBe("wt");
  });

  test("after git gc (packed refs, packed objects) captures keep working", async () => {
    repo = tempRepo();
    const s = session(repo, "s1");
    await s.prompt("one");
    const a = agentCommit(repo, "feat: a", { "a.txt": "a" });
    await s.bash("git commit -qam a");
    repo.git("gc", "-q");
    expect(existsSync(join(repo.root, ".git", "refs", "heads", "aiflare", "timeline", "v1"))).toBe(false);
    await s.stop("ok");
    const b = agentCommit(repo, "feat: b", { "b.txt": "b" });
    await s.bash("git commit -qam b");
    expect(showEntry(repo, a.hash)).not.toBeNull();
    expect(showEntry(repo, b.hash)!.groupRootId).toBe(a.hash);
    expect(fsckClean(repo)).toBe(true);
  });
});
