import { statSync } from "node:fs";
import { join } from "node:path";

/**
 * Whether a shell command line can hold a committing `git` invocation at all, looked at without parsing it: most
 * shell tool calls (`ls`, `bun test`, `git status`) then skip loading the command parser and the commit hook.
 *
 * It must never say no to a line `findGitCommits` (detect.ts) finds a commit in. Every character of a word that
 * parser makes comes from the line itself, in order, with only quotes, backslashes and escaped newlines between
 * them; so with those taken out, the command's name ("…git") and its subcommand appear in the line as they are.
 */
const COMMITTING = ["commit", "merge", "cherry-pick", "revert", "am"];

export function mayCommit(command: string): boolean {
  const text = unquoted(command);
  if (!text.includes("git")) return false;
  for (const sub of COMMITTING) if (text.includes(sub)) return true;
  return false;
}

/** What a line may ask to run elsewhere than where it starts (detect.ts follows exactly these). */
const ELSEWHERE = ["cd", "pushd", "-C", "--work-tree"];

/**
 * Whether every `git` a command line runs, runs where the line starts: the line holds none of the ways `findGitCommits`
 * follows to another directory (`cd`, `pushd`, `git -C`, `--work-tree`), even split by quotes. Its commits can then
 * only be in the repository of that directory.
 */
export function runsWhereItStarts(command: string): boolean {
  const text = unquoted(command);
  for (const w of ELSEWHERE) if (text.includes(w)) return false;
  return true;
}

/**
 * The HEAD reflogs of these git dirs (each once, however often named), as their sizes and times (hashed): a commit
 * always adds a line, so while this stays the same no commit was made there. Null when one keeps no reflog.
 */
export function reflogStampOf(gitDirs: string[]): string | null {
  const parts: string[] = [];
  for (const gitDir of new Set(gitDirs)) {
    const st = statSync(join(gitDir, "logs", "HEAD"), { throwIfNoEntry: false });
    if (!st) return null;
    parts.push(`${gitDir}\0${st.size}\0${st.mtimeMs}`);
  }
  return Bun.hash(parts.sort().join("\n")).toString(36);
}

/** The line with the quotes, backslashes and newlines that may split a word taken out. */
function unquoted(command: string): string {
  if (!hasQuoting(command)) return command;
  let text = "";
  for (let i = 0; i < command.length; i++) {
    const c = command.charCodeAt(i);
    if (c !== 0x27 && c !== 0x22 && c !== 0x5c && c !== 0x0a) text += command[i];
  }
  return text;
}

/** Whether the line holds a quote, a backslash or a newline: the characters a word's letters may be split by. */
function hasQuoting(command: string): boolean {
  return command.includes("'") || command.includes('"') || command.includes("\\") || command.includes("\n");
}
