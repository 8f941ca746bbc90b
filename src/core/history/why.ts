/** `why <file>[:<line>[-<end>]]`: the commits behind a file or a line range, from git's own history. */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
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

/**
 * The commits that touched the target, newest first: `git log --follow` for a file, `git log -L` for
 * lines (both follow renames), plain `git log` for a directory.
 */
export async function commitsTouching(target: WhyTarget, cwd: string): Promise<GitCommit[]> {
  const format = `--format=${RS}%H${US}%an${US}%at${US}%s`;
  let args: string[];
  if (target.start !== undefined) {
    args = ["log", "--no-patch", format, `-L${target.start},${target.end}:${target.file}`];
  } else {
    let dir = false;
    try {
      dir = statSync(resolve(cwd, target.file)).isDirectory();
    } catch {
      // deleted or never checked out: git still knows its history
    }
    args = ["log", format, ...(dir ? [] : ["--follow"]), "--", target.file];
  }
  const r = await execGit(["-c", "log.showSignature=false", ...args], { cwd });
  if (r.code !== 0) {
    const msg = r.stderr.trim().split("\n").pop()?.replace(/^fatal:\s*/, "") ?? `exit ${r.code}`;
    if (/does not have any commits|bad default revision/i.test(msg)) return [];
    throw new AiflareError("GIT", `git log could not follow ${describeTarget(target)}: ${msg}`);
  }
  const out: GitCommit[] = [];
  for (const rec of new TextDecoder().decode(r.stdout).split(RS)) {
    const line = rec.split("\n", 1)[0];
    if (!line) continue;
    const [hash, author, at, subject] = line.split(US);
    if (!hash || !isFullHash(hash)) continue;
    out.push({ commitHash: hash, author: author ?? "", dateMs: Number(at) * 1000, subject: subject ?? "" });
  }
  return out;
}
