import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";

/** Where a working tree and its git directories are. */
export interface RepoPaths {
  /** the working tree root (the directory that holds `.git`) */
  root: string;
  /** this worktree's git dir (`.git`, or `.git/worktrees/<name>` for a linked worktree) */
  gitDir: string;
  /** the common git dir: refs, objects, hooks and aiflare's index live here */
  commonDir: string;
}

/**
 * Finds the repository that contains `start` by walking up to the nearest `.git`, without spawning git:
 * hooks call this on every prompt. Returns null outside any repository.
 */
export function findRepo(start: string): RepoPaths | null {
  let dir = resolve(start);
  for (;;) {
    const dotGit = join(dir, ".git");
    let st;
    try {
      st = statSync(dotGit);
    } catch {
      st = undefined;
    }
    if (st?.isDirectory()) {
      if (existsSync(join(dotGit, "HEAD"))) return { root: dir, gitDir: dotGit, commonDir: readCommonDir(dotGit) };
    } else if (st?.isFile()) {
      const gitDir = readGitFile(dotGit, dir);
      if (gitDir) return { root: dir, gitDir, commonDir: readCommonDir(gitDir) };
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * The repository holding `dir`, where `near` (an already found repository) is the usual answer: `near` itself when
 * `dir` is its root (no second look), else the one found from `dir`, else `near`.
 */
export function repoAt(dir: string, near: RepoPaths): RepoPaths {
  return dir === near.root ? near : (findRepo(dir) ?? near);
}

/** Reads a `.git` file (`gitdir: <path>`), as used by linked worktrees and submodules. */
function readGitFile(file: string, base: string): string | null {
  try {
    const named = gitdirLine(readFileSync(file, "utf8"));
    if (!named) return null;
    const gitDir = isAbsolute(named) ? named : resolve(base, named);
    return existsSync(join(gitDir, "HEAD")) ? gitDir : null;
  } catch {
    return null;
  }
}

/**
 * The path of the first `gitdir: <path>` line, surrounding blanks dropped (none for an empty one): read without a
 * regular expression, whose first use would cost every hook in a linked worktree more than the reading.
 */
export function gitdirLine(text: string): string | undefined {
  for (let at = 0; at <= text.length; ) {
    const nl = text.indexOf("\n", at);
    const end = nl < 0 ? text.length : nl;
    if (text.startsWith("gitdir:", at)) return text.slice(at + "gitdir:".length, end).trim() || undefined;
    if (nl < 0) break;
    at = nl + 1;
  }
  return undefined;
}

function readCommonDir(gitDir: string): string {
  const file = join(gitDir, "commondir");
  // looked for first: most git dirs have none, and a thrown ENOENT costs a hook more than the lookup
  if (!existsSync(file)) return gitDir;
  try {
    const rel = readFileSync(file, "utf8").trim();
    if (rel) return isAbsolute(rel) ? rel : resolve(gitDir, rel);
  } catch {
    // no commondir file: this git dir is the common dir
  }
  return gitDir;
}
