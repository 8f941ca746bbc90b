/**
 * Capture in a big repository (whole-process wall times of the compiled binary): `aiflare capture` and the commit
 * hook, and their peak RSS, in a repository with a ~200 MB pack that also holds the timeline (target ≤ 100 MB).
 * The capture and commit-hook goals at 0, 10,000 and 100,000 entries are rows of goals.bench.ts.
 * Baseline: `git rev-parse HEAD` in the same repository, measured in the same process.
 */
import { rmSync, writeFileSync, mkdirSync, appendFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { commitHookPayload, fmt, median, peakRss, report, sample, tempDir, timeProcess } from "./lib.ts";
import { testEnv } from "../test/helpers.ts";

const BIN = resolve(import.meta.dir, "..", "dist", "aiflare");
const home = tempDir("aiflare-bench-home-");
const env = testEnv(home);
const dirs: string[] = [home];

function git(cwd: string, args: string[], stdin?: string | Buffer): string {
  const r = Bun.spawnSync(["git", ...args], { cwd, env, stdin: stdin === undefined ? "ignore" : Buffer.from(stdin) });
  if (r.exitCode !== 0) throw new Error(`git ${args[0]} failed: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
}

function newRepo(): string {
  const dir = tempDir();
  dirs.push(dir);
  git(dir, ["init", "-q", "-b", "main"]);
  writeFileSync(join(dir, "README.md"), "# bench\n");
  git(dir, ["add", "-A"]);
  git(dir, ["commit", "-q", "-m", "init"]);
  return dir;
}

/** A timeline of `n` entries written with git fast-import (one commit, fan-out layout), plus `k` real commits. */
function seed(repo: string, n: number, k: number): string[] {
  const parts: string[] = [];
  const blob = JSON.stringify({ commitHash: "0".repeat(40), title: "seed", intent: "", alternatives: "", diffSummary: "", tag: "FEATURE", changedFiles: [], agentType: "CLAUDE_CODE", claudeSessionId: "seed", branch: "main", conversationSnippet: "", continuation: false, groupRootId: null, capturedAt: "2024-01-01T00:00:00.000Z" }) + "\n";
  parts.push(`blob\nmark :1\ndata ${Buffer.byteLength(blob)}\n${blob}\n`);
  parts.push(`commit refs/heads/aiflare/timeline/v1\ncommitter aiflare <aiflare@localhost> 1700000000 +0000\ndata 5\nseed\n`);
  for (let i = 0; i < n; i++) {
    const h = new Bun.CryptoHasher("sha1").update(`entry ${i}`).digest("hex");
    parts.push(`M 100644 :1 entries/${h.slice(0, 2)}/${h.slice(2)}.json\n`);
  }
  parts.push("\n");
  for (let i = 0; i < k; i++) {
    const data = `change ${i}\n`;
    parts.push(`commit refs/heads/main\ncommitter Bench <b@example.com> ${1700000000 + i} +0000\ndata 12\nfeat: c${String(i).padStart(4, "0")}\n`);
    if (i === 0) parts.push(`from refs/heads/main^0\n`);
    parts.push(`M 100644 inline src/f${i}.txt\ndata ${data.length}\n${data}\n`);
  }
  git(repo, ["fast-import", "--quiet", "--force"], parts.join(""));
  return git(repo, ["rev-list", `--max-count=${k}`, "main"]).split("\n");
}

function captureSamples(repo: string, hashes: string[], n: number): number[] {
  let i = 0;
  return sample(n, () =>
    timeProcess([BIN, "capture", "--commit-hash", hashes[i++ % hashes.length]!, "--intent", `run ${i}`, "--claude-session-id", "bench"], {
      cwd: repo,
      env,
    }),
  );
}

const baseline = (repo: string, n = 20) => sample(n, () => timeProcess(["git", "rev-parse", "HEAD"], { cwd: repo, env }));

/** Commits for real, then times the PostToolUse hook for it. */
function hookSamples(repo: string, n: number): number[] {
  const dir = join(repo, ".context-capture");
  mkdirSync(dir, { recursive: true });
  const prompts = join(dir, ".claude-prompts-hooksess");
  return sample(n, (i) => {
    appendFileSync(prompts, `${JSON.stringify({ role: "user", content: `please make change ${i} ${"x".repeat(400)}` })}\n`);
    appendFileSync(prompts, `${JSON.stringify({ role: "assistant", content: `done ${i} ${"y".repeat(1500)}` })}\n`);
    writeFileSync(join(repo, `hook-${i}.txt`), `${i}\n`);
    git(repo, ["add", "-A"]);
    git(repo, ["commit", "-q", "-m", `feat: hook change ${i}`]);
    const payload = commitHookPayload("hooksess", repo, home, i);
    return timeProcess([BIN, "hook", "post-tool-use"], { cwd: repo, env, stdin: payload });
  }, 2);
}

try {
  // ~200 MB pack of incompressible blobs, gc'd together with a 10k timeline
  const big = newRepo();
  const hashes = seed(big, 10_000, 40);
  for (let i = 0; i < 200; i++) writeFileSync(join(big, `blob-${i}.bin`), randomBytes(1024 * 1024));
  git(big, ["add", "-A"]);
  git(big, ["commit", "-q", "-m", "chore: big blobs"]);
  const g0 = performance.now();
  git(big, ["gc", "-q"]);
  const packMb = Number(git(big, ["count-objects", "-v"]).match(/size-pack: (\d+)/)?.[1] ?? 0) / 1024;
  console.log(`gc'd repository: pack ${packMb.toFixed(0)} MB (gc took ${fmt(performance.now() - g0)})`);
  const base = baseline(big);
  report("git rev-parse HEAD (baseline, big pack)", base);
  report("capture, 200 MB pack", captureSamples(big, hashes, 15), base, "≤ 50 ms");
  const rssCapture = peakRss([BIN, "capture", "--commit-hash", hashes[3]!, "--intent", "rss", "--claude-session-id", "bench"], { cwd: big, env }).mb;
  const rssGit = peakRss(["git", "rev-parse", "HEAD"], { cwd: big, env }).mb;
  const hookTimes = hookSamples(big, 10);
  report("hook post-tool-use commit, 200 MB pack", hookTimes, base, "≤ 80 ms");
  // the hook's RSS on a fresh commit (reads the parent tree from the big pack)
  writeFileSync(join(big, "rss.txt"), "rss\n");
  git(big, ["add", "-A"]);
  git(big, ["commit", "-q", "-m", "feat: rss"]);
  const payload = JSON.stringify({ session_id: "hooksess", cwd: big, hook_event_name: "PostToolUse", tool_name: "Bash", tool_input: { command: "git commit -q -m rss" }, tool_response: { stdout: "" } });
  const rssHook = peakRss([BIN, "hook", "post-tool-use"], { cwd: big, env, stdin: payload }).mb;
  console.log(`peak RSS, 200 MB pack: capture ${rssCapture.toFixed(1)} MB, hook ${rssHook.toFixed(1)} MB, git rev-parse ${rssGit.toFixed(1)} MB  (target ≤ 100 MB)`);
  const fsck = Bun.spawnSync(["git", "fsck", "--strict", "--no-dangling"], { cwd: big, env });
  console.log(`git fsck --strict after the runs: ${fsck.exitCode === 0 ? "clean" : "FAILED"}`);
  console.log(`median summary: ${fmt(median(hookTimes))} hook in the big-pack repo`);
} finally {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
