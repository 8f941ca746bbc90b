/** install / uninstall end to end: the compiled binary, real git, real temp repositories. */
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { binary, runBin, tempRepo, untimed, type TempRepo } from "../helpers.ts";

const repos: TempRepo[] = [];
afterEach(() => {
  while (repos.length) repos.pop()!.cleanup();
});
function repo(opts: { empty?: boolean } = {}): TempRepo {
  const r = tempRepo(opts);
  repos.push(r);
  return r;
}

/** Every file under `dir` (skipping `.git` unless it is the dir itself) with its bytes and mode. */
function snapshot(dir: string, skipGit = true): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (skipGit && name === ".git") continue;
      const st = lstatSync(p);
      if (st.isDirectory()) {
        out[`${relative(dir, p)}/`] = "dir";
        walk(p);
      } else out[relative(dir, p)] = `${(st.mode & 0o777).toString(8)} ${readFileSync(p).toString("base64")}`;
    }
  };
  walk(dir);
  return out;
}

/** The working tree and the hooks directory together. */
function state(r: TempRepo, hooksDir = join(r.root, ".git", "hooks")): Record<string, unknown> {
  return { tree: snapshot(r.root), hooks: existsSync(hooksDir) ? snapshot(hooksDir, false) : null };
}

const aiflare = (r: TempRepo, args: string[], cwd = r.root) => runBin(args, { cwd, env: r.env });

function settings(r: TempRepo, rel = ".claude/settings.local.json") {
  return JSON.parse(readFileSync(join(r.root, rel), "utf8"));
}

/** The command strings the settings file holds for an event (and matcher). */
function commandsFor(doc: { hooks: Record<string, { matcher?: string; hooks: { command: string }[] }[]> }, event: string, matcher?: string): string[] {
  return (doc.hooks[event] ?? []).filter((g) => matcher === undefined || g.matcher === matcher).flatMap((g) => g.hooks.map((h) => h.command));
}

