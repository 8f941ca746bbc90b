/**
 * install/doctor timings, and what install adds to the paths that run often: Codex's session-start
 * (stale-file clean-up over a busy .context-capture/) and the git hook wrapper around `aiflare hook`.
 * Baselines are measured in the same process.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { report, sample, tempDir, timeProcess } from "./lib.ts";

const BIN = join(import.meta.dir, "..", "dist", "aiflare");
const dir = tempDir();
const home = join(dir, "home");
const root = join(dir, "repo");
mkdirSync(home);
mkdirSync(root);
const env: Record<string, string> = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "b",
  GIT_AUTHOR_EMAIL: "b@example.com",
  GIT_COMMITTER_NAME: "b",
  GIT_COMMITTER_EMAIL: "b@example.com",
};
const git = (...args: string[]) => Bun.spawnSync(["git", ...args], { cwd: root, env, stdout: "pipe" }).stdout.toString().trim();
git("init", "-q", "-b", "main");
writeFileSync(join(root, "README.md"), "# bench\n");
git("add", "-A");
git("commit", "-q", "-m", "init");

const N = 25;
const version = sample(N, () => timeProcess([BIN, "--version"], { cwd: root, env }));
report("aiflare --version (baseline)", version);

const first = timeProcess([BIN, "install", "--agent", "all"], { cwd: root, env });
console.log(`first install --agent all: ${first.toFixed(1)} ms`);
report("install again (nothing to change)", sample(N, () => timeProcess([BIN, "install", "--agent", "all"], { cwd: root, env })), version, "< 150 ms");
report("install --dry-run", sample(N, () => timeProcess([BIN, "install", "--dry-run"], { cwd: root, env })), version);
const doctorCmd = [BIN, "doctor"];
report("doctor", sample(N, () => {
  const t0 = performance.now();
  Bun.spawnSync(doctorCmd, { cwd: root, env, stdout: "ignore", stderr: "ignore" });
  return performance.now() - t0;
}), version, "< 500 ms");

// A busy .context-capture/: 100 live sessions of each agent (3 files each).
const cc = join(root, ".context-capture");
mkdirSync(cc, { recursive: true });
for (let i = 0; i < 100; i++) {
  for (const agent of ["claude", "codex"]) {
    for (const kind of ["prompts", "offset", "conversation-delta"]) writeFileSync(join(cc, `.${agent}-${kind}-s${i}`), "{}\n");
  }
}
const payload = JSON.stringify({ session_id: "bench-session", cwd: root, hook_event_name: "SessionStart", source: "startup" });
const claudeStart = sample(N, () => timeProcess([BIN, "hook", "session-start"], { cwd: root, env, stdin: payload }));
report("hook session-start (claude, baseline)", claudeStart);
report("hook session-start --agent codex (+clean-up, 600 files)", sample(N, () => timeProcess([BIN, "hook", "session-start", "--agent", "codex"], { cwd: root, env, stdin: payload })), claudeStart, "ratio < 1.2x");

// The wrapper git runs: sh + mktemp + cat + the binary, against calling the binary directly.
const input = `${"a".repeat(40)} ${"b".repeat(40)}\n`;
const direct = sample(N, () => {
  const t0 = performance.now();
  Bun.spawnSync([BIN, "hook", "post-rewrite", "amend"], { cwd: root, env, stdin: new Blob([input]), stdout: "ignore", stderr: "ignore" });
  return performance.now() - t0;
});
report("aiflare hook post-rewrite, direct (baseline)", direct);
report("through the installed git hook wrapper", sample(N, () => timeProcess([join(root, ".git/hooks/post-rewrite"), "amend"], { cwd: root, env, stdin: input })), direct, "overhead < 15 ms");

Bun.spawnSync(["rm", "-rf", dir]);
