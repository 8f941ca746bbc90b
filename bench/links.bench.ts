/**
 * Squash and rebase merges (README "Squash and rebase merges"): how well, and how fast, a landed commit with no
 * entry is matched to the entries it contains.
 *
 * 1. Attribution: windows of 3 consecutive commits of this repository's own history are replayed in fresh
 *    repositories as a branch (entries written as the commit hook writes them; in every other window the middle
 *    commit is a person's, with no entry), squash-merged, the branch deleted and garbage-collected. For every
 *    non-blank line the squash added, the part that wrote it (git blame on the branch before it was deleted) is
 *    compared with the part `why <file>:<line>` names. Target: 100% of agents' lines right, no person's line
 *    given an agent's why.
 * 2. The entries' growth from the fingerprint (target ≤ 15% at ~5 KB).
 * 3. Computing the link of one squash of 20 commits (target ≤ 1 s).
 * 4. `why <file>:<line>` on a squash with 10,000 entries once the link exists (target ≤ 150 ms).
 * 5. The commit hook before and after the fingerprint (AIFLARE_OLD_BIN: a binary built without it).
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { withIndex } from "../src/store/index-db.ts";
import { linkOf, partsForLines } from "../src/core/links/match.ts";
import { fingerprintCommit, quickFingerprint } from "../src/core/links/fingerprint.ts";
import { ObjectStore } from "../src/store/objects.ts";
import { writeEntry } from "../src/store/timeline.ts";
import type { Entry } from "../src/store/entry.ts";
import { testEnv } from "../test/helpers.ts";
import { commitHookPayload, fmt, median, tempDir, timeProcess } from "./lib.ts";

const ROOT = resolve(import.meta.dir, "..");
const BIN = join(ROOT, "dist", "aiflare");
const home = tempDir("aiflare-bench-home-");
const env = testEnv(home);
const dirs: string[] = [home];

function git(cwd: string, args: string[], opts: { stdin?: string | Uint8Array; env?: Record<string, string> } = {}): string {
  const r = Bun.spawnSync(["git", ...args], { cwd, env: { ...env, ...opts.env }, stdin: opts.stdin === undefined ? "ignore" : Buffer.from(opts.stdin) });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

function newRepo(): string {
  const dir = tempDir();
  dirs.push(dir);
  git(dir, ["init", "-q", "-b", "main"]);
  return dir;
}

const SNIPPET = `${JSON.stringify({ role: "user", content: "x".repeat(1200) })}\n${JSON.stringify({ role: "assistant", content: "y".repeat(2400) })}\n`;

function entryFor(hash: string, files: string[], at: Date, title: string): Entry {
  return {
    commitHash: hash,
    title,
    intent: `Why ${title}: ${"w".repeat(600)}`,
    alternatives: "",
    diffSummary: files.map((f) => `- ${f}: changed`).join("\n"),
    tag: "FEATURE",
    changedFiles: files,
    agentType: "CLAUDE_CODE",
    claudeSessionId: "bench-session",
    branch: "agent/work",
    conversationSnippet: SNIPPET,
    continuation: false,
    groupRootId: null,
    capturedAt: at.toISOString(),
    committedAt: at.toISOString(),
    recordedAt: at.toISOString(),
    summaryStatus: "written",
  };
}

let clock = Date.parse("2026-06-01T00:00:00Z");
function commitAt(repo: string, message: string): string {
  clock += 60_000;
  const when = `${Math.floor(clock / 1000)} +0000`;
  git(repo, ["commit", "-q", "--allow-empty", "-m", message], { env: { GIT_COMMITTER_DATE: when, GIT_AUTHOR_DATE: when } });
  return git(repo, ["rev-parse", "HEAD"]).trim();
}

/** The history the windows come from ends here, so that runs compare (AIFLARE_BENCH_TIP to choose another). */
const HISTORY_TIP = process.env.AIFLARE_BENCH_TIP ?? "c41a487";

/** Linear runs of 3 commits (each the only parent of the next) of this repository's history, with text changes of moderate size. */
function windows(want: number): string[][] {
  const parents = new Map<string, string[]>();
  const order: string[] = [];
  for (const line of git(ROOT, ["rev-list", "--parents", "--max-count=4000", HISTORY_TIP]).trim().split("\n")) {
    const [c, ...ps] = line.split(" ");
    parents.set(c!, ps);
    order.push(c!);
  }
  const used = new Set<string>();
  const out: string[][] = [];
  for (const c of order) {
    if (out.length >= want) break;
    const p1 = parents.get(c);
    if (p1?.length !== 1) continue;
    const p2 = parents.get(p1[0]!);
    if (p2?.length !== 1) continue;
    const p3 = parents.get(p2[0]!);
    if (p3?.length !== 1) continue; // the base (the first commit's parent) must exist
    const w = [p2[0]!, p1[0]!, c]; // oldest first
    if (w.some((x) => used.has(x))) continue;
    const stat = git(ROOT, ["diff", "--numstat", `${w[0]}^`, w[2]!]).trim().split("\n");
    const lines = stat.reduce((n, l) => n + (Number(l.split("\t")[0]) || 0) + (Number(l.split("\t")[1]) || 0), 0);
    if (stat.some((l) => l.startsWith("-\t")) || stat.length > 12 || lines > 1500 || lines < 10) continue;
    for (const x of w) used.add(x);
    out.push(w);
  }
  return out;
}

