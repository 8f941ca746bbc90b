/**
 * The user's journey end to end: install into a repository that already has its own Claude Code settings,
 * .gitignore and pre-push hook; Claude Code sessions driven through the hook commands the settings file holds
 * (run with `sh -c`, payload on stdin, as Claude Code runs them); what the user then reads; push and sync to a
 * real local backend; uninstall. Only the compiled binary and real git.
 */
import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, FIXTURES, binary, captureSettled, runBin, tempRepo, type RunResult, type TempRepo } from "../helpers.ts";
import { startBackend, writeConfig, type Backend } from "../sync-fixtures.ts";
import { records, storedTranscript } from "./capture-support.ts";

setDefaultTimeout(90_000);

const LOGS = join(FIXTURES, "CoorpAcademy__serverless-plugins", "logs");
const payloads = (p: string) => JSON.parse(readFileSync(join(LOGS, p), "utf8")) as Record<string, any>[];
const T = {
  start: payloads("session_start.json")[0]!,
  prompt: payloads("user_prompt_submit.json")[0]!,
  stop: payloads("abc7156b-6420-4373-a150-9b2eecad6805/stop.json")[0]!,
  bash: payloads("abc7156b-6420-4373-a150-9b2eecad6805/post_tool_use.json").find((p) => p.tool_name === "Bash")!,
  ask: payloads("abc7156b-6420-4373-a150-9b2eecad6805/post_tool_use.json").find((p) => p.tool_name === "AskUserQuestion")!,
  end: payloads("session_end.json")[0]!,
};
const TRANSCRIPT = join(FIXTURES, "marot__spotter/test/fixtures/transcripts/subagent.jsonl");

const ENTRY_FIELDS = [
  "commitHash", "title", "intent", "alternatives", "diffSummary", "tag", "changedFiles", "agentType",
  "claudeSessionId", "branch", "conversationSnippet", "continuation", "groupRootId", "capturedAt",
];

let cleanups: (() => void)[] = [];
beforeAll(() => {
  binary();
});
afterEach(() => {
  for (const c of cleanups.reverse()) c();
  cleanups = [];
});

interface HookDef {
  type: string;
  command: string;
  if?: string;
}
type Settings = { hooks: Record<string, { matcher?: string; hooks: HookDef[] }[]>; [k: string]: unknown };

/** Whether a settings matcher selects a tool, as Claude Code reads it (empty or `*`: all; else a regex). */
function matches(matcher: string | undefined, tool: string | undefined): boolean {
  if (!matcher || matcher === "*") return true;
  return tool !== undefined && new RegExp(`^(?:${matcher})$`).test(tool);
}

