import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ObjectStore, parseCommit } from "../../store/objects.ts";
import { readRef } from "../../store/refs.ts";
import { readTail } from "../transcript.ts";
import { isFullHash } from "../../util/ids.ts";
import type { RepoPaths } from "../repo.ts";

/*
 * Deciding whether a `git commit` really made a commit, and which. Evidence: HEAD's reflog (each commit appends
 * a `commit…` line with the old and new hash and a timestamp), confirmed by the `[branch sha]` lines git prints
 * when the tool's output holds them. A failed commit (nothing to commit, hook rejected, conflict) appends nothing.
 */

/** A commit found to have been made by the command. */
export interface MadeCommit {
  hash: string;
  /** for `commit (amend)`: the commit it replaced */
  amendedFrom?: string;
  /** committer time, seconds */
  time: number;
}

export interface ReflogLine {
  old: string;
  new: string;
  time: number;
  message: string;
}

const ZERO = "0".repeat(40);

/** Parses reflog text (`<old> <new> <ident> <time> <tz>\t<message>` lines). */
export function parseReflog(text: string): ReflogLine[] {
  const out: ReflogLine[] = [];
  for (const line of text.split("\n")) {
    const m = /^([0-9a-f]{40}) ([0-9a-f]{40}) .*? (\d+) [+-]\d{4}\t(.*)$/.exec(line);
    if (m) out.push({ old: m[1]!, new: m[2]!, time: Number(m[3]), message: m[4]! });
  }
  return out;
}

/** The short hashes git printed for commits it made: `[main 1a2b3c4] subject`, `[main (root-commit) …]`. */
export function reportedCommits(stdout: string): string[] {
  const out: string[] = [];
  for (const m of stdout.matchAll(/^\[[^\]\n]*?([0-9a-f]{7,40})\] /gm)) out.push(m[1]!);
  return out;
}

/** Git's own words for a commit that made nothing. */
export function reportsNothingCommitted(output: string): boolean {
  return /nothing to commit|no changes added to commit|nothing added to commit/.test(output);
}

/** The text output of a shell tool's response (Claude Code's `{stdout, stderr}`, or a plain string). */
export function toolOutput(response: unknown): string {
  if (typeof response === "string") return response;
  if (response && typeof response === "object") {
    const r = response as Record<string, unknown>;
    return ["stdout", "output", "stderr"]
      .map((k) => r[k])
      .filter((x): x is string => typeof x === "string")
      .join("\n");
  }
  return "";
}

/** HEAD's commit hash in a worktree, or null (unborn branch). */
export function headCommit(repo: RepoPaths): string | null {
  let head: string;
  try {
    head = readFileSync(join(repo.gitDir, "HEAD"), "utf8").trim();
  } catch {
    return null;
  }
  if (isFullHash(head)) return head;
  const m = /^ref: (.+)$/.exec(head);
  return m ? readRef(repo.commonDir, m[1]!) : null;
}

/** The branch checked out in a worktree: its short name, the branch being rebased, or "HEAD" when detached. */
export function currentBranch(repo: RepoPaths): string {
  try {
    const head = readFileSync(join(repo.gitDir, "HEAD"), "utf8").trim();
    const m = /^ref: refs\/heads\/(.+)$/.exec(head);
    if (m) return m[1]!;
  } catch {
    return "HEAD";
  }
  for (const dir of ["rebase-merge", "rebase-apply"]) {
    try {
      const name = readFileSync(join(repo.gitDir, dir, "head-name"), "utf8").trim();
      if (name.startsWith("refs/heads/")) return name.slice("refs/heads/".length);
    } catch {
      // not rebasing this way
    }
  }
  return "HEAD";
}

export interface FindOptions {
  /** now, seconds */
  now: number;
  /** how old a commit may be to count as made by this command, seconds */
  windowSec: number;
  /** the tool's output, for git's `[branch sha]` confirmation */
  output: string;
  /** true when the commit already has an entry (so it was not made by this command) */
  isCaptured: (hash: string) => Promise<boolean>;
  /**
   * true when the entry of `to` only got there by git's post-rewrite move from `from`: an amend the commit hook
   * has not seen yet, though it already has an entry
   */
  movedHere?: (from: string, to: string) => Promise<boolean>;
  /** how many `git commit`s the command runs in this worktree: at most that many commits are its own */
  max: number;
  /** the command held a single `git commit` in all: its "nothing to commit" report is trusted */
  single: boolean;
}