/** Runs a hook command string the way Claude Code and Codex do: through sh -c, payload on stdin. */
function runAsAgent(r: TempRepo, command: string, payload: unknown, env: Record<string, string> = {}) {
  const p = Bun.spawnSync(["sh", "-c", command], {
    cwd: r.root,
    env: { ...r.env, ...env },
    stdin: new Blob([JSON.stringify(payload)]),
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

describe("install into a fresh repository", () => {
  test("writes every piece, changes nothing the second time, and uninstall leaves no trace", async () => {
    const r = repo();
    const before = state(r);
    const first = await aiflare(r, ["install"]);
    expect(first.code).toBe(0);
    for (const p of [".claude/settings.local.json", ".claude/skills/context-capture/SKILL.md", "CLAUDE.md", ".gitignore"]) {
      expect(first.stdout).toContain(p);
      expect(existsSync(join(r.root, p))).toBe(true);
    }
    expect(first.stdout).toContain("Next:");
    expect(first.stdout).toContain("aiflare.yml");

    const doc = settings(r);
    const bin = binary();
    for (const [event, sub] of [["SessionStart", "session-start"], ["UserPromptSubmit", "user-prompt-submit"], ["Stop", "stop"], ["SessionEnd", "session-end"]]) {
      expect(commandsFor(doc, event!)).toEqual([`${bin} hook ${sub}`]);
    }
    const bash = doc.hooks.PostToolUse.find((g: { matcher: string }) => g.matcher === "Bash");
    expect(bash.hooks[0]).toEqual({ type: "command", if: "Bash(git *)", command: `${bin} hook post-tool-use`, timeout: 60 });
    expect(commandsFor(doc, "PostToolUse", "AskUserQuestion")).toEqual([`${bin} hook post-tool-use`]);
    for (const h of ["pre-push", "post-rewrite"]) {
      const p = join(r.root, ".git/hooks", h);
      expect(lstatSync(p).mode & 0o111).toBe(0o111);
      expect(readFileSync(p, "utf8")).toContain(`AIFLARE_BIN=${bin}`);
    }
    expect(readFileSync(join(r.root, ".gitignore"), "utf8")).toBe(".context-capture/\naiflare.yml\n.claude/settings.local.json\n");
    expect(r.git("status", "--porcelain", "--ignored", "--", ".context-capture")).toContain("!! .context-capture/");

    const installed = state(r);
    const second = await aiflare(r, ["install"]);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("already installed");
    expect(state(r)).toEqual(installed);

    const un = await aiflare(r, ["uninstall"]);
    expect(un.code).toBe(0);
    expect(state(r)).toEqual(before);
  });

  test("--dry-run prints the plan and writes nothing", async () => {
    const r = repo();
    const before = state(r);
    const out = await aiflare(r, ["install", "--dry-run", "--agent", "all"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("would create  .claude/settings.local.json");
    expect(out.stdout).toContain("would create  .codex/hooks.json");
    expect(out.stdout).toContain("would create  .git/hooks/pre-push");
    expect(state(r)).toEqual(before);
  });

  test("--shared writes .claude/settings.json instead", async () => {
    const r = repo();
    expect((await aiflare(r, ["install", "--shared"])).code).toBe(0);
    expect(existsSync(join(r.root, ".claude/settings.local.json"))).toBe(false);
    expect(commandsFor(settings(r, ".claude/settings.json"), "Stop")).toEqual([`${binary()} hook stop`]);
    expect((await aiflare(r, ["uninstall"])).code).toBe(0);
    expect(existsSync(join(r.root, ".claude"))).toBe(false);
  });
});

describe("install into a repository that already has things", () => {
  function furnish(r: TempRepo) {
    mkdirSync(join(r.root, ".claude"), { recursive: true });
    // hand-formatted, with other keys and hooks on the same events
    writeFileSync(
      join(r.root, ".claude/settings.local.json"),
      `{\n    "permissions": { "allow": ["Bash(npm test)"] },\n    "hooks": {\n        "Stop": [ { "hooks": [ { "type": "command", "command": "notify-send done" } ] } ],\n        "PostToolUse": [ { "matcher": "Bash", "hooks": [ { "type": "command", "command": "./lint.sh" } ] } ]\n    }\n}`,
    );
    writeFileSync(join(r.root, "CLAUDE.md"), "# Rules\n\nRun the tests before committing.");
    writeFileSync(join(r.root, ".gitignore"), "node_modules/\ndist/");
    writeFileSync(join(r.root, ".git/hooks/pre-push"), '#!/bin/sh\necho "user hook $1" >&2\nexit 0\n', { mode: 0o755 });
    r.git("add", ".gitignore", "CLAUDE.md");
    r.git("commit", "-q", "-m", "project files");
  }

  test("keeps every other key and hook, chains the user's hook, and uninstall restores each file byte for byte", async () => {
    const r = repo();
    furnish(r);
    const before = state(r);
    const userHook = readFileSync(join(r.root, ".git/hooks/pre-push"));

    const out = await aiflare(r, ["install"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("pre-push.aiflare-chained");

    const doc = settings(r);
    expect(doc.permissions).toEqual({ allow: ["Bash(npm test)"] });
    expect(commandsFor(doc, "Stop")).toEqual(["notify-send done", `${binary()} hook stop`]);
    expect(commandsFor(doc, "PostToolUse", "Bash")).toEqual(["./lint.sh", `${binary()} hook post-tool-use`]);
    expect(readFileSync(join(r.root, ".claude/settings.local.json"), "utf8")).toStartWith('{\n    "permissions"');
    expect(readFileSync(join(r.root, "CLAUDE.md"), "utf8")).toMatch(/^# Rules\n\nRun the tests before committing\.\n\nAfter every git commit.*context-capture.*\n$/);
    expect(readFileSync(join(r.root, ".gitignore"), "utf8")).toBe("node_modules/\ndist/\n.context-capture/\naiflare.yml\n");
    expect(readFileSync(join(r.root, ".git/hooks/pre-push.aiflare-chained"))).toEqual(userHook);

    const installed = state(r);
    expect((await aiflare(r, ["install"])).code).toBe(0);
    expect(state(r)).toEqual(installed);

    expect((await aiflare(r, ["uninstall"])).code).toBe(0);
    expect(state(r)).toEqual(before);
  });

  test("a CLAUDE.md that already mentions the skill is left as it is", async () => {
    const r = repo();
    writeFileSync(join(r.root, "CLAUDE.md"), "Use the context-capture skill after commits.\n");
    const out = await aiflare(r, ["install"]);
    expect(out.stdout).toMatch(/unchanged\s+CLAUDE\.md/);
    expect(readFileSync(join(r.root, "CLAUDE.md"), "utf8")).toBe("Use the context-capture skill after commits.\n");
  });

  test("an invalid settings.local.json stops install before anything is written", async () => {
    const r = repo();
    mkdirSync(join(r.root, ".claude"));
    writeFileSync(join(r.root, ".claude/settings.local.json"), '{ "permissions": { "allow": [ }');
    const before = state(r);
    const out = await aiflare(r, ["install"]);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(".claude/settings.local.json is not valid JSON");
    expect(out.stderr).toContain("nothing was changed");
    expect(state(r)).toEqual(before);
  });

  test("edits made after install survive uninstall; only aiflare's part goes", async () => {
    const r = repo();
    furnish(r);
    expect((await aiflare(r, ["install"])).code).toBe(0);
    const p = join(r.root, ".claude/settings.local.json");
    const doc = JSON.parse(readFileSync(p, "utf8"));
    doc.model = "sonnet";
    writeFileSync(p, JSON.stringify(doc, null, 2));
    writeFileSync(join(r.root, ".gitignore"), `${readFileSync(join(r.root, ".gitignore"), "utf8")}coverage/\n`);
    expect((await aiflare(r, ["uninstall"])).code).toBe(0);
    const after = JSON.parse(readFileSync(p, "utf8"));
    expect(after.model).toBe("sonnet");
    expect(JSON.stringify(after)).not.toContain("aiflare");
    expect(commandsFor(after, "Stop")).toEqual(["notify-send done"]);
    expect(readFileSync(join(r.root, ".gitignore"), "utf8")).toBe("node_modules/\ndist/\ncoverage/\n");
  });
});

describe("where install writes", () => {
  test("from a subdirectory it sets up the repository root", async () => {
    const r = repo();
    const sub = join(r.root, "src", "deep");
    mkdirSync(sub, { recursive: true });
    expect((await aiflare(r, ["install"], sub)).code).toBe(0);
    expect(existsSync(join(r.root, ".claude/settings.local.json"))).toBe(true);
    expect(existsSync(join(sub, ".claude"))).toBe(false);
    expect(existsSync(join(r.root, ".git/hooks/pre-push"))).toBe(true);
  });

  test("in a linked worktree it writes that worktree's files and the shared hooks directory", async () => {
    const r = repo();
    const wt = join(r.dir, "linked");
    r.git("worktree", "add", "-q", "-b", "feature", wt);
    expect((await aiflare(r, ["install"], wt)).code).toBe(0);
    expect(existsSync(join(wt, ".claude/settings.local.json"))).toBe(true);
    expect(existsSync(join(r.root, ".claude"))).toBe(false);
    expect(readFileSync(join(r.root, ".git/hooks/pre-push"), "utf8")).toContain("aiflare-git-hook");
    expect((await aiflare(r, ["uninstall"], wt)).code).toBe(0);
    expect(existsSync(join(r.root, ".git/hooks/pre-push"))).toBe(false);
    expect(existsSync(join(wt, ".claude"))).toBe(false);
  });

  test("outside a repository it says so", async () => {
    const r = repo();
    const out = await aiflare(r, ["install"], r.home);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("not inside a git repository");
  });
});

describe("husky (core.hooksPath = .husky/_)", () => {
  test("the husky stub is chained and still runs the user's .husky script with git's arguments and input", async () => {
    const r = repo();
    // husky v9 layout: .husky/_/h runs .husky/<hook name>, each stub sources h
    mkdirSync(join(r.root, ".husky/_"), { recursive: true });
    writeFileSync(join(r.root, ".husky/_/.gitignore"), "*\n");
    writeFileSync(
      join(r.root, ".husky/_/h"),
      '#!/usr/bin/env sh\nn=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n[ ! -f "$s" ] && exit 0\nsh -e "$s" "$@"\nc=$?\nexit $c\n',
    );
    writeFileSync(join(r.root, ".husky/_/post-rewrite"), '#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n', { mode: 0o755 });
    writeFileSync(join(r.root, ".husky/post-rewrite"), 'echo "husky $1 $(cat)" >> "$(git rev-parse --show-toplevel)/husky.log"\n');
    r.git("config", "core.hooksPath", ".husky/_");
    const stub = readFileSync(join(r.root, ".husky/_/post-rewrite"));

    const out = await aiflare(r, ["install"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(".husky/_/post-rewrite");
    expect(readFileSync(join(r.root, ".husky/_/post-rewrite"), "utf8")).toContain("aiflare-git-hook");
    expect(readFileSync(join(r.root, ".husky/_/post-rewrite.aiflare-chained"))).toEqual(stub);
    expect(existsSync(join(r.root, ".git/hooks/pre-push"))).toBe(false);

    const old = r.git("rev-parse", "HEAD");
    r.git("commit", "-q", "--amend", "-m", "amended");
    const log = readFileSync(join(r.root, "husky.log"), "utf8");
    expect(log).toBe(`husky amend ${old} ${r.git("rev-parse", "HEAD")}\n`);

    expect((await aiflare(r, ["uninstall"])).code).toBe(0);
    expect(readFileSync(join(r.root, ".husky/_/post-rewrite"))).toEqual(stub);
    expect(existsSync(join(r.root, ".husky/_/post-rewrite.aiflare-chained"))).toBe(false);
  });
});

describe("the pre-push wrapper", () => {
  /** A repository with aiflare installed over a user pre-push hook, a bare remote, and a fake aiflare. */
  async function setup(userExit: number, aiflareExit: number | "missing") {
    const r = repo();
    const remote = join(r.dir, "remote.git");
    Bun.spawnSync(["git", "init", "-q", "--bare", remote], { env: r.env });
    r.git("remote", "add", "origin", remote);
    writeFileSync(
      join(r.root, ".git/hooks/pre-push"),
      `#!/bin/sh\nprintf 'user %s %s\\n' "$1" "$(cat)" >> "${r.dir}/calls.log"\nexit ${userExit}\n`,
      { mode: 0o755 },
    );
    expect((await aiflare(r, ["install"])).code).toBe(0);
    const fake = join(r.dir, "fake-aiflare");
    if (aiflareExit !== "missing") {
      writeFileSync(fake, `#!/bin/sh\nprintf 'aiflare %s | %s\\n' "$*" "$(cat)" >> "${r.dir}/calls.log"\nexit ${aiflareExit}\n`, { mode: 0o755 });
    }
    const hook = join(r.root, ".git/hooks/pre-push");
    writeFileSync(hook, readFileSync(hook, "utf8").replace(/^AIFLARE_BIN=.*$/m, `AIFLARE_BIN='${fake}'`));
    return r;
  }
  const log = (r: TempRepo) => (existsSync(join(r.dir, "calls.log")) ? readFileSync(join(r.dir, "calls.log"), "utf8") : "");

  const cases: [string, number, number | "missing", boolean][] = [
    ["both succeed: push goes through", 0, 0, true],
    ["aiflare refuses (exit 1): push blocked", 0, 1, false],
    ["aiflare fails otherwise (exit 3): push goes through", 0, 3, true],
    ["aiflare binary missing: push goes through", 0, "missing", true],
    ["the user's hook fails: push blocked, aiflare not run", 1, 0, false],
  ];
  for (const [name, userExit, aiflareExit, pushed] of cases) {
    test(name, async () => {
      const r = await setup(userExit, aiflareExit);
      const head = r.git("rev-parse", "HEAD");
      const push = r.tryGit("push", "-q", "origin", "main");
      expect(push.code === 0).toBe(pushed);
      const calls = log(r).trim().split("\n");
      const stdinLine = `refs/heads/main ${head} refs/heads/main 0000000000000000000000000000000000000000`;
      expect(calls[0]).toBe(`user origin ${stdinLine}`);
      if (userExit === 0 && aiflareExit !== "missing") {
        expect(calls[1]).toBe(`aiflare hook pre-push origin ${join(r.dir, "remote.git")} | ${stdinLine}`);
      } else expect(calls.length).toBe(1);
    });
  }
});

describe("the hooks run as the agents run them", () => {
  test("Claude Code: commands from settings.local.json record the conversation", async () => {
    const r = repo();
    expect((await aiflare(r, ["install"])).code).toBe(0);
    const doc = settings(r);
    const base = { session_id: "sess-1", cwd: r.root, transcript_path: join(r.home, "t.jsonl") };
    const envFile = join(r.dir, "claude-env");
    writeFileSync(envFile, "");

    const start = runAsAgent(r, commandsFor(doc, "SessionStart")[0]!, { ...base, hook_event_name: "SessionStart", source: "startup" }, { CLAUDE_ENV_FILE: envFile });
    expect(start.code).toBe(0);
    expect(readFileSync(envFile, "utf8")).toBe("export CLAUDE_SESSION_ID='sess-1'\n");

    expect(runAsAgent(r, commandsFor(doc, "UserPromptSubmit")[0]!, { ...base, hook_event_name: "UserPromptSubmit", prompt: "add a README" }).code).toBe(0);
    const stop = runAsAgent(r, commandsFor(doc, "Stop")[0]!, { ...base, hook_event_name: "Stop", stop_hook_active: false, last_assistant_message: "Done." });
    expect(stop.code).toBe(0);
    expect(stop.stdout).toBe("");
    const prompts = readFileSync(join(r.root, ".context-capture/.claude-prompts-sess-1"), "utf8");
    expect(untimed(prompts.trimEnd().split("\n").map((l) => JSON.parse(l)))).toEqual([
      { role: "user", content: "add a README" },
      { role: "assistant", content: "Done." },
    ]);

    const ask = runAsAgent(r, commandsFor(doc, "PostToolUse", "AskUserQuestion")[0]!, { ...base, hook_event_name: "PostToolUse", tool_name: "AskUserQuestion", tool_input: {}, tool_response: {} });
    expect(ask.code).toBe(0);
    expect(existsSync(join(r.root, ".context-capture/.pending-question-sess-1"))).toBe(true);
    expect(r.git("status", "--porcelain")).not.toContain(".context-capture");
  });

  test("Codex: commands from .codex/hooks.json record the conversation under the .codex- prefix", async () => {
    const r = repo();
    const out = await aiflare(r, ["install", "--agent", "codex"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("AGENTS.md");
    expect(existsSync(join(r.root, ".claude/settings.local.json"))).toBe(false);
    const doc = settings(r, ".codex/hooks.json");
    const base = { session_id: "019a-thread", cwd: r.root, transcript_path: null, model: "gpt-5", turn_id: "t1" };
    expect(runAsAgent(r, commandsFor(doc, "UserPromptSubmit")[0]!, { ...base, hook_event_name: "UserPromptSubmit", prompt: "fix it" }).code).toBe(0);
    expect(runAsAgent(r, commandsFor(doc, "Stop")[0]!, { ...base, hook_event_name: "Stop", stop_hook_active: false, last_assistant_message: "Fixed." }).code).toBe(0);
    const lines = readFileSync(join(r.root, ".context-capture/.codex-prompts-019a-thread"), "utf8").trimEnd().split("\n");
    expect(untimed(lines.map((l) => JSON.parse(l)))).toEqual([
      { role: "user", content: "fix it" },
      { role: "assistant", content: "Fixed." },
    ]);
    expect(commandsFor(doc, "PostToolUse", "Bash")).toEqual([`${binary()} hook post-tool-use --agent codex`]);

    // an old Codex session's files go at the next session start
    const old = join(r.root, ".context-capture/.codex-prompts-stale");
    writeFileSync(old, "x");
    const t = (Date.now() - 8 * 24 * 3600 * 1000) / 1000;
    require("node:fs").utimesSync(old, t, t);
    expect(runAsAgent(r, commandsFor(doc, "SessionStart")[0]!, { ...base, hook_event_name: "SessionStart", source: "startup" }).code).toBe(0);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(join(r.root, ".context-capture/.codex-prompts-019a-thread"))).toBe(true);
  });

  test("--agent all sets up every agent whose hooks live in the repository, says Droid was skipped; doctor checks each; uninstall removes all", async () => {
    const r = repo();
    const before = state(r);
    const out = await aiflare(r, ["install", "--agent", "all"]);
    expect(out.code).toBe(0);
    for (const rel of [".claude/settings.local.json", ".codex/hooks.json", ".cursor/hooks.json", ".qwen/settings.json", ".gemini/settings.json", ".github/hooks/aiflare.json"]) {
      expect(existsSync(join(r.root, rel))).toBe(true);
    }
    expect(readFileSync(join(r.root, "AGENTS.md"), "utf8")).toContain("context-capture");
    expect(readFileSync(join(r.root, "GEMINI.md"), "utf8")).toContain("context-capture");
    // Factory Droid's hooks are the user's own settings: skipped, with the flag that adds them
    expect(out.stdout).toContain("Skipped Factory Droid");
    expect(out.stdout).toContain("--factory-user-settings");
    expect(existsSync(join(r.home, ".factory", "settings.json"))).toBe(false);
    const doctor = await aiflare(r, ["doctor"]);
    for (const file of [".claude/settings.local.json", ".codex/hooks.json", ".cursor/hooks.json", ".qwen/settings.json", ".gemini/settings.json", ".github/hooks/aiflare.json"]) {
      expect(doctor.stdout).toContain(file);
    }
    expect((await aiflare(r, ["uninstall"])).code).toBe(0);
    expect(state(r)).toEqual(before);

    // with the flag, Droid's too; uninstall with it takes them out again
    const withDroid = await aiflare(r, ["install", "--agent", "all", "--factory-user-settings"]);
    expect(withDroid.code).toBe(0);
    expect(withDroid.stdout).not.toContain("Skipped Factory Droid");
    expect(readFileSync(join(r.home, ".factory", "settings.json"), "utf8")).toContain("hook stop --agent droid");
    expect((await aiflare(r, ["uninstall", "--factory-user-settings"])).code).toBe(0);
    expect(state(r)).toEqual(before);
    // install created the file: uninstall leaves none
    expect(existsSync(join(r.home, ".factory", "settings.json"))).toBe(false);
  });
});

describe("uninstall --purge", () => {
  test("refuses without a terminal or --yes, and with --yes deletes branches, index and live files", async () => {
    const r = repo();
    expect((await aiflare(r, ["install"])).code).toBe(0);
    const tree = r.git("mktree");
    const c = r.git("commit-tree", tree, "-m", "timeline");
    r.git("update-ref", "refs/heads/aiflare/timeline/v1", c);
    mkdirSync(join(r.root, ".git/aiflare"), { recursive: true });
    writeFileSync(join(r.root, ".git/aiflare/index.sqlite"), "x");

    const refused = await aiflare(r, ["uninstall", "--purge"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("--yes");
    expect(readFileSync(join(r.root, ".git/hooks/pre-push"), "utf8")).toContain("aiflare-git-hook");

    const kept = await aiflare(r, ["uninstall", "--dry-run"]);
    expect(kept.stdout).toContain("kept: aiflare/timeline/v1");

    const purged = await aiflare(r, ["uninstall", "--purge", "--yes"]);
    expect(purged.code).toBe(0);
    expect(r.tryGit("rev-parse", "--verify", "-q", "refs/heads/aiflare/timeline/v1").code).not.toBe(0);
    expect(existsSync(join(r.root, ".git/aiflare"))).toBe(false);
    expect(existsSync(join(r.root, ".context-capture"))).toBe(false);
    expect(r.git("fsck", "--no-dangling")).toBe("");
  });

  test("plain uninstall keeps the branches", async () => {
    const r = repo();
    expect((await aiflare(r, ["install"])).code).toBe(0);
    const c = r.git("commit-tree", r.git("mktree"), "-m", "timeline");
    r.git("update-ref", "refs/heads/aiflare/timeline/v1", c);
    const out = await aiflare(r, ["uninstall"]);
    expect(out.stdout).toContain("kept: aiflare/timeline/v1");
    expect(r.git("rev-parse", "refs/heads/aiflare/timeline/v1")).toBe(c);
  });
});

test("a chained hook that is not executable stays that way and is not run", async () => {
  const r = repo();
  writeFileSync(join(r.root, ".git/hooks/post-rewrite"), `#!/bin/sh\ntouch "${r.dir}/ran"\n`);
  chmodSync(join(r.root, ".git/hooks/post-rewrite"), 0o644);
  expect((await aiflare(r, ["install"])).code).toBe(0);
  r.git("commit", "-q", "--amend", "-m", "again");
  expect(existsSync(join(r.dir, "ran"))).toBe(false);
  expect((await aiflare(r, ["uninstall"])).code).toBe(0);
  expect(lstatSync(join(r.root, ".git/hooks/post-rewrite")).mode & 0o777).toBe(0o644);
});

describe("install and uninstall keep their promises", () => {
  test("install git-ignores the .claude/settings.local.json it creates; uninstall takes the line out again", async () => {
    const r = repo();
    expect((await aiflare(r, ["install"])).code).toBe(0);
    expect(r.tryGit("check-ignore", "-q", ".claude/settings.local.json").code).toBe(0);
    expect(r.git("status", "--porcelain", "--untracked-files=all")).not.toContain("settings.local.json");
    expect((await aiflare(r, ["uninstall"])).code).toBe(0);
    expect(existsSync(join(r.root, ".gitignore"))).toBe(false);
  });

  test("while an aiflare.yml exists, uninstall keeps its ignore line in the .gitignore install created", async () => {
    const r = repo();
    r.commit("first");
    expect((await aiflare(r, ["install"])).code).toBe(0);
    writeFileSync(join(r.root, "aiflare.yml"), "sync:\n  apiKey: afk_0123456789abcdef0123456789abcdef\n");
    const un = await aiflare(r, ["uninstall"]);
    expect(un.code).toBe(0);
    expect(un.stdout).toContain("the aiflare.yml line stays while aiflare.yml exists");
    expect(readFileSync(join(r.root, ".gitignore"), "utf8")).toBe("aiflare.yml\n");
    // the next `git add -A` does not take the key along
    r.git("add", "-A");
    expect(r.git("diff", "--cached", "--name-only")).not.toContain("aiflare.yml");
    expect(r.tryGit("check-ignore", "-q", "aiflare.yml").code).toBe(0);
  });

  test("uninstall never deletes a file git tracks: it takes aiflare's part out and says what to commit", async () => {
    const r = repo();
    r.commit("first", { ".gitignore": "dist/\n" });
    expect((await aiflare(r, ["install", "--shared"])).code).toBe(0);
    // the team committed what install created and changed
    r.git("add", ".gitignore", "CLAUDE.md", ".claude/settings.json");
    r.git("commit", "-q", "-m", "Add aiflare");
    const dry = await aiflare(r, ["uninstall", "--dry-run"]);
    expect(dry.stdout).toContain("Would leave to commit (git tracks them): .claude/settings.json, CLAUDE.md, .gitignore");
    const un = await aiflare(r, ["uninstall"]);
    expect(un.code).toBe(0);
    expect(un.stdout).toContain("Left to commit (git tracks them): .claude/settings.json, CLAUDE.md, .gitignore");
    expect(un.stdout).toContain('git commit -m "Remove aiflare" -- .claude/settings.json CLAUDE.md .gitignore');
    // modified, none deleted; what is left has nothing of aiflare's
    expect(r.tryGit("status", "--porcelain").stdout.trimEnd().split("\n").sort()).toEqual([" M .claude/settings.json", " M .gitignore", " M CLAUDE.md"]);
    expect(settings(r, ".claude/settings.json")).toEqual({});
    expect(readFileSync(join(r.root, "CLAUDE.md"), "utf8")).toBe("");
    expect(readFileSync(join(r.root, ".gitignore"), "utf8")).toBe("dist/\n");
    // untracked files install created still go
    expect(existsSync(join(r.root, ".claude/skills/why/SKILL.md"))).toBe(false);
  });

  test("a tracked file uninstall brings back to what was committed is not listed to commit", async () => {
    const r = repo();
    r.commit("first", { ".gitignore": "dist/\n" });
    expect((await aiflare(r, ["install"])).code).toBe(0);
    const un = await aiflare(r, ["uninstall"]);
    expect(un.code).toBe(0);
    expect(readFileSync(join(r.root, ".gitignore"), "utf8")).toBe("dist/\n");
    expect(un.stdout).not.toContain("to commit");
    expect(r.git("status", "--porcelain")).toBe("");
  });

  test("install leaves .gitignore alone when git already ignores settings.local.json", async () => {
    const r = repo();
    writeFileSync(join(r.root, ".git", "info", "exclude"), ".claude/settings.local.json\n");
    expect((await aiflare(r, ["install"])).code).toBe(0);
    expect(readFileSync(join(r.root, ".gitignore"), "utf8")).not.toContain("settings.local.json");
  });

  test.skipIf(!Bun.which("script"))("answering n to uninstall --purge cancels: exit 0, nothing changed", async () => {
    const r = repo();
    expect((await aiflare(r, ["install"])).code).toBe(0);
    const head = r.commit("a change");
    expect((await aiflare(r, ["capture", "--commit-hash", head, "--intent", "why"])).code).toBe(0);
    const before = state(r);
    const proc = Bun.spawn(["script", "-qec", `${binary()} uninstall --purge; echo "rc=$?"`, "/dev/null"], {
      cwd: r.root,
      env: r.env,
      stdin: new Blob(["n\n"]),
      stdout: "pipe",
    });
    const out = await new Response(proc.stdout).text();
    expect(out).toContain("Delete for good");
    expect(out).toContain("Cancelled: nothing was changed.");
    expect(out).toContain("rc=0");
    expect(out).not.toContain("terminal");
    expect(state(r)).toEqual(before);
    expect(r.git("for-each-ref", "--format=%(refname)", "refs/heads/aiflare")).toContain("aiflare/timeline/v1");
  });

  test("uninstall in a linked worktree keeps the shared git hooks while another worktree has aiflare, and says so", async () => {
    const r = repo();
    const wt = join(r.dir, "wt");
    r.git("worktree", "add", "-q", "-b", "feature", wt);
    expect((await aiflare(r, ["install"])).code).toBe(0);
    expect((await aiflare(r, ["install"], wt)).code).toBe(0);
    const hooks = join(r.root, ".git", "hooks");
    const res = await aiflare(r, ["uninstall"], wt);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/kept +.*pre-push +— git pre-push hook: shared with the worktree .*repo, where aiflare is still installed/);
    expect(readFileSync(join(hooks, "pre-push"), "utf8")).toContain("aiflare");
    expect(readFileSync(join(hooks, "post-rewrite"), "utf8")).toContain("aiflare");
    expect(existsSync(join(wt, ".claude", "settings.local.json"))).toBe(false);
    // the last one out removes them
    expect((await aiflare(r, ["uninstall"])).code).toBe(0);
    expect(existsSync(join(hooks, "pre-push"))).toBe(false);
  });
});
