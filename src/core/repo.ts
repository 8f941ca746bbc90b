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

/** Reads a `.git` file (`gitdir: <path>`), as used by linked worktrees and submodules. */
function readGitFile(file: string, base: string): string | null {
  try {
    const match = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(file, "utf8"));
    if (!match?.[1]) return null;
    const gitDir = isAbsolute(match[1]) ? match[1] : resolve(base, match[1]);
    return existsSync(join(gitDir, "HEAD")) ? gitDir : null;
  } catch {
    return null;
  }
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