/** Blame of `path` at `rev`: line number → commit. */
function blame(repo: string, rev: string, path: string): Map<number, string> {
  const out = new Map<number, string>();
  const text = git(repo, ["blame", "--porcelain", rev, "--", path]);
  for (const m of text.matchAll(/^([0-9a-f]{40}) \d+ (\d+)/gm)) out.set(Number(m[2]), m[1]!);
  return out;
}

async function attribution(): Promise<void> {
  const ws = windows(24);
  let agentLines = 0;
  let agentRight = 0;
  let humanLines = 0;
  let humanWrong = 0;
  let squashes = 0;
  const sizes: number[] = [];
  const wrong: string[] = [];
  for (const [wi, w] of ws.entries()) {
    const repo = newRepo();
    const paths = [...new Set(w.flatMap((c) => git(ROOT, ["diff", "--name-only", `${c}^`, c]).trim().split("\n")))].filter(Boolean);
    for (const p of paths) {
      const r = Bun.spawnSync(["git", "show", `${w[0]}^:${p}`], { cwd: ROOT, env });
      if (r.exitCode !== 0) continue;
      mkdirSync(dirname(join(repo, p)), { recursive: true });
      writeFileSync(join(repo, p), r.stdout);
    }
    git(repo, ["add", "-A"]);
    commitAt(repo, "base");
    git(repo, ["checkout", "-q", "-b", "agent/work"]);
    const human = wi % 2 === 1 ? 1 : -1;
    const made: string[] = [];
    const entries = new Map<string, Entry>();
    for (const [i, c] of w.entries()) {
      // the window's files at each commit, so commits from neighbouring branches replay too
      for (const p of paths) {
        const r = Bun.spawnSync(["git", "show", `${c}:${p}`], { cwd: ROOT, env });
        if (r.exitCode === 0) {
          mkdirSync(dirname(join(repo, p)), { recursive: true });
          writeFileSync(join(repo, p), r.stdout);
        } else rmSync(join(repo, p), { force: true });
      }
      git(repo, ["add", "-A"]);
      const hash = commitAt(repo, git(ROOT, ["log", "-1", "--format=%s", c]).trim());
      made.push(hash);
      if (i === human) continue;
      const files = git(repo, ["diff", "--name-only", `${hash}^`, hash]).trim().split("\n");
      const plain = entryFor(hash, files, new Date(clock), `part ${i}`);
      const fingerprint = (await fingerprintCommit(join(repo, ".git"), hash))!;
      const e = { ...plain, fingerprint };
      sizes.push(JSON.stringify(e).length / JSON.stringify(plain).length - 1);
      entries.set(hash, await writeEntry({ commonDir: join(repo, ".git") }, e));
    }
    // the truth, before the branch goes: who last wrote each line
    const tip = made[2]!;
    const truth = new Map<string, Map<number, string>>();
    for (const p of paths) if (Bun.spawnSync(["git", "cat-file", "-e", `${tip}:${p}`], { cwd: repo, env }).exitCode === 0) truth.set(p, blame(repo, tip, p));
    git(repo, ["checkout", "-q", "main"]);
    git(repo, ["merge", "--squash", "agent/work"]);
    const squash = commitAt(repo, `Squash of window ${wi}`);
    git(repo, ["branch", "-D", "agent/work"]);
    git(repo, ["reflog", "expire", "--expire=now", "--all"]);
    git(repo, ["gc", "--prune=now", "--quiet"]);
    squashes++;
    await withIndex(join(repo, ".git"), async (db) => {
      const link = await linkOf({ db, commonDir: join(repo, ".git") }, squash);
      const parts = (link?.parts ?? []).map((p) => entries.get(p.commitHash)).filter((e): e is Entry => !!e);
      for (const [p, lines] of truth) {
        const text = git(repo, ["show", `${squash}:${p}`]).split("\n");
        for (const [n, owner] of lines) {
          if (!made.includes(owner) || !text[n - 1]?.trim()) continue;
          const named = partsForLines(p, text, n, n, parts).map((e) => e.commitHash);
          if (owner === made[human]) {
            humanLines++;
            if (named.length) {
              humanWrong++;
              wrong.unshift(`window ${wi} ${p}:${n} (a person's line) ${JSON.stringify(text[n - 1]!.trim().slice(0, 40))} → ${named.map((h) => h.slice(0, 7))}`);
            }
          } else {
            agentLines++;
            if (named.length === 1 && named[0] === owner) agentRight++;
            else wrong.push(`window ${wi} ${p}:${n} ${JSON.stringify(text[n - 1]!.trim().slice(0, 40))} → ${named.map((h) => h.slice(0, 7))} (want ${owner.slice(0, 7)})`);
          }
        }
      }
    });
  }
  console.log(`attribution: ${squashes} squashes of 3 commits replayed from this repository's history (branch deleted, gc --prune=now)`);
  console.log(`  agents' lines named right: ${agentRight}/${agentLines} (${((agentRight / Math.max(1, agentLines)) * 100).toFixed(1)}%)  target 100%`);
  console.log(`  a person's lines given an agent's why: ${humanWrong}/${humanLines}  target 0`);
  for (const w of wrong.slice(0, 15)) console.log(`    ${w}`);
  sizes.sort((a, b) => a - b);
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
    const at = new Date(clock - (n - i) * 1000);
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
    await writeEntry({ commonDir: join(repo, ".git") }, { ...entryFor(hash, ["file.ts"], new Date(clock), `part ${j}`), fingerprint });
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
  await writeEntry({ commonDir: gitDir }, entryFor(ownHash, ["own.ts"], new Date(clock), "own"));
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
