/**
 * The commit hook's cost follows what the conversation grew by since the last commit, not its whole length: the
 * same commit (2 KB of new conversation) timed after a short conversation and after a 20 MB one already stored.
 */
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { report, sample, tempDir, timeProcess } from "./lib.ts";
import { testEnv } from "../test/helpers.ts";

const BIN = resolve(import.meta.dir, "..", "dist", "aiflare");
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const home = tempDir("aiflare-bench-home-");
const env = testEnv(home);

function git(cwd: string, args: string[]): void {
  const r = Bun.spawnSync(["git", ...args], { cwd, env });
  if (r.exitCode !== 0) throw new Error(`git ${args[0]} failed: ${r.stderr.toString()}`);
}

function hook(repo: string, event: string, payload: Record<string, unknown>): void {
  Bun.spawnSync([BIN, "hook", event], { cwd: repo, env, stdin: Buffer.from(JSON.stringify({ cwd: repo, ...payload })) });
}

/** A repository whose session already has `mb` MB of conversation, stored by one earlier commit. */
function repoWithConversation(mb: number): string {
  const repo = tempDir();
  git(repo, ["init", "-q", "-b", "main"]);
  writeFileSync(join(repo, "README.md"), "# bench\n");
  git(repo, ["add", "-A"]);
  git(repo, ["commit", "-q", "-m", "init"]);
  const dir = join(repo, ".context-capture");
  mkdirSync(dir, { recursive: true });
  const line = `${JSON.stringify({ role: "assistant", content: "z".repeat(1000) })}\n`;
  appendFileSync(join(dir, ".claude-prompts-s"), line.repeat(Math.ceil((mb * 1024 * 1024) / line.length)));
  commitAndHook(repo, -1);
  return repo;
}

let n = 0;
function commitAndHook(repo: string, i: number): number {
  hook(repo, "user-prompt-submit", { session_id: "s", prompt: `change ${i} ${"x".repeat(400)}` });
  hook(repo, "stop", { session_id: "s", stop_hook_active: false, last_assistant_message: `done ${i} ${"y".repeat(1500)}` });
  writeFileSync(join(repo, `f${n++}.txt`), `${i}\n`);
  git(repo, ["add", "-A"]);
  git(repo, ["commit", "-q", "-m", `feat: change ${i}`]);
  const payload = {
    session_id: "s",
    hook_event_name: "PostToolUse",
    tool_name: "Bash",
    tool_input: { command: `git commit -q -m "feat: change ${i}"` },
    tool_response: { stdout: "", stderr: "" },
    duration_ms: 200,
  };
  return timeProcess([BIN, "hook", "post-tool-use"], { cwd: repo, env, stdin: JSON.stringify(payload) });
}

const small = repoWithConversation(0.01);
const large = repoWithConversation(20);
report("hook post-tool-use commit, 10 KB conversation before", sample(RUNS, (i) => commitAndHook(small, i), 2));
report("hook post-tool-use commit, 20 MB conversation before", sample(RUNS, (i) => commitAndHook(large, i), 2));
Bun.spawnSync(["rm", "-rf", small, large, home]);