async function sh(command: string, cwd: string, env: Record<string, string>, stdin?: string): Promise<RunResult> {
  const proc = Bun.spawn(["sh", "-c", command], {
    cwd,
    env,
    stdin: stdin === undefined ? "ignore" : new Blob([stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** The `aiflare capture …` command exactly as the installed SKILL.md shows it, with this commit's values. */
function skillCommand(
  skill: string,
  f: { hash?: string; title: string; intent: string; alternatives?: string; diffSummary: string; tag: string; files: string[] },
): string {
  const block = /```sh\n([\s\S]*?)\n```/.exec(skill)?.[1];
  if (!block) throw new Error("SKILL.md has no sh block");
  const steps: [RegExp, string][] = [
    [/--title "[^"]*"/, `--title "${f.title}"`],
    [/(--intent "\$\(cat <<'EOF'\n)[\s\S]*?(\nEOF\n\)")/, `$1${f.intent}$2`],
    [/--alternatives "[^"]*"/, `--alternatives "${f.alternatives ?? ""}"`],
    [/(--diff-summary "\$\(cat <<'EOF'\n)[\s\S]*?(\nEOF\n\)")/, `$1${f.diffSummary}$2`],
    [/--tag [A-Z]+/, `--tag ${f.tag}`],
    // the hash the reminder named; without one, capture takes the session's commit waiting for its summary
    [/--commit-hash [0-9a-f]{40} \\\n\s*/, f.hash ? `--commit-hash ${f.hash} \\\n  ` : ""],
  ];
  let cmd = block;
  for (const [re, to] of steps) {
    if (!re.test(cmd)) throw new Error(`SKILL.md command has no match for ${re}`);
    cmd = cmd.replace(re, to);
  }
  return cmd;
}

/**
 * One Claude Code session in a repository whose hooks `aiflare install` wrote: each hook command of the settings
 * file runs through `sh -c` with the payload on stdin; the Bash tool sources `$CLAUDE_ENV_FILE` first.
 * The `if` filter is not applied (older Claude Code versions ignore it): the hook must tell commits apart itself.
 */
class ClaudeSession {
  readonly envFile: string;
  readonly transcript: string;
  constructor(
    readonly repo: TempRepo,
    readonly id: string,
    private readonly settings: Settings,
    /** runs the agent's git work one at a time, as git's index.lock makes parallel agents in one worktree wait */
    private readonly serialize: <X>(fn: () => Promise<X>) => Promise<X> = (fn) => fn(),
  ) {
    this.envFile = join(repo.dir, `claude-env-${id}.sh`);
    writeFileSync(this.envFile, "");
    const project = join(repo.home, ".claude", "projects", repo.root.replace(/[^A-Za-z0-9]/g, "-"));
    mkdirSync(project, { recursive: true });
    this.transcript = join(project, `${id}.jsonl`);
    copyFileSync(TRANSCRIPT, this.transcript);
  }

  private base() {
    return { session_id: this.id, transcript_path: this.transcript, cwd: this.repo.root };
  }

  /** Runs every hook the settings file holds for an event (and tool); returns aiflare's results. */
  async hook(event: string, payload: Record<string, unknown>, extraEnv: Record<string, string> = {}): Promise<RunResult[]> {
    const tool = payload.tool_name as string | undefined;
    const commands = (this.settings.hooks[event] ?? [])
      .filter((g) => event !== "PostToolUse" || matches(g.matcher, tool))
      .flatMap((g) => g.hooks.map((h) => h.command));
    const env = { ...this.repo.env, CLAUDE_PROJECT_DIR: this.repo.root, ...extraEnv };
    const body = JSON.stringify({ ...payload, ...this.base(), hook_event_name: event });
    const results = await Promise.all(commands.map(async (c) => ({ c, r: await sh(c, this.repo.root, env, body) })));
    for (const { r } of results) expect(r.code).toBe(0);
    // what the hook queued is stored by the capture worker it started
    await captureSettled(this.repo.root);
    return results.filter(({ c }) => c.startsWith(BIN)).map(({ r }) => r);
  }

  async start(): Promise<void> {
    const [r] = await this.hook("SessionStart", { ...T.start, source: "startup" }, { CLAUDE_ENV_FILE: this.envFile });
    expect(r!.stdout).toBe("");
  }

  async prompt(text: string): Promise<void> {
    const [r] = await this.hook("UserPromptSubmit", { ...T.prompt, prompt: text });
    expect(r!.stdout).toBe("");
  }

  async stop(message: string): Promise<void> {
    const out = await this.hook("Stop", { ...T.stop, stop_hook_active: false, last_assistant_message: message });
    expect(out.map((r) => r.stdout)).toEqual([""]);
  }

  /** The agent's Bash tool runs `command`, then Claude Code fires PostToolUse; returns both outputs. */
  async bash(command: string): Promise<{ run: RunResult; hook: string }> {
    const run = await this.serialize(() =>
      sh(`. '${this.envFile}'\n${command}`, this.repo.root, { ...this.repo.env, CLAUDE_PROJECT_DIR: this.repo.root }),
    );
    const out = await this.hook("PostToolUse", {
      ...T.bash,
      tool_input: { command, description: "Run command" },
      tool_response: { stdout: run.stdout.trimEnd(), stderr: run.stderr.trimEnd(), interrupted: false, isImage: false, noOutputExpected: false },
    });
    expect(out).toHaveLength(1);
    return { run, hook: out[0]!.stdout };
  }

  /** AskUserQuestion answered by the user: Claude Code's PostToolUse carries the questions and answers. */
  async ask(question: string, answer: string): Promise<void> {
    const q = { question, header: "Choice", options: [{ label: answer, description: "" }, { label: "Other", description: "" }], multiSelect: false };
    const out = await this.hook("PostToolUse", {
      ...T.ask,
      tool_input: { questions: [q] },
      tool_response: { questions: [q], answers: { [question]: answer }, annotations: {} },
    });
    expect(out.map((r) => r.stdout)).toEqual([""]);
  }

  async end(): Promise<void> {
    const out = await this.hook("SessionEnd", { ...T.end, reason: "prompt_input_exit" });
    expect(out.map((r) => r.stdout)).toEqual([""]);
  }
}

/** The commit a PostToolUse output tells the agent to summarise (the documented JSON, nothing else). */
function namedCommit(stdout: string): string {
  const out = JSON.parse(stdout);
  expect(Object.keys(out)).toEqual(["hookSpecificOutput"]);
  expect(out.hookSpecificOutput.hookEventName).toBe("PostToolUse");
  const text: string = out.hookSpecificOutput.additionalContext;
  expect(text).toContain("context-capture");
  const hashes = [...new Set(text.match(/\b[0-9a-f]{40}\b/g) ?? [])];
  expect(hashes).toHaveLength(1);
  return hashes[0]!;
}

function write(repo: TempRepo, path: string, text: string): void {
  mkdirSync(join(repo.root, path, ".."), { recursive: true });
  writeFileSync(join(repo.root, path), text);
}

function entry(repo: TempRepo, hash: string): Record<string, any> {
  return JSON.parse(repo.git("show", `aiflare/timeline/v1:entries/${hash.slice(0, 2)}/${hash.slice(2)}.json`));
}

function entryPaths(repo: TempRepo): string[] {
  return repo.git("ls-tree", "-r", "--name-only", "aiflare/timeline/v1").split("\n").filter(Boolean).sort();
}

const pathOf = (h: string) => `entries/${h.slice(0, 2)}/${h.slice(2)}.json`;
const userLines = (snippet: string) =>
  snippet.split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((l) => l.role === "user").map((l) => l.content);

async function waitFor(cond: () => boolean, ms = 20_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!cond() && Date.now() < deadline) await Bun.sleep(50);
  return cond();
}

function readBytes(path: string): string {
  return `${(statSync(path).mode & 0o777).toString(8)} ${readFileSync(path).toString("base64")}`;
}

const USER_SETTINGS = `{
  "permissions": { "allow": ["Bash(npm test:*)"] },
  "env": { "EXAMPLE": "1" },
  "hooks": {
    "Stop": [{ "hooks": [{ "type": "command", "command": "echo stop >> \\"$CLAUDE_PROJECT_DIR/.git/user-stop.log\\"" }] }],
    "PostToolUse": [{ "matcher": "Write|Edit", "hooks": [{ "type": "command", "command": "true" }] }]
  }
}
`;
const USER_PRE_PUSH = `#!/bin/sh
# the user's own pre-push: records what git gave it
{ echo "args: $1 $2"; cat; } >> "$(git rev-parse --git-dir)/user-pre-push.log"
`;

describe("the user's journey", () => {
  test("install, a Claude Code session, reading the history, push and sync, uninstall", async () => {
    const repo = tempRepo();
    cleanups.push(() => repo.cleanup());
    const aiflare = (args: string[], env: Record<string, string> = {}) => runBin(args, { cwd: repo.root, env: { ...repo.env, ...env } });

    // ── the repository as the user has it ─────────────────────────────────────────────────────────────
    write(repo, ".claude/settings.local.json", USER_SETTINGS);
    write(repo, ".gitignore", "node_modules\n*.log");
    repo.git("add", ".gitignore");
    repo.git("commit", "-q", "-m", "Ignore dependencies");
    const prePush = join(repo.root, ".git", "hooks", "pre-push");
    writeFileSync(prePush, USER_PRE_PUSH);
    chmodSync(prePush, 0o755);
    const watched = [join(repo.root, ".claude/settings.local.json"), join(repo.root, ".gitignore"), prePush];
    const before = watched.map(readBytes);

    // ── aiflare install ────────────────────────────────────────────────────────────────────────────────
    const inst = await aiflare(["install"]);
    expect(inst.code).toBe(0);
    for (const p of [".claude/settings.local.json", "SKILL.md", "CLAUDE.md", ".gitignore", "pre-push", "post-rewrite"]) {
      expect(inst.stdout).toContain(p);
    }
    expect(readFileSync(join(repo.root, ".gitignore"), "utf8")).toBe("node_modules\n*.log\n.context-capture/\naiflare.yml\n");
    const settings = JSON.parse(readFileSync(join(repo.root, ".claude/settings.local.json"), "utf8")) as Settings;
    expect(settings.permissions).toEqual({ allow: ["Bash(npm test:*)"] });
    expect(settings.env).toEqual({ EXAMPLE: "1" });
    expect(settings.hooks.Stop!.map((g) => g.hooks[0]!.command)).toEqual([
      'echo stop >> "$CLAUDE_PROJECT_DIR/.git/user-stop.log"',
      `${BIN} hook stop`,
    ]);
    const skill = readFileSync(join(repo.root, ".claude/skills/context-capture/SKILL.md"), "utf8");
    expect(skill).toContain(`${BIN} capture`);

    // ── a Claude Code session ──────────────────────────────────────────────────────────────────────────
    const S = "7d3c1a52-5a8e-4b7e-9a41-3f0c2b9e6d10";
    const claude = new ClaudeSession(repo, S, settings);
    await claude.start();
    expect(readFileSync(claude.envFile, "utf8")).toBe(`export CLAUDE_SESSION_ID='${S}'\n`);

    // request 1: the agent writes the helper and commits
    await claude.prompt("Add a greet() helper in src/greet.ts");
    expect((await claude.bash("ls")).hook).toBe("");
    write(repo, "src/greet.ts", "export function greet(name: string): string {\n  return `Hello, ${name}`;\n}\n");
    const c1run = await claude.bash('git add src/greet.ts && git commit -m "Add greet helper"');
    expect(c1run.run.code).toBe(0);
    const c1 = repo.git("rev-parse", "HEAD");
    expect(namedCommit(c1run.hook)).toBe(c1);
    // the agent follows the skill; the session id reaches capture through the env file only
    const cap1 = await claude.bash(
      skillCommand(skill, {
        title: "Add greet helper",
        intent: "**Problem:** no way to greet users.\n**Solution:** a greet() helper.\n**Effect:** callers share one greeting.",
        diffSummary: "- `src/greet.ts`: new greet(name).",
        tag: "FEATURE",
        files: ["src/greet.ts"],
      }),
    );
    expect(cap1.run.code).toBe(0);
    expect(cap1.run.stderr).toBe("");
    expect(cap1.run.stdout.trim().split("\n")).toHaveLength(1);
    expect(cap1.run.stdout).toContain(c1.slice(0, 12));
    expect(cap1.hook).toBe("");
    expect(entry(repo, c1)).toMatchObject({ claudeSessionId: S, groupRootId: null, continuation: false, intent: expect.stringContaining("greet()") });

    // the agent asks; the user answers; part 2 of the same request
    await claude.ask("Should greet() also offer a formal style?", "Yes, add formal");
    write(repo, "src/greet.ts", "export function greet(name: string): string {\n  return `Hello, ${name}`;\n}\n\nexport function greetFormally(name: string): string {\n  return `Good day, ${name}`;\n}\n");
    const c2run = await claude.bash("git commit -am 'Add formal greeting'");
    const c2 = repo.git("rev-parse", "HEAD");
    expect(namedCommit(c2run.hook)).toBe(c2);
    expect((await claude.bash(
      skillCommand(skill, {
        title: "Add formal greeting",
        intent: "**Problem:** formal contexts.\n**Solution:** greetFormally().\n**Effect:** both styles.",
        alternatives: "A style flag on greet(): rejected, the user asked for a separate function.",
        diffSummary: "- `src/greet.ts`: adds greetFormally(name).",
        tag: "FEATURE",
        files: ["src/greet.ts"],
      }),
    )).run.code).toBe(0);
    await claude.stop("Added greet() and greetFormally().");
    const e2 = entry(repo, c2);
    expect(e2).toMatchObject({ groupRootId: c1, continuation: true });
    // the question and the user's answer are part of the commit's conversation
    expect(userLines(e2.conversationSnippet)).toEqual(["Yes, add formal"]);
    expect(e2.conversationSnippet).toContain("Should greet() also offer a formal style?");

    // request 2, typed as a new prompt: a new root
    await claude.prompt("Now document greet in the README");
    write(repo, "README.md", "# test\n\n## Greeting\n\nUse `greet(name)`.\n");
    const c3run = await claude.bash("git add README.md && git commit -q -m 'Document greet'");
    const c3 = repo.git("rev-parse", "HEAD");
    expect(namedCommit(c3run.hook)).toBe(c3);
    await claude.bash(skillCommand(skill, { title: "Document greet", intent: "**Problem:** undocumented.", diffSummary: "- `README.md`: greeting section.", tag: "DOCS", files: ["README.md"] }));
    await claude.stop("Documented greet in the README.");
    expect(entry(repo, c3)).toMatchObject({ groupRootId: null, continuation: false, tag: "DOCS" });

    // the user asks for more in the same commit: the agent amends; git's post-rewrite hook moves the entry
    await claude.prompt("Mention greetFormally in that README commit too");
    write(repo, "README.md", "# test\n\n## Greeting\n\nUse `greet(name)`, or `greetFormally(name)` for formal text.\n");
    const c3arun = await claude.bash("git add README.md && git commit -q --amend -m 'Document greet and greetFormally'");
    expect(c3arun.run.code).toBe(0);
    const c3a = repo.git("rev-parse", "HEAD");
    expect(c3a).not.toBe(c3);
    // the agent is reminded, like after any commit, and captures the amended commit again (SKILL.md says so)
    expect(namedCommit(c3arun.hook)).toBe(c3a);
    await claude.bash(skillCommand(skill, { title: "Document greet and greetFormally", intent: "**Problem:** undocumented.", diffSummary: "- `README.md`: greeting section.", tag: "DOCS", files: ["README.md"] }));
    await claude.stop("Amended the README commit.");
    expect(entryPaths(repo)).toEqual([c1, c2, c3a].map(pathOf).sort());
    const e3 = entry(repo, c3a);
    expect(e3).toMatchObject({ title: "Document greet and greetFormally", groupRootId: null, changedFiles: ["README.md"] });
    expect(userLines(e3.conversationSnippet)).toEqual(["Now document greet in the README", "Mention greetFormally in that README commit too"]);

    // request 3 on a branch that will be pushed later
    await claude.prompt("Try a spike of greetings in French on a new branch");
    write(repo, "src/fr.ts", "export const bonjour = (n: string) => `Bonjour, ${n}`;\n");
    const c4run = await claude.bash("git switch -q -c spike && git add src/fr.ts && git commit -q -m 'Spike: French greeting'");
    const c4 = repo.git("rev-parse", "HEAD");
    expect(namedCommit(c4run.hook)).toBe(c4);
    await claude.bash(skillCommand(skill, { title: "Spike French greeting", intent: "**Problem:** French users.", diffSummary: "- `src/fr.ts`: bonjour().", tag: "FEATURE", files: ["src/fr.ts"] }));
    await claude.bash("git switch -q main");
    await claude.stop("Spike is on branch spike.");
    expect(entry(repo, c4)).toMatchObject({ branch: "spike", groupRootId: null });

    await claude.end();
    // what stays live is what no commit took yet: the last reply, for the next commit if the session resumes
    expect(readdirSync(join(repo.root, ".context-capture")).filter((f) => f.includes(S)).sort()).toEqual([
      `.claude-offset-${S}`,
      `.claude-prompts-${S}`,
    ]);
    expect(records(readFileSync(join(repo.root, ".context-capture", `.claude-prompts-${S}`), "utf8"))).toEqual([
      { role: "assistant", content: "Spike is on branch spike." },
    ]);
    const stored = storedTranscript(repo, S);
    expect(userLines(stored)).toEqual([
      "Add a greet() helper in src/greet.ts",
      "Yes, add formal",
      "Now document greet in the README",
      "Mention greetFormally in that README commit too",
      "Try a spike of greetings in French on a new branch",
    ]);
    // the user's own Stop hook ran every time too
    expect(readFileSync(join(repo.root, ".git/user-stop.log"), "utf8")).toBe("stop\n".repeat(4));

    // ── what the user reads ────────────────────────────────────────────────────────────────────────────
    const list = await aiflare(["history", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).not.toMatch(/\x1b\[/);
    const lines = list.stdout.split("\n");
    const heading = lines.findIndex((l) => l.startsWith(`Session ${S.slice(0, 8)}`));
    expect(heading).toBeGreaterThanOrEqual(0);
    expect(lines[heading]).toContain('"Add a greet() helper in src/greet.ts"');
    expect(lines[heading]).toContain("Claude Code");
    const row = (h: string) => lines.findIndex((l) => l.includes(h.slice(0, 7)));
    expect(lines[row(c1)]).toMatch(/^● [0-9a-f]{7}\s+FEATURE\s+Add greet helper/);
    expect(lines[row(c2)]).toMatch(/^\s+└ [0-9a-f]{7}\s+FEATURE\s+Add formal greeting/);
    expect(lines[row(c3a)]).toMatch(/^● [0-9a-f]{7}\s+DOCS\s+Document greet and greetFormally/);
    expect(row(c1)).toBeLessThan(row(c2));
    expect(row(c2)).toBeLessThan(row(c3a));
    expect(row(c3a)).toBeLessThan(row(c4));
    expect(lines[row(c1) + 1]).toContain('💬 "Add a greet() helper in src/greet.ts"');
    expect(lines[row(c2) + 1]).toContain('💬 "Yes, add formal"');
    expect(lines[row(c3a) + 1]).toContain('💬 "Now document greet in the README"');
    expect(list.stdout).not.toContain(c3.slice(0, 7));

    const json = await aiflare(["history", "list", "--json"]);
    expect(json.code).toBe(0);
    const listed = JSON.parse(json.stdout) as Record<string, any>[];
    expect(listed.map((e) => e.commitHash).sort()).toEqual([c1, c2, c3a, c4].sort());
    for (const e of listed) {
      for (const f of ENTRY_FIELDS) expect(e).toHaveProperty(f);
      expect(e).toMatchObject({ agentType: "CLAUDE_CODE", claudeSessionId: S });
      expect(Number.isNaN(Date.parse(e.capturedAt))).toBe(false);
    }
    expect(listed.find((e) => e.commitHash === c2)).toMatchObject({ groupRootId: c1, continuation: true, branch: "main" });

    const show = await aiflare(["history", "show", c2.slice(0, 7)]);
    expect(show.code).toBe(0);
    for (const s of [c2, "Add formal greeting", "greetFormally()", "A style flag on greet()", "src/greet.ts", c1.slice(0, 7), S, "Should greet() also offer a formal style?", "Yes, add formal"]) {
      expect(show.stdout).toContain(s);
    }

    const why = await aiflare(["why", "src/greet.ts"]);
    expect(why.code).toBe(0);
    expect(why.stdout.indexOf(c2.slice(0, 7))).toBeGreaterThanOrEqual(0);
    expect(why.stdout.indexOf(c2.slice(0, 7))).toBeLessThan(why.stdout.indexOf(c1.slice(0, 7)));
    expect(why.stdout).toContain("**Problem:** no way to greet users.");
    expect(why.stdout).toContain('💬 "Add a greet() helper in src/greet.ts"');
    // lines 5-7 are greetFormally: only the second commit
    const whyLines = await aiflare(["why", "src/greet.ts:5-7"]);
    expect(whyLines.code).toBe(0);
    expect(whyLines.stdout).toContain(c2.slice(0, 7));
    expect(whyLines.stdout).not.toContain(c1.slice(0, 7));
    const whyJson = JSON.parse((await aiflare(["why", "src/greet.ts:1", "--json"])).stdout);
    expect(JSON.stringify(whyJson)).toContain(c1);
    expect(JSON.stringify(whyJson)).not.toContain(c2);

    const doctor = await aiflare(["doctor"]);
    expect(doctor.code).toBe(0);
    const checks = doctor.stdout.split("\n").filter((l) => /^[✓✗!] /.test(l));
    expect(checks.length).toBeGreaterThanOrEqual(8);
    expect(checks.filter((l) => l.startsWith("✗"))).toEqual([]);

    // ── push to a remote with a backend configured ─────────────────────────────────────────────────────
    const be: Backend = startBackend();
    cleanups.push(() => be.stop());
    const KEY = "ak_live_journey_0123456789WXYZ";
    writeConfig(repo.root, be.url, KEY);
    expect(repo.git("status", "--porcelain", "--", "aiflare.yml")).toBe("");
    const remote = join(repo.dir, "remote.git");
    expect((await sh(`git init -q --bare '${remote}'`, repo.dir, repo.env)).code).toBe(0);
    repo.git("remote", "add", "origin", remote);
    const git = (cmd: string) => sh(cmd, repo.root, repo.env);

    const push = await git("git push -q origin main");
    expect(push.code).toBe(0);
    const userLog = () => readFileSync(join(repo.root, ".git/user-pre-push.log"), "utf8");
    expect(userLog()).toContain(`args: origin ${remote}`);
    expect(userLog()).toContain(`refs/heads/main ${c3a} refs/heads/main ${"0".repeat(40)}`);
    // the push returned at once; the sync runs detached in the background
    const syncsLogged = () =>
      readFileSync(join(repo.root, ".context-capture/aiflare.log"), "utf8").split("\n").filter((l) => l.includes("sync (pre-push): sent")).length;
    expect(await waitFor(() => syncsLogged() === 1)).toBe(true);
    expect(be.captures().map((c) => c.commitHash).sort()).toEqual([c1, c2, c3a].sort());
    expect(be.sessions().map((s) => s.claudeSessionId)).toEqual([S]);
    expect(be.received.every((r) => r.key === KEY)).toBe(true);
    expect(be.captures().find((c) => c.commitHash === c2)).toMatchObject({ groupRootId: c1, continuation: true });

    const all = await git("git push --all origin");
    expect(all.code).not.toBe(0);
    expect(all.stderr).toContain("push refused");
    expect(all.stderr).toContain("aiflare/timeline/v1");
    expect(repo.git("ls-remote", "origin")).not.toContain("aiflare/");
    expect(repo.git("ls-remote", "origin", "refs/heads/spike")).toBe("");

    expect((await git("git push -q origin spike")).code).toBe(0);
    // the background sync logs its outcome when it is done
    expect(await waitFor(() => syncsLogged() === 2)).toBe(true);
    expect(be.captures().map((c) => c.commitHash).sort()).toEqual([c1, c2, c3a, c4].sort());
    // the session was accepted with the first push and has not changed since
    expect(be.sessions()).toHaveLength(1);

    const n = be.received.length;
    const sync = await aiflare(["sync"]);
    expect(sync.code).toBe(0);
    expect(sync.stdout).toContain("Nothing to send");
    expect(be.received.length).toBe(n);
    expect(JSON.stringify(be.received)).not.toContain(repo.home);

    // ── aiflare uninstall ──────────────────────────────────────────────────────────────────────────────
    const un = await aiflare(["uninstall"]);
    expect(un.code).toBe(0);
    // aiflare.yml holds the key: its ignore line stays while the file exists; everything else is as it was
    expect(watched.map(readBytes).filter((_, i) => i !== 1)).toEqual(before.filter((_, i) => i !== 1));
    expect(readFileSync(join(repo.root, ".gitignore"), "utf8")).toBe("node_modules\n*.log\naiflare.yml\n");
    expect(repo.git("status", "--porcelain", "--", "aiflare.yml")).toBe("");
    for (const p of [".claude/skills", "CLAUDE.md", ".git/hooks/post-rewrite", ".git/hooks/pre-push.aiflare-chained"]) {
      expect(existsSync(join(repo.root, p))).toBe(false);
    }
    expect(repo.git("rev-parse", "--verify", "-q", "aiflare/timeline/v1")).toMatch(/^[0-9a-f]{40}$/);
    expect(repo.git("rev-parse", "--verify", "-q", "aiflare/sessions/v1")).toMatch(/^[0-9a-f]{40}$/);
    expect(repo.tryGit("fsck", "--strict").code).toBe(0);
    // the history is still there to read
    expect((await aiflare(["history", "list"])).stdout).toContain(c1.slice(0, 7));
  });

  test("two sessions in one repository, their hooks running concurrently: each keeps its own deltas and groups", async () => {
    const repo = tempRepo();
    cleanups.push(() => repo.cleanup());
    expect((await runBin(["install"], { cwd: repo.root, env: repo.env })).code).toBe(0);
    const settings = JSON.parse(readFileSync(join(repo.root, ".claude/settings.local.json"), "utf8")) as Settings;
    const skill = readFileSync(join(repo.root, ".claude/skills/context-capture/SKILL.md"), "utf8");
    let chain: Promise<unknown> = Promise.resolve();
    const serialize = <X>(fn: () => Promise<X>): Promise<X> => {
      const next = chain.then(fn);
      chain = next.catch(() => undefined);
      return next;
    };
    const A = new ClaudeSession(repo, "0a1f6c2e-alpha-4c1b-9d7e-000000000001", settings, serialize);
    const B = new ClaudeSession(repo, "0b2e7d3f-bravo-4c1b-9d7e-000000000002", settings, serialize);

    /** The agent writes a file and commits it (git prints `[main abc1234]`); the hook names it; the agent captures. */
    async function work(s: ClaudeSession, file: string, subject: string): Promise<string> {
      write(repo, file, `${subject}\n`);
      const { run, hook } = await s.bash(`git add ${file} && git commit -m '${subject}'`);
      expect(run.code).toBe(0);
      const short = /^\[main ([0-9a-f]{7,})\]/m.exec(run.stdout)![1]!;
      const hash = namedCommit(hook);
      expect(hash.startsWith(short)).toBe(true);
      const cap = await s.bash(
        skillCommand(skill, { hash, title: subject, intent: `**Problem:** ${subject}.`, diffSummary: `- \`${file}\`: new.`, tag: "FEATURE", files: [file] }),
      );
      expect(cap.run.code).toBe(0);
      return hash;
    }

    const alpha = async () => {
      await A.prompt("A1: add the alpha module with a test");
      const a1 = await work(A, "alpha/index.ts", "Add alpha");
      const a1b = await work(A, "alpha/index.test.ts", "Test alpha");
      await A.stop("Alpha and its test are in.");
      await A.prompt("A2: add an alpha README");
      const a2 = await work(A, "alpha/README.md", "Document alpha");
      await A.stop("Documented alpha.");
      return { a1, a1b, a2 };
    };
    const bravo = async () => {
      await B.prompt("B1: add the bravo module");
      const b1 = await work(B, "bravo/index.ts", "Add bravo");
      await B.ask("Should bravo be async?", "Yes, async");
      const b2 = await work(B, "bravo/async.ts", "Make bravo async");
      await B.stop("Bravo is async now.");
      await B.prompt("B3: add a bravo changelog");
      const b3 = await work(B, "bravo/CHANGELOG.md", "Start bravo changelog");
      await B.stop("Changelog started.");
      return { b1, b2, b3 };
    };

    await Promise.all([A.start(), B.start()]);
    const [{ a1, a1b, a2 }, { b1, b2, b3 }] = await Promise.all([alpha(), bravo()]);
    await Promise.all([A.end(), B.end()]);

    // nothing lost: six commits, six entries, each in its own session with its own delta and group
    expect(entryPaths(repo)).toEqual([a1, a1b, a2, b1, b2, b3].map(pathOf).sort());
    const e = (h: string) => entry(repo, h);
    for (const h of [a1, a1b, a2]) expect(e(h).claudeSessionId).toBe(A.id);
    for (const h of [b1, b2, b3]) expect(e(h).claudeSessionId).toBe(B.id);
    expect(e(a1)).toMatchObject({ groupRootId: null, continuation: false, changedFiles: ["alpha/index.ts"] });
    expect(e(a1b)).toMatchObject({ groupRootId: a1, continuation: false, changedFiles: ["alpha/index.test.ts"] });
    expect(e(a2)).toMatchObject({ groupRootId: null, continuation: false });
    expect(e(b1)).toMatchObject({ groupRootId: null, continuation: false, changedFiles: ["bravo/index.ts"] });
    expect(e(b2)).toMatchObject({ groupRootId: b1, continuation: true });
    expect(userLines(e(b2).conversationSnippet)).toEqual(["Yes, async"]);
    expect(e(b3)).toMatchObject({ groupRootId: null, continuation: false });
    expect(userLines(e(a1).conversationSnippet)).toEqual(["A1: add the alpha module with a test"]);
    expect(userLines(e(a1b).conversationSnippet)).toEqual([]);
    expect(userLines(e(a2).conversationSnippet)).toEqual(["A2: add an alpha README"]);
    expect(e(a2).conversationSnippet).toContain("Alpha and its test are in.");
    expect(userLines(e(b1).conversationSnippet)).toEqual(["B1: add the bravo module"]);
    expect(userLines(e(b3).conversationSnippet)).toEqual(["B3: add a bravo changelog"]);
    expect(e(b3).conversationSnippet).toContain("Bravo is async now.");

    // each stored transcript holds its own session only
    const transcript = (id: string) => userLines(storedTranscript(repo, id));
    expect(transcript(A.id)).toEqual(["A1: add the alpha module with a test", "A2: add an alpha README"]);
    expect(transcript(B.id)).toEqual(["B1: add the bravo module", "Yes, async", "B3: add a bravo changelog"]);

    const list = await runBin(["history", "list"], { cwd: repo.root, env: repo.env });
    expect(list.stdout).toContain(`Session ${A.id.slice(0, 8)}`);
    expect(list.stdout).toContain(`Session ${B.id.slice(0, 8)}`);
    const onlyB = JSON.parse((await runBin(["history", "list", "--json", "--session", B.id], { cwd: repo.root, env: repo.env })).stdout);
    expect(onlyB.map((x: { commitHash: string }) => x.commitHash).sort()).toEqual([b1, b2, b3].sort());
    expect(repo.tryGit("fsck", "--strict").code).toBe(0);
  });
});
