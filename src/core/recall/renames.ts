/**
 * The earlier names of a file, as `git log --follow` finds them, remembered per path and HEAD in
 * `.context-capture/.recall-follow`: a later session asks git only about the commits made since, and nothing
 * at all while HEAD stays where it was.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readRef } from "../../store/refs.ts";
import { isFullHash } from "../../util/ids.ts";
import { atomicWrite, readOwnFile } from "../fsutil.ts";
import { CONTEXT_DIR } from "../session.ts";

/** git is given this long to follow a file; past it the hook goes on without its earlier names. */
const GIT_BUDGET_MS = 800;
/** Paths remembered; the oldest are forgotten first. */
const KEEP_PATHS = 2000;

type Cache = Record<string, { head: string; names: string[] }>;

export interface RepoDirs {
  root: string;
  gitDir: string;
  commonDir: string;
}

/** What HEAD holds (`ref: refs/heads/main` or a commit hash), read from the git dir without git; "" when unreadable. */
export function readHead(gitDir: string): string {
  try {
    return readFileSync(join(gitDir, "HEAD"), "utf8").trim();
  } catch {
    return "";
  }
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

/**
 * The names `rel` had before renames, looking back only as far as the timeline reaches (renames older than
 * the first entry lead to no entry), for at most GIT_BUDGET_MS of git.
 */
export async function earlierNames(repo: RepoDirs, rel: string, oldestMs: number): Promise<string[]> {
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
  if (r.code !== 0) return base;
  const names = [...new Set([...base, ...renameSources(r.stdout, rel)])].slice(0, 20);
  if (head) {
    delete cache[rel];
    cache[rel] = { head, names };
    const paths = Object.keys(cache);
    for (const p of paths.slice(0, Math.max(0, paths.length - KEEP_PATHS))) delete cache[p];
    atomicWrite(cachePath(repo.root), JSON.stringify(cache), 0o600);
  }
  return names;
}
