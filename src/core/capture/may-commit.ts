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
  let text = command;
  if (hasQuoting(command)) {
    text = "";
    for (let i = 0; i < command.length; i++) {
      const c = command.charCodeAt(i);
      if (c !== 0x27 && c !== 0x22 && c !== 0x5c && c !== 0x0a) text += command[i];
    }
  }
  if (!text.includes("git")) return false;
  for (const sub of COMMITTING) if (text.includes(sub)) return true;
  return false;
}

/** Whether the line holds a quote, a backslash or a newline: the characters a word's letters may be split by. */
function hasQuoting(command: string): boolean {
  return command.includes("'") || command.includes('"') || command.includes("\\") || command.includes("\n");
}