/** Whether a reflog line's commit still needs the commit hook: no entry yet, or only the one post-rewrite moved there. */
async function stillOwed(l: ReflogLine, opts: FindOptions): Promise<{ owed: boolean; moved: boolean }> {
  if (!(await opts.isCaptured(l.new))) return { owed: true, moved: false };
  const moved = amendOf(l) !== undefined && (await opts.movedHere?.(l.old, l.new)) === true;
  return { owed: moved, moved };
}

function amendOf(l: ReflogLine): string | undefined {
  return l.message.startsWith("commit (amend)") && l.old !== ZERO ? l.old : undefined;
}

/** A reflog line of a new commit: `commit…`, a real merge, `cherry-pick`, `revert`, `am` (not a fast-forward). */
const isCommitLine = (l: ReflogLine) =>
  /^(?:commit|merge|cherry-pick|revert|am)\b/.test(l.message) && !/^merge [^:]*: Fast-forward/.test(l.message);

/** A commit amended again within the same command counts once, as its last version. */
function dropSuperseded(commits: MadeCommit[]): MadeCommit[] {
  const superseded = new Set(commits.map((c) => c.amendedFrom).filter(Boolean));
  return commits.filter((c) => !superseded.has(c.hash));
}

/** The most the commit hook reads of a reflog, from its end. */
const REFLOG_TAIL_MAX = 256 * 1024;

/**
 * The last lines of a reflog of `size` bytes, back to one older than `since` (seconds) when it has one: read from the
 * end in growing steps, so that a reflog of years costs a commit what a new one does.
 */
function recentReflog(path: string, size: number, since: number): ReflogLine[] {
  for (let max = 8 * 1024; ; max *= 4) {
    const lines = parseReflog(readTail(path, Math.min(max, REFLOG_TAIL_MAX)));
    if (max >= size || max >= REFLOG_TAIL_MAX || (lines.length > 0 && lines[0]!.time < since)) return lines;
  }
}

/** The commits (oldest first) that the command made in this worktree, per the reflog and the tool's output. */
export async function findNewCommits(repo: RepoPaths, opts: FindOptions): Promise<MadeCommit[]> {
  const reported = reportedCommits(opts.output);
  if (reported.length === 0 && opts.single && reportsNothingCommitted(opts.output)) return [];
  const logPath = join(repo.gitDir, "logs", "HEAD");
  let candidates: MadeCommit[] = [];
  const logSize = statSync(logPath, { throwIfNoEntry: false })?.size;
  if (logSize !== undefined) {
    const lines = recentReflog(logPath, logSize, opts.now - opts.windowSec);
    if (reported.length > 0) {
      // git named its commits: find exactly those, even when another session's commit or checkout came after
      const named: MadeCommit[] = [];
      for (let i = lines.length - 1; i >= 0; i--) {
        const l = lines[i]!;
        if (l.time < opts.now - opts.windowSec) break;
        if (!isCommitLine(l) || !reported.some((r) => l.new.startsWith(r))) continue;
        if ((await stillOwed(l, opts)).owed) named.push({ hash: l.new, amendedFrom: amendOf(l), time: l.time });
      }
      // the printed hashes may belong to another repository of the same command line
      if (named.length > 0) return dropSuperseded(named.reverse());
    }
    for (let i = lines.length - 1; i >= 0 && candidates.length < opts.max; i--) {
      const l = lines[i]!;
      if (!isCommitLine(l) || l.time < opts.now - opts.windowSec) break;
      const { owed, moved } = await stillOwed(l, opts);
      if (!owed) break;
      candidates.push({ hash: l.new, amendedFrom: amendOf(l), time: l.time });
      // the commits before an amend the hook already moved were seen by earlier commands
      if (moved) break;
    }
    candidates.reverse();
  } else {
    // no reflog (core.logAllRefUpdates off): HEAD itself, if it is recent and not captured yet
    const head = headCommit(repo);
    if (head && !(await opts.isCaptured(head))) {
      const store = new ObjectStore(repo.commonDir);
      try {
        const c = parseCommit(store.read(head, "commit").content);
        if (c.committerTime >= opts.now - opts.windowSec) candidates = [{ hash: head, time: c.committerTime }];
      } finally {
        store.close();
      }
    }
  }
  return dropSuperseded(candidates);
}
