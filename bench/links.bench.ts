/**
 * Squash and rebase merges (README "Squash and rebase merges"): how well, and how fast, a landed commit with no
 * entry is matched to the entries it contains.
 *
 * 1. Attribution on 24 squashes replayed from this repository's history (test/squash-attribution.ts, asserted by
 *    test/e2e/squash-attribution.test.ts). Target: 100% of agents' lines right, no person's line given an agent's why.
 * 2. The entries' growth from the fingerprint (target ≤ 15% at ~5 KB).
 * 3. Computing the link of one squash of 20 commits (target ≤ 1 s).
 * 4. `why <file>:<line>` on a squash with 10,000 entries once the link exists (target ≤ 150 ms).
 * 5. The commit hook before and after the fingerprint (AIFLARE_OLD_BIN: a binary built without it).
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { withIndex } from "../src/store/index-db.ts";
import { linkOf } from "../src/core/links/match.ts";
import { fingerprintCommit, quickFingerprint } from "../src/core/links/fingerprint.ts";
import { ObjectStore } from "../src/store/objects.ts";
import { writeEntry } from "../src/store/timeline.ts";
import { testEnv } from "../test/helpers.ts";
import { clockedCommitter, entryFor, gitIn, measureAttribution } from "../test/squash-attribution.ts";
import { commitHookPayload, fmt, median, tempDir, timeProcess } from "./lib.ts";

const ROOT = resolve(import.meta.dir, "..");
const BIN = join(ROOT, "dist", "aiflare");
const home = tempDir("aiflare-bench-home-");
const env = testEnv(home);
const dirs: string[] = [home];

const git = (cwd: string, args: string[], opts: { stdin?: string | Uint8Array; env?: Record<string, string> } = {}) => gitIn(cwd, env, args, opts);

function newRepo(): string {
  const dir = tempDir();
  dirs.push(dir);
  git(dir, ["init", "-q", "-b", "main"]);
  return dir;
}

const clocked = clockedCommitter(env);
const commitAt = (repo: string, message: string) => clocked.commit(repo, message);

async function attribution(): Promise<void> {
  const a = await measureAttribution(env);
  console.log(`attribution: ${a.squashes} squashes of 3 commits replayed from this repository's history (branch deleted, gc --prune=now)`);
  console.log(`  agents' lines named right: ${a.agentRight}/${a.agentLines} (${((a.agentRight / Math.max(1, a.agentLines)) * 100).toFixed(1)}%)  target 100%`);
  console.log(`  a person's lines given an agent's why: ${a.humanWrong}/${a.humanLines}  target 0`);
  for (const w of a.wrong.slice(0, 15)) console.log(`    ${w}`);
  const sizes = [...a.growth].sort((x, y) => x - y);
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  console.log(`entry growth from the fingerprint (entries of ~5 KB): median ${pct(median(sizes))}, p90 ${pct(sizes[Math.floor(sizes.length * 0.9)]!)}, max ${pct(sizes[sizes.length - 1]!)}  target ≤ 15%`);
}

/** A repository with `n` entries on file.ts, then a branch of `k` agent commits squash-merged and gc'd. */
async function bigSquash(n: number, k: number): Promise<{ repo: string; squash: string }> {
  const repo = newRepo();
  const lines = Array.from({ length: 200 }, (_, i) => `export const value${i} = compute(${i}, "seed");`);
  writeFileSync(join(repo, "file.ts"), `${lines.join("\n")}\n`);
  git(repo, ["add", "-A"]);
  commitAt(repo, "base");
  // n entries of commits long gone, all on file.ts, in the window before the squash
  let stream = "";
  let mark = 0;
  stream += `commit refs/heads/aiflare/timeline/v1\ncommitter aiflare <aiflare@localhost> 1700000000 +0000\ndata 5\nseed\n`;
  for (let i = 0; i < n; i++) {
    const h = new Bun.CryptoHasher("sha1").update(`gone ${i}`).digest("hex");
    const at = new Date(clocked.now() - (n - i) * 1000);
    const e = { ...entryFor(h, ["file.ts"], at, `old ${i}`), fingerprint: { v: 1, patchId: h, files: [{ path: "file.ts", add: Buffer.from(new Bun.CryptoHasher("sha1").update(`a${i}`).digest()).subarray(0, 12).toString("base64url"), del: "" }] } };
    const text = `${JSON.stringify(e)}\n`;
    stream += `M 100644 inline entries/${h.slice(0, 2)}/${h.slice(2)}.json\ndata ${Buffer.byteLength(text)}\n${text}\n`;
    mark++;
  }
  git(repo, ["fast-import", "--quiet"], { stdin: stream });
  git(repo, ["checkout", "-q", "-b", "agent/work"]);
  const current = [...lines];
  for (let j = 0; j < k; j++) {
    for (let t = 0; t < 5; t++) current[(j * 7 + t * 13) % current.length] = `export const value${j}_${t} = refine(${j}, ${t}, "part ${j}");`;
    current.push(`export function step${j}() { return "added by part ${j}"; }`);
    writeFileSync(join(repo, "file.ts"), `${current.join("\n")}\n`);
    git(repo, ["add", "-A"]);
    const hash = commitAt(repo, `part ${j}`);
    const fingerprint = (await fingerprintCommit(join(repo, ".git"), hash))!;
    await writeEntry({ commonDir: join(repo, ".git") }, { ...entryFor(hash, ["file.ts"], new Date(clocked.now()), `part ${j}`), fingerprint });
  }
  git(repo, ["checkout", "-q", "main"]);
  git(repo, ["merge", "--squash", "agent/work"]);
  const squash = commitAt(repo, "Squash");
  git(repo, ["branch", "-D", "agent/work"]);
  git(repo, ["reflog", "expire", "--expire=now", "--all"]);
  git(repo, ["gc", "--prune=now", "--quiet"]);
  void mark;
  return { repo, squash };
}

