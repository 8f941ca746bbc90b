/** `why <file>[:<line>[-<end>]]`: the commits behind a file or a line range, from git's own history. */
import { existsSync, statSync } from "node:fs";
import { relative, resolve, sep } from "node:path";
import { ObjectStore, parseCommit } from "../../store/objects.ts";
import { AiflareError } from "../../errors.ts";
import { execGit } from "../../util/git.ts";
import { isFullHash } from "../../util/ids.ts";

export interface WhyTarget {
  file: string;
  start?: number;
  end?: number;
}

/** What git reports for one commit. */
export interface GitCommit {
  commitHash: string;
  subject: string;
  author: string;
  /** author time, ms */
  dateMs: number;
  /** committer time, ms: the order of history (author time when not known) */
  committedMs?: number;
  /** what the commit changed under the target (asked for with `window.files`), renames as one change */
  changes?: PathChange[];
}

/** One path a commit changed, as `git log --name-status -M` reports it. */
export interface PathChange {
  /** A, M, D, R, C, T */
  status: string;
  path: string;
  /** the old path of a rename or copy */
  from?: string;
}

/**
 * Reads `file`, `file:line`, `file:start-end` (or `start,end`). A name that exists as written is a file,
 * even when it contains a colon.
 */
export function parseWhyTarget(spec: string, cwd: string): WhyTarget {
  const text = spec.trim();
  if (!text) throw new AiflareError("INVALID_ARGUMENT", "Name a file, e.g. `aiflare why src/app.ts:10-20`.");
  if (existsSync(resolve(cwd, text))) return { file: text };
  const m = /^(.+):(\d+)(?:[-,](\d+))?$/.exec(text);
  if (!m) {
    // `app.js:abc`, `main.js:1-2,5`: a file followed by something that is not a line or a range
    const colon = text.lastIndexOf(":");
    if (colon > 0 && existsSync(resolve(cwd, text.slice(0, colon)))) {
      const file = text.slice(0, colon);
      throw new AiflareError(
        "INVALID_ARGUMENT",
        `Bad line range "${text.slice(colon + 1)}" in "${spec}": give one line or one range, e.g. ${file}:40 or ${file}:40-60.`,
      );
    }
    return { file: text };
  }
  const start = Number(m[2]);
  const end = m[3] === undefined ? start : Number(m[3]);
  if (start < 1 || end < start) {
    throw new AiflareError("INVALID_ARGUMENT", `Bad line range in "${spec}": lines start at 1 and the end is not before the start.`);
  }
  return { file: m[1]!, start, end };
}

/** Display form of a target: `src/app.ts:10-20`. */
export function describeTarget(t: WhyTarget): string {
  if (t.start === undefined) return t.file;
  return t.start === t.end ? `${t.file}:${t.start}` : `${t.file}:${t.start}-${t.end}`;
}

const RS = "\x1e";
const US = "\x1f";

/** What git was asked for: the newest `limit` commits (0 = all), none older than `sinceMs` when given. */
export interface GitWindow {
  limit: number;
  sinceMs?: number;
  /** also list what each commit changed (`changes`) */
  files?: boolean;
}

/** True when `target` names a directory of the working tree. */
export function isDirectoryTarget(target: WhyTarget, cwd: string): boolean {
  try {
    return statSync(resolve(cwd, target.file)).isDirectory();
  } catch {
    return false; // deleted or never checked out: git still knows its history
  }
}

/**
 * The commits that touched the target, newest first, as far as `window` reaches: `git log --follow` for a
 * file, `git log -L` for lines (both follow renames), plain `git log` for a directory. With a limit, git stops
 * after that many commits (and at `sinceMs`), so the walk is bounded in a long history.
 */
export async function commitsTouching(target: WhyTarget, cwd: string, window: GitWindow = { limit: 0 }): Promise<GitCommit[]> {
  const format = `--format=${RS}%H${US}%an${US}%at${US}%ct${US}%s`;
  const bound = [
    ...(window.limit > 0 ? [`--max-count=${window.limit}`] : []),
    ...(window.sinceMs !== undefined ? [`--since=${Math.floor(window.sinceMs / 1000)}`] : []),
  ];
  let args: string[];
  if (target.start !== undefined) {
    args = ["log", "--no-patch", format, ...bound, `-L${target.start},${target.end}:${target.file}`];
  } else {
    const dir = isDirectoryTarget(target, cwd);
    const names = window.files ? ["--name-status", "-M"] : [];
    args = ["log", format, ...bound, ...names, ...(dir ? [] : ["--follow"]), "--", target.file];
  }
  // the target is a path, never pathspec magic (":(glob)…" would otherwise reach git's pathspec parser)
  const r = await execGit(["-c", "log.showSignature=false", "-c", "core.quotePath=false", "--literal-pathspecs", ...args], { cwd });
  if (r.code !== 0) {
    const msg = r.stderr.trim().split("\n").pop()?.replace(/^fatal:\s*/, "") ?? `exit ${r.code}`;
    if (/does not have any commits|bad default revision/i.test(msg)) return [];
    throw new AiflareError("GIT", `git log could not follow ${describeTarget(target)}: ${msg}`);
  }
  const out: GitCommit[] = [];
  for (const rec of new TextDecoder().decode(r.stdout).split(RS)) {
    const [line, ...rest] = rec.split("\n");
    if (!line) continue;
    const [hash, author, at, ct, subject] = line.split(US);
    if (!hash || !isFullHash(hash)) continue;
    const commit: GitCommit = { commitHash: hash, author: author ?? "", dateMs: Number(at) * 1000, committedMs: Number(ct) * 1000, subject: subject ?? "" };
    if (window.files) commit.changes = parseNameStatus(rest);
    out.push(commit);
  }
  return out;
}

