/**
 * The earlier names of a file, as `git log --follow` finds them, remembered per path and HEAD in
 * `.context-capture/.recall-follow`: a later session asks git only about the commits made since, and nothing
 * at all while HEAD stays where it was. The edit hook never waits for git: it reads the cache, and on a miss
 * starts a detached `aiflare __recall-follow` that asks git and fills the cache for the file's next edit.
 */
import { join } from "node:path";
import { readHead, readRef } from "../../store/refs.ts";
import { isFullHash } from "../../util/ids.ts";
import { atomicWrite, ensureContextDir, readOwnFile } from "../fsutil.ts";
import type { Logger } from "../log.ts";
import { CONTEXT_DIR } from "../session.ts";

/** git is given this long to follow a file; past it the file is remembered without its earlier names at this HEAD. */
const GIT_BUDGET_MS = 5000;
/** The hidden first argument that runs `runFollow` (recognised in main.ts). */
const FOLLOW_ARG = "__recall-follow";
/** Paths remembered; the oldest are forgotten first. */
const KEEP_PATHS = 2000;

type Cache = Record<string, { head: string; names: string[] }>;

export interface RepoDirs {
  root: string;
  gitDir: string;
  commonDir: string;
}

/** The commit HEAD points at; null on an unborn branch. */
export function headCommit(repo: RepoDirs): string | null {
  const head = readHead(repo.gitDir);
  if (head.startsWith("ref: ")) return readRef(repo.commonDir, head.slice(5));
  return isFullHash(head) ? head : null;
}

const cachePath = (root: string) => join(root, CONTEXT_DIR, ".recall-follow");

function readCache(root: string): Cache {
  try {
    const doc = JSON.parse(readOwnFile(cachePath(root)) ?? "{}") as unknown;
    return doc && typeof doc === "object" && !Array.isArray(doc) ? (doc as Cache) : {};
  } catch {
    return {};
  }
}

/** Parses `git log -z --name-status --format=` output: the sources of renames and copies, other than `rel`. */
function renameSources(out: Uint8Array, rel: string): string[] {
  const names: string[] = [];
  const tokens = new TextDecoder().decode(out).split("\0").map((t) => t.replace(/^\n+/, ""));
  for (let i = 0; i < tokens.length; i++) {
    const status = tokens[i]!;
    if (/^[RC]\d*$/.test(status)) {
      const from = tokens[i + 1];
      if (from && from !== rel) names.push(from);
      i += 2;
    } else if (/^[AMDTU]$/.test(status)) i += 1;
  }
  return names;
}

/** The earlier names of `rel` known at the current HEAD, or undefined when git has not been asked at this HEAD. */
export function cachedEarlierNames(repo: RepoDirs, rel: string): string[] | undefined {
  const head = headCommit(repo);
  const known = readCache(repo.root)[rel];
  return head && known?.head === head && Array.isArray(known.names) ? known.names : undefined;
}

/**
 * Starts one detached aiflare process that runs `earlierNames` for `rel` and exits; the hook does not wait
 * for it. Its stdio goes nowhere; it logs to the repository's log.
 */
export async function followInBackground(root: string, rel: string, oldestMs: number, env: Record<string, string | undefined>): Promise<void> {
  const { startDetachedSelf } = await import("../../util/self.ts");
  startDetachedSelf([FOLLOW_ARG, root, rel, String(oldestMs)], { cwd: root, env });
}

/**
 * The background side of `followInBackground` (`aiflare __recall-follow <root> <path> <oldestMs>`): fills the
 * cache for `rel`. Never throws; failures go to the log.
 */
export async function runFollow(args: string[]): Promise<void> {
  const [start, rel, oldest] = args;
  // However git behaves, this process is gone after two lookups' time.
  setTimeout(() => process.exit(0), 2 * GIT_BUDGET_MS + 1000).unref();
  const { findRepo } = await import("../repo.ts");
  const { createLogger } = await import("../log.ts");
  const repo = start ? findRepo(start) : null;
  const logger = createLogger({ component: "recall follow", root: repo?.root });
  try {
    const oldestMs = Number(oldest);
    if (!repo || !rel || !Number.isFinite(oldestMs)) throw new Error("bad arguments");
    await earlierNames(repo, rel, oldestMs, logger);
  } catch (err) {
    logger.log("warn", `earlier names not found (${(err as Error).message})`, { path: rel });
  }
}

/**
 * The names `rel` had before renames, looking back only as far as the timeline reaches (renames older than
 * the first entry lead to no entry), for at most GIT_BUDGET_MS of git.
 */
export async function earlierNames(repo: RepoDirs, rel: string, oldestMs: number, logger?: Logger): Promise<string[]> {
  const head = headCommit(repo);
  const cache = readCache(repo.root);
  const known = cache[rel];
  if (head && known?.head === head && Array.isArray(known.names)) return known.names;
  const { execGit } = await import("../../util/git.ts");
  // A day's margin: entries are written moments after their commit, clocks differ.
  const since = `--since=${new Date(oldestMs - 86_400_000).toISOString()}`;
  const follow = (range: string[]) =>
    execGit(["-c", "log.showSignature=false", "log", "-z", "--follow", "-M", "--name-status", "--format=", since, ...range, "--", rel], {
      cwd: repo.root,
      timeoutMs: GIT_BUDGET_MS,
    });
  // Known at an earlier HEAD: only the commits since then can add a name.
  const incremental = Boolean(head && known && isFullHash(known.head) && Array.isArray(known.names));
  let base = incremental ? known!.names : [];
  let r = await follow(incremental ? [`${known!.head}..${head}`] : []);
  if (r.code !== 0 && incremental) {
    // that HEAD is gone (gc after a rebase): ask about the whole window
    base = [];
    r = await follow([]);
  }
  // A git that fails or takes too long is not asked again at this HEAD: the names known so far are kept.
  if (r.code !== 0) logger?.log("warn", `git log --follow failed or took over ${GIT_BUDGET_MS} ms`, { path: rel, code: r.code });
  const names = r.code !== 0 ? base : [...new Set([...base, ...renameSources(r.stdout, rel)])].slice(0, 20);
  if (head) {
    // Read again: other lookups may have written theirs meanwhile.
    const latest = readCache(repo.root);
    delete latest[rel];
    latest[rel] = { head, names };
    const paths = Object.keys(latest);
    for (const p of paths.slice(0, Math.max(0, paths.length - KEEP_PATHS))) delete latest[p];
    // A real directory of this user (never a link); the rename replaces a link at the file's place, never follows it.
    ensureContextDir(repo.root);
    atomicWrite(cachePath(repo.root), JSON.stringify(latest), 0o600);
  }
  return names;
}