async function speed(): Promise<void> {
  const { repo, squash } = await bigSquash(10_000, 20);
  const gitDir = join(repo, ".git");
  await withIndex(gitDir, () => undefined); // the index is built before the link is timed
  const t0 = performance.now();
  const link = await withIndex(gitDir, (db) => linkOf({ db, commonDir: gitDir }, squash));
  const computeMs = performance.now() - t0;
  console.log(`link of a squash of 20 commits among 10,000 entries: ${fmt(computeMs)} (${link?.parts.length ?? 0} parts, coverage ${link?.coverage})  target ≤ 1 s`);
  const line = 201; // the line the first part added
  const times: number[] = [];
  for (let i = 0; i < 8; i++) times.push(timeProcess([BIN, "why", `file.ts:${line}`], { cwd: repo, env }));
  const out = Bun.spawnSync([BIN, "why", `file.ts:${line}`, "--json"], { cwd: repo, env }).stdout.toString();
  const named = JSON.parse(out).commits[0]?.partsForLines ?? [];
  console.log(`why file.ts:${line} on the squash, 10,000 entries, link stored: median ${fmt(median(times))} (names ${named.length} part)  target ≤ 150 ms`);
  // the same view of a commit with its own entry, and git's own part of it: what the link adds is the difference
  const own = commitAt(repo, "plain");
  writeFileSync(join(repo, "own.ts"), "export const mine = 'own entry line';\n");
  git(repo, ["add", "-A"]);
  const ownHash = commitAt(repo, "own entry");
  await writeEntry({ commonDir: gitDir }, entryFor(ownHash, ["own.ts"], new Date(clocked.now()), "own"));
  void own;
  await withIndex(gitDir, () => undefined);
  const plain: number[] = [];
  const gitOnly: number[] = [];
  for (let i = 0; i < 8; i++) {
    plain.push(timeProcess([BIN, "why", "own.ts:1"], { cwd: repo, env }));
    gitOnly.push(timeProcess(["git", "log", "--no-patch", "-L201,201:file.ts"], { cwd: repo, env }));
  }
  console.log(`  for comparison: why on a line of a commit with its own entry ${fmt(median(plain))}; git log -L alone ${fmt(median(gitOnly))}`);
}

function hookTimes(bin: string, repo: string, session: string, n: number): number[] {
  const dir = join(repo, ".context-capture");
  mkdirSync(dir, { recursive: true });
  const out: number[] = [];
  const lines = Array.from({ length: 300 }, (_, i) => `export const value${i} = compute(${i}, "seed");`);
  for (let i = 0; i < n; i++) {
    writeFileSync(join(dir, `.claude-prompts-${session}`), `${JSON.stringify({ role: "user", content: `change ${i}` })}\n`, { flag: "a" });
    for (let t = 0; t < 40; t++) lines[(i * 41 + t * 7) % lines.length] = `export const value${i}_${t} = refine(${i}, ${t});`;
    writeFileSync(join(repo, "src.ts"), `${lines.join("\n")}\n`);
    git(repo, ["add", "-A"]);
    git(repo, ["commit", "-q", "-m", `feat: change ${i}`]);
    out.push(timeProcess([bin, "hook", "post-tool-use"], { cwd: repo, env, stdin: commitHookPayload(session, repo, home, i) }));
  }
  return out.slice(2);
}

function hook(): void {
  // the fingerprint's own cost, in-process: reading the commit's changed files and hashing their lines
  {
    const a = newRepo();
    const lines = Array.from({ length: 300 }, (_, i) => `export const value${i} = compute(${i}, "seed");`);
    writeFileSync(join(a, "src.ts"), `${lines.join("\n")}\n`);
    git(a, ["add", "-A"]);
    commitAt(a, "init");
    for (let t = 0; t < 40; t++) lines[t * 7] = `export const changed${t} = refine(${t});`;
    writeFileSync(join(a, "src.ts"), `${lines.join("\n")}\n`);
    git(a, ["add", "-A"]);
    const h = commitAt(a, "change");
    const store = new ObjectStore(join(a, ".git"));
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      quickFingerprint(store, h);
      times.push(performance.now() - t0);
    }
    store.close();
    console.log(`fingerprint in the commit hook (in-process, 300-line file, 40 lines changed): median ${fmt(median(times.slice(3)))}`);
  }
  const old = process.env.AIFLARE_OLD_BIN;
  const a = newRepo();
  writeFileSync(join(a, "README.md"), "x\n");
  git(a, ["add", "-A"]);
  commitAt(a, "init");
  const now: number[] = [];
  const before: number[] = [];
  for (let round = 0; round < 6; round++) {
    now.push(...hookTimes(BIN, a, "hook-new", 4));
    if (old) before.push(...hookTimes(old, a, "hook-old", 4));
  }
  console.log(
    `commit hook (40 changed lines): ${fmt(median(now))} with the fingerprint` +
      (old ? `, ${fmt(median(before))} without (${fmt(median(now) - median(before))} more)` : " (set AIFLARE_OLD_BIN for the comparison)"),
  );
}

try {
  await attribution();
  await speed();
  hook();
} finally {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