/** `git log --name-status` lines: `M\tpath`, `R100\told\tnew`. */
function parseNameStatus(lines: string[]): PathChange[] {
  const out: PathChange[] = [];
  for (const l of lines) {
    const [status, a, b] = l.split("\t");
    if (!status || !a || !/^[A-Z]/.test(status)) continue;
    out.push(b === undefined ? { status: status[0]!, path: a } : { status: status[0]!, path: b, from: a });
  }
  return out;
}

/** The target's path relative to the repository root, with `/` separators (as the index stores paths). */
export function repoPath(target: WhyTarget, cwd: string, root: string): string {
  return relative(root, resolve(cwd, target.file)).split(sep).join("/");
}

/** A commit's facts read from the object store (no git process), or null when the commit is not there. */
export function commitInfo(commonDir: string, hash: string): GitCommit | null {
  const obj = new ObjectStore(commonDir).tryRead(hash);
  if (obj?.type !== "commit") return null;
  const c = parseCommit(obj.content);
  const name = (ident: string) => ident.replace(/\s*<[^>]*>.*$/, "");
  const at = / (\d+) [+-]\d{4}$/.exec(c.author);
  return {
    commitHash: hash,
    subject: c.message.split("\n", 1)[0] ?? "",
    author: name(c.author),
    dateMs: at ? Number(at[1]) * 1000 : c.committerTime * 1000,
    committedMs: c.committerTime * 1000,
  };
}

/** Git's dates and the index's can differ by the time between commit and capture: look back this much further. */
const SINCE_SLOP_MS = 24 * 3600 * 1000;

/** Without a date bound, git is asked for this many commits, so a short history is counted exactly. */
const COUNT_UP_TO = 50;

export interface FileHistory {
  commits: GitCommit[];
  /** false when git was asked only for the newest commits: there may be older ones */
  complete: boolean;
}

/**
 * The newest `limit` commits that touched a file or directory (all of them for 0). The index says which
 * commits have entries for the path; git is asked only for what it alone knows (commits without an entry,
 * renames), and only as far back as the newest `limit` recorded commits reach.
 */
export async function fileHistory(
  target: WhyTarget,
  ctx: { cwd: string; commonDir: string },
  recorded: { commitHash: string; ms: number }[],
  limit: number,
  opts: { files?: boolean } = {},
): Promise<FileHistory> {
  // Enough recorded commits: git need not look further back than the oldest of the newest `limit`. Otherwise
  // ask for a few more than shown, which in a short history also tells how many there are in all.
  const sinceMs = limit > 0 && recorded.length >= limit ? recorded[limit - 1]!.ms - SINCE_SLOP_MS : undefined;
  const ask = limit === 0 ? 0 : sinceMs === undefined ? Math.max(limit, COUNT_UP_TO) : limit;
  const fromGit = await commitsTouching(target, ctx.cwd, { limit: ask, sinceMs, files: opts.files });
  const seen = new Set(fromGit.map((c) => c.commitHash));
  const commits = [...fromGit];
  // Recorded commits git did not list (on another branch, or older than its window): read from the objects,
  // as far as they can still be among the newest `limit`.
  const candidates = limit === 0 ? recorded : recorded.filter((r, i) => i < limit || (sinceMs !== undefined && r.ms >= sinceMs));
  for (const r of candidates) {
    if (seen.has(r.commitHash)) continue;
    const info = commitInfo(ctx.commonDir, r.commitHash);
    if (info) commits.push(info);
  }
  const order = new Map(commits.map((c, i) => [c.commitHash, i]));
  const time = (c: GitCommit) => c.committedMs ?? c.dateMs;
  commits.sort((a, b) => time(b) - time(a) || order.get(a.commitHash)! - order.get(b.commitHash)!);
  return { commits, complete: ask === 0 || (sinceMs === undefined && fromGit.length < ask) };
}
