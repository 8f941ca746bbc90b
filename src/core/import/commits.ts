import { basename } from "node:path";
import { simpleCommands } from "../capture/detect.ts";
import { reportedCommits } from "../capture/verify.ts";
import { gitSync } from "../../util/git.ts";

/*
 * Which commits a past shell command made. git prints `[branch abc1234] subject` for commit, cherry-pick and
 * revert; when the output does not show it (`-q`, a merge), a commit is matched by time (made between the call
 * and its result) and, where the command names one, by subject. Only commits that exist in this repository,
 * reachable from a ref or kept by a reflog, are returned.
 */

/** git subcommands that create commits the agent keeps. */
const COMMITTING = new Set(["commit", "merge", "cherry-pick", "revert", "am"]);

/** The committing git subcommands of a command line, each with the message it names (`-m`), if any. */
export function committingCalls(command: string): { sub: string; message: string | null; amend: boolean }[] {
  const out: { sub: string; message: string | null; amend: boolean }[] = [];
  for (const words of simpleCommands(command.slice(0, 64 * 1024))) {
    let i = 0;
    while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!)) i++;
    if (words[i] === "env" || words[i] === "sudo" || words[i] === "command") i++;
    const name = words[i];
    if (!name || (basename(name) !== "git" && basename(name) !== "git.exe")) continue;
    i++;
    while (i < words.length && words[i]!.startsWith("-")) {
      i += words[i] === "-C" || words[i] === "-c" || words[i] === "--git-dir" || words[i] === "--work-tree" ? 2 : 1;
    }
    const sub = words[i];
    if (!sub || !COMMITTING.has(sub)) continue;
    let message: string | null = null;
    for (let j = i + 1; j < words.length; j++) {
      const w = words[j]!;
      // `-m msg`, `--message msg`, and short flags run together before it (`-am msg`)
      if ((/^-[A-Za-z]*m$/.test(w) || w === "--message") && words[j + 1] !== undefined) {
        message = words[j + 1]!;
        break;
      }
      const joined = /^(?:-m|--message=)(.+)$/s.exec(w);
      if (joined) {
        message = joined[1]!;
        break;
      }
    }
    out.push({
      sub,
      message: message === null ? null : (message.split("\n")[0] ?? "").trim(),
      amend: sub === "commit" && words.slice(i + 1).includes("--amend"),
    });
  }
  return out;
}

export interface KnownCommit {
  hash: string;
  /** committer time, seconds */
  time: number;
  committedAt: string;
  parents: number;
  subject: string;
}

/** Every commit reachable from a ref or a reflog, for matching. */
export class CommitCatalog {
  readonly byHash = new Map<string, KnownCommit>();
  private readonly byTime: KnownCommit[];

  constructor(commits: KnownCommit[]) {
    for (const c of commits) this.byHash.set(c.hash, c);
    this.byTime = [...this.byHash.values()].sort((a, b) => a.time - b.time);
  }

  /** Reads the catalog of a repository with one `git log`. */
  static load(root: string): CommitCatalog {
    const r = gitSync(["log", "--all", "--reflog", "--no-color", "--format=%H%x09%ct%x09%cI%x09%P%x09%s"], { cwd: root });
    const commits: KnownCommit[] = [];
    if (r.code === 0) {
      for (const line of r.stdout.split("\n")) {
        const [hash, ct, ci, parents, ...subject] = line.split("\t");
        if (!hash || hash.length !== 40) continue;
        commits.push({
          hash,
          time: Number(ct),
          committedAt: ci ?? "",
          parents: parents ? parents.split(" ").filter(Boolean).length : 0,
          subject: subject.join("\t"),
        });
      }
    }
    return new CommitCatalog(commits);
  }

  /** The full hash of an abbreviated one, when exactly one known commit starts with it. */
  resolve(short: string): KnownCommit | null {
    if (short.length === 40) return this.byHash.get(short) ?? null;
    let found: KnownCommit | null = null;
    // abbreviated hashes are rare (one per commit); a scan over the time-sorted list is enough
    for (const c of this.byTime) {
      if (c.hash.startsWith(short)) {
        if (found) return null;
        found = c;
      }
    }
    return found;
  }

  /** Commits whose committer time lies in [from, to] (seconds), oldest first. */
  between(from: number, to: number): KnownCommit[] {
    let lo = 0;
    let hi = this.byTime.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.byTime[mid]!.time < from) lo = mid + 1;
      else hi = mid;
    }
    const out: KnownCommit[] = [];
    for (let i = lo; i < this.byTime.length && this.byTime[i]!.time <= to; i++) out.push(this.byTime[i]!);
    return out;
  }
}

/** Seconds of slack around a call's start and end when matching by time (clock granularity, slow hooks). */
const SLACK_SEC = 5;

/**
 * The commits a committing shell call made, oldest first: those git reported in the output, else those matched
 * by time (and subject, when the command names a message). `claimed` holds commits already given to a call.
 */
export function commitsOfCall(
  call: { command: string; output: string; start: number; end: number },
  catalog: CommitCatalog,
  claimed: Set<string>,
): { commits: KnownCommit[]; committing: boolean; amend: boolean } {
  const calls = committingCalls(call.command);
  if (calls.length === 0) return { commits: [], committing: false, amend: false };
  const amend = calls[0]!.amend;
  const reported = reportedCommits(call.output)
    .map((h) => catalog.resolve(h))
    .filter((c): c is KnownCommit => c !== null && !claimed.has(c.hash));
  if (reported.length) return { commits: dedupe(reported), committing: true, amend };
  if (!Number.isFinite(call.start) || !Number.isFinite(call.end)) return { commits: [], committing: true, amend };
  const window = catalog
    .between(Math.floor(call.start / 1000) - SLACK_SEC, Math.ceil(call.end / 1000) + SLACK_SEC)
    .filter((c) => !claimed.has(c.hash));
  const out: KnownCommit[] = [];
  // git named the commit but its hash is not here (the transcript came from another clone): its subject and time
  for (const subject of reportedSubjects(call.output)) {
    const match = window.find((c) => !out.includes(c) && c.subject === subject);
    if (match) out.push(match);
  }
  if (out.length) return { commits: out, committing: true, amend };
  for (const { sub, message } of calls) {
    const match = window.find(
      (c) =>
        !out.includes(c) &&
        (message !== null ? c.subject === message : sub === "merge" ? c.parents > 1 : false),
    );
    if (match) out.push(match);
  }
  return { commits: out, committing: true, amend };
}

/** The subjects of git's `[branch abc1234] subject` lines. */
function reportedSubjects(output: string): string[] {
  return [...output.matchAll(/^\[[^\]\n]*?[0-9a-f]{7,40}\] (.+)$/gm)].map((m) => m[1]!.trim());
}

function dedupe(commits: KnownCommit[]): KnownCommit[] {
  const seen = new Set<string>();
  return commits.filter((c) => (seen.has(c.hash) ? false : (seen.add(c.hash), true)));
}
