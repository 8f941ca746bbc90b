/**
 * The measured attribution of squash merges (README "Squash and rebase merges"), shared by
 * test/e2e/squash-attribution.test.ts (which asserts it) and bench/links.bench.ts (which prints it).
 *
 * Windows of 3 consecutive commits of this repository's own history, up to a pinned commit, are replayed in fresh
 * repositories as a branch: entries written with the fingerprint of each commit, except that in every other window
 * the middle commit is a person's, with no entry. The branch is squash-merged, deleted and garbage-collected. For
 * every non-blank line the squash added, the part that wrote it (git blame on the branch before it went) is
 * compared with the part the link and the line lookup of `why <file>:<line>` name.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fingerprintCommit } from "../src/core/links/fingerprint.ts";
import { linkOf, partsForLines } from "../src/core/links/match.ts";
import type { Entry } from "../src/store/entry.ts";
import { withIndex } from "../src/store/index-db.ts";
import { writeEntry } from "../src/store/timeline.ts";

/** The repository whose history the windows come from. */
export const HISTORY_ROOT = resolve(import.meta.dir, "..");
/** The history the windows come from ends here, so that runs compare (AIFLARE_BENCH_TIP to choose another). */
export const HISTORY_TIP = process.env.AIFLARE_BENCH_TIP ?? "c41a487";

/** Runs git in `cwd`; its stdout, or a throw naming the command. */
export function gitIn(cwd: string, env: Record<string, string>, args: string[], opts: { stdin?: string | Uint8Array; env?: Record<string, string> } = {}): string {
  const r = Bun.spawnSync(["git", ...args], { cwd, env: { ...env, ...opts.env }, stdin: opts.stdin === undefined ? "ignore" : Buffer.from(opts.stdin) });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

const SNIPPET = `${JSON.stringify({ role: "user", content: "x".repeat(1200) })}\n${JSON.stringify({ role: "assistant", content: "y".repeat(2400) })}\n`;

/** An agent's entry of about 5 KB (its intent, summary and conversation snippet) for a commit. */
export function entryFor(hash: string, files: string[], at: Date, title: string): Entry {
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

/** Commits in `repo` a minute after the previous commit made through the same clock; returns the hash. */
export function clockedCommitter(env: Record<string, string>, start = Date.parse("2026-06-01T00:00:00Z")) {
  let clock = start;
  return {
    now: () => clock,
    commit(repo: string, message: string): string {
      clock += 60_000;
      const when = `${Math.floor(clock / 1000)} +0000`;
      gitIn(repo, env, ["commit", "-q", "--allow-empty", "-m", message], { env: { GIT_COMMITTER_DATE: when, GIT_AUTHOR_DATE: when } });
      return gitIn(repo, env, ["rev-parse", "HEAD"]).trim();
    },
  };
}

/** Linear runs of 3 commits (each the only parent of the next) of the history, with text changes of moderate size. */
function windows(env: Record<string, string>, want: number): string[][] {
  const git = (args: string[]) => gitIn(HISTORY_ROOT, env, args);
  const parents = new Map<string, string[]>();
  const order: string[] = [];
  let listed: string;
  try {
    listed = git(["rev-list", "--parents", "--max-count=4000", HISTORY_TIP]);
  } catch (e) {
    throw new Error(`the attribution set replays this repository's own history up to ${HISTORY_TIP}, which this clone lacks (a shallow clone? run \`git fetch --unshallow\`): ${e}`);
  }
  for (const line of listed.trim().split("\n")) {
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
    const stat = git(["diff", "--numstat", `${w[0]}^`, w[2]!]).trim().split("\n");
    const lines = stat.reduce((n, l) => n + (Number(l.split("\t")[0]) || 0) + (Number(l.split("\t")[1]) || 0), 0);
    if (stat.some((l) => l.startsWith("-\t")) || stat.length > 12 || lines > 1500 || lines < 10) continue;
    for (const x of w) used.add(x);
    out.push(w);
  }
  return out;
}

/** Blame of `path` at `rev`: line number → commit. */
function blame(repo: string, env: Record<string, string>, rev: string, path: string): Map<number, string> {
  const out = new Map<number, string>();
  const text = gitIn(repo, env, ["blame", "--porcelain", rev, "--", path]);
  for (const m of text.matchAll(/^([0-9a-f]{40}) \d+ (\d+)/gm)) out.set(Number(m[2]), m[1]!);
  return out;
}

export interface Attribution {
  squashes: number;
  agentLines: number;
  /** agents' lines for which exactly the part that wrote them was named */
  agentRight: number;
  humanLines: number;
  /** a person's lines given an agent's part */
  humanWrong: number;
  /** each line named wrong, a person's first */
  wrong: string[];
  /** each entry's growth from its fingerprint (a share of the entry without it) */
  growth: number[];
}

/** Replays `want` windows (see above) in temp repositories under a fresh HOME; they are removed afterwards. */
export async function measureAttribution(env: Record<string, string>, want = 24): Promise<Attribution> {
  const out: Attribution = { squashes: 0, agentLines: 0, agentRight: 0, humanLines: 0, humanWrong: 0, wrong: [], growth: [] };
  const fromHistory = (args: string[]) => Bun.spawnSync(["git", ...args], { cwd: HISTORY_ROOT, env });
  const clock = clockedCommitter(env);
  for (const [wi, w] of windows(env, want).entries()) {
    const repo = realpathSync(mkdtempSync(join(tmpdir(), "aiflare-attribution-")));
    try {
      const git = (args: string[]) => gitIn(repo, env, args);
      git(["init", "-q", "-b", "main"]);
      const paths = [...new Set(w.flatMap((c) => gitIn(HISTORY_ROOT, env, ["diff", "--name-only", `${c}^`, c]).trim().split("\n")))].filter(Boolean);
      // the window's files at `rev` (absent ones removed), so commits from neighbouring branches replay too
      const checkout = (rev: string) => {
        for (const p of paths) {
          const r = fromHistory(["show", `${rev}:${p}`]);
          if (r.exitCode === 0) {
            mkdirSync(dirname(join(repo, p)), { recursive: true });
            writeFileSync(join(repo, p), r.stdout);
          } else rmSync(join(repo, p), { force: true });
        }
        git(["add", "-A"]);
      };
      checkout(`${w[0]}^`);
      clock.commit(repo, "base");
      git(["checkout", "-q", "-b", "agent/work"]);
      const human = wi % 2 === 1 ? 1 : -1;
      const made: string[] = [];
      const entries = new Map<string, Entry>();
      for (const [i, c] of w.entries()) {
        checkout(c);
        const hash = clock.commit(repo, gitIn(HISTORY_ROOT, env, ["log", "-1", "--format=%s", c]).trim());
        made.push(hash);
        if (i === human) continue;
        const files = git(["diff", "--name-only", `${hash}^`, hash]).trim().split("\n");
        const plain = entryFor(hash, files, new Date(clock.now()), `part ${i}`);
        const fingerprint = (await fingerprintCommit(join(repo, ".git"), hash))!;
        const e = { ...plain, fingerprint };
        out.growth.push(JSON.stringify(e).length / JSON.stringify(plain).length - 1);
        entries.set(hash, await writeEntry({ commonDir: join(repo, ".git") }, e));
      }
      // the truth, before the branch goes: who last wrote each line
      const tip = made[2]!;
      const truth = new Map<string, Map<number, string>>();
      for (const p of paths) if (Bun.spawnSync(["git", "cat-file", "-e", `${tip}:${p}`], { cwd: repo, env }).exitCode === 0) truth.set(p, blame(repo, env, tip, p));
      git(["checkout", "-q", "main"]);
      git(["merge", "--squash", "agent/work"]);
      const squash = clock.commit(repo, `Squash of window ${wi}`);
      git(["branch", "-D", "agent/work"]);
      git(["reflog", "expire", "--expire=now", "--all"]);
      git(["gc", "--prune=now", "--quiet"]);
      out.squashes++;
      await withIndex(join(repo, ".git"), async (db) => {
        const link = await linkOf({ db, commonDir: join(repo, ".git") }, squash);
        const parts = (link?.parts ?? []).map((p) => entries.get(p.commitHash)).filter((e): e is Entry => !!e);
        for (const [p, lines] of truth) {
          const text = git(["show", `${squash}:${p}`]).split("\n");
          for (const [n, owner] of lines) {
            if (!made.includes(owner) || !text[n - 1]?.trim()) continue;
            const named = partsForLines(p, text, n, n, parts).map((e) => e.commitHash);
            const quoted = JSON.stringify(text[n - 1]!.trim().slice(0, 40));
            if (owner === made[human]) {
              out.humanLines++;
              if (named.length) {
                out.humanWrong++;
                out.wrong.unshift(`window ${wi} ${p}:${n} (a person's line) ${quoted} → ${named.map((h) => h.slice(0, 7))}`);
              }
            } else {
              out.agentLines++;
              if (named.length === 1 && named[0] === owner) out.agentRight++;
              else out.wrong.push(`window ${wi} ${p}:${n} ${quoted} → ${named.map((h) => h.slice(0, 7))} (want ${owner.slice(0, 7)})`);
            }
          }
        }
      });
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  }
  return out;
}
