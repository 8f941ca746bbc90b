import { basename, isAbsolute, resolve } from "node:path";

/*
 * Finding `git commit` in a shell command line. The agent's hook filter fails open, so the hook reads the command
 * itself: a small shell scanner splits it into simple commands (through `&&`, `;`, pipes, subshells, `$( )`,
 * backticks, heredoc bodies skipped) and each command is checked for git's `commit` subcommand.
 */

/** One git invocation that can make commits, found in a command line. */
export interface CommitInvocation {
  /** the directory git would run in (`cd` and `-C` applied), absolute */
  dir: string;
  amend: boolean;
  /** the git subcommand: commit, merge, cherry-pick, revert or am */
  sub: string;
}

/**
 * git subcommands that make commits the agent keeps. `rebase` is not among them: it rewrites commits, whose entries
 * git's post-rewrite hook moves; `pull` merges other people's work.
 */
export const COMMITTING_SUBCOMMANDS = new Set(["commit", "merge", "cherry-pick", "revert", "am"]);

/** Longest command line read for commits (a longer one is read up to here, and the rest logged as skipped). */
export const MAX_COMMAND_CHARS = 64 * 1024;
/** At most this many committing invocations of one command line are followed. */
export const MAX_INVOCATIONS = 200;

/** Splits a shell command line into simple commands (lists of words), in execution order. */
export function simpleCommands(src: string): string[][] {
  const out: string[][] = [];
  let pos = 0;

  const skipHeredocs = (pending: { delim: string; strip: boolean }[]) => {
    for (const h of pending) {
      while (pos < src.length) {
        let nl = src.indexOf("\n", pos);
        if (nl < 0) nl = src.length;
        let line = src.slice(pos, nl);
        pos = nl + 1;
        if (h.strip) line = line.replace(/^\t+/, "");
        if (line === h.delim) break;
      }
    }
    pending.length = 0;
  };

  const scan = (end: string | null): void => {
    let words: string[] = [];
    let word = "";
    let inWord = false;
    const heredocs: { delim: string; strip: boolean }[] = [];
    const endWord = () => {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    };
    const endCmd = () => {
      endWord();
      if (words.length) out.push(words);
      words = [];
    };
    while (pos < src.length) {
      const c = src[pos]!;
      if (end !== null && c === end) {
        pos++;
        endCmd();
        return;
      }
      if (c === " " || c === "\t") {
        endWord();
        pos++;
      } else if (c === "\n") {
        endCmd();
        pos++;
        if (heredocs.length) skipHeredocs(heredocs);
      } else if (c === ";" || c === "&" || c === "|") {
        endCmd();
        pos++;
      } else if (c === "(") {
        endCmd();
        pos++;
        scan(")");
      } else if (c === ")") {
        // unbalanced at this level: treat as a separator
        endCmd();
        pos++;
      } else if (c === "#" && !inWord) {
        const nl = src.indexOf("\n", pos);
        pos = nl < 0 ? src.length : nl;
      } else if (c === "'") {
        const close = src.indexOf("'", pos + 1);
        word += src.slice(pos + 1, close < 0 ? src.length : close);
        inWord = true;
        pos = close < 0 ? src.length : close + 1;
      } else if (c === '"') {
        pos++;
        inWord = true;
        while (pos < src.length && src[pos] !== '"') {
          const d = src[pos]!;
          if (d === "\\" && pos + 1 < src.length) {
            const n = src[pos + 1]!;
            if (n !== "\n") word += '"\\$`'.includes(n) ? n : `\\${n}`;
            pos += 2;
          } else if (d === "$" && src[pos + 1] === "(") {
            pos += 2;
            scan(")");
            word += "$(…)";
          } else if (d === "`") {
            pos++;
            scan("`");
            word += "`…`";
          } else {
            word += d;
            pos++;
          }
        }
        pos++;
      } else if (c === "\\") {
        if (src[pos + 1] !== "\n") {
          word += src[pos + 1] ?? "";
          inWord = true;
        }
        pos += 2;
      } else if (c === "$" && src[pos + 1] === "(") {
        pos += 2;
        scan(")");
        word += "$(…)";
        inWord = true;
      } else if (c === "`") {
        pos++;
        scan("`");
        word += "`…`";
        inWord = true;
      } else if (c === "<" && src[pos + 1] === "<" && src[pos + 2] !== "<") {
        endWord();
        pos += 2;
        const strip = src[pos] === "-";
        if (strip) pos++;
        while (src[pos] === " " || src[pos] === "\t") pos++;
        let delim = "";
        while (pos < src.length && !" \t\n;&|()<>".includes(src[pos]!)) {
          const d = src[pos]!;
          if (d === "'" || d === '"') {
            const close = src.indexOf(d, pos + 1);
            delim += src.slice(pos + 1, close < 0 ? src.length : close);
            pos = close < 0 ? src.length : close + 1;
          } else if (d === "\\") {
            delim += src[pos + 1] ?? "";
            pos += 2;
          } else {
            delim += d;
            pos++;
          }
        }
        if (delim) heredocs.push({ delim, strip });
      } else if (c === "<" || c === ">") {
        // a redirection: its target is a file name, not a word of the command
        endWord();
        pos++;
        while (src[pos] === ">" || src[pos] === "<" || src[pos] === "&") pos++;
        while (src[pos] === " " || src[pos] === "\t") pos++;
        while (pos < src.length && !" \t\n;&|()<>".includes(src[pos]!)) pos++;
      } else {
        word += c;
        inWord = true;
        pos++;
      }
    }
    endCmd();
  };

  scan(null);
  return out;
}

const SHELL_KEYWORDS = new Set(["if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "time", "exec", "command", "nohup", "builtin"]);
const GIT_FLAGS_WITH_VALUE = new Set(["-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env", "--super-prefix"]);

function expandHome(path: string, home: string | undefined): string | null {
  if (path === "~" || path.startsWith("~/")) return home ? home + path.slice(1) : null;
  if (path.startsWith("$HOME/") || path === "$HOME") return home ? home + path.slice(5) : null;
  if (/[$`*?]/.test(path)) return null;
  return path;
}

/** Drops assignments, shell keywords and command wrappers (`env`, `sudo`) in front of the command name. */
function commandStart(words: string[]): number {
  let i = 0;
  while (i < words.length) {
    const w = words[i]!;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w) || SHELL_KEYWORDS.has(w)) i++;
    else if (w === "env" || w === "sudo") {
      i++;
      while (i < words.length && (words[i]!.startsWith("-") || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!))) i++;
    } else break;
  }
  return i;
}

/**
 * The `git commit` invocations in a shell command line, with the directory each runs in
 * (following `cd DIR` earlier in the line and git's `-C DIR`). `cwd` is where the line starts.
 */
export function findGitCommits(command: string, cwd: string, home?: string): CommitInvocation[] {
  const found: CommitInvocation[] = [];
  let dir = cwd;
  for (const words of simpleCommands(command.length > MAX_COMMAND_CHARS ? command.slice(0, MAX_COMMAND_CHARS) : command)) {
    if (found.length >= MAX_INVOCATIONS) break;
    const start = commandStart(words);
    const name = words[start];
    if (name === undefined) continue;
    if ((name === "cd" || name === "pushd") && words[start + 1] !== undefined) {
      const target = words[start + 1] === "--" ? words[start + 2] : words[start + 1];
      const expanded = target === undefined || target === "-" ? null : expandHome(target, home);
      if (expanded !== null) dir = isAbsolute(expanded) ? expanded : resolve(dir, expanded);
      continue;
    }
    if (basename(name) !== "git" && basename(name) !== "git.exe") continue;
    let gitDir = dir;
    let i = start + 1;
    let sub: string | undefined;
    while (i < words.length) {
      const w = words[i]!;
      if (w === "-C") {
        const target = words[i + 1] === undefined ? null : expandHome(words[i + 1]!, home);
        if (target !== null) gitDir = isAbsolute(target) ? target : resolve(gitDir, target);
        i += 2;
      } else if (w.startsWith("--work-tree=")) {
        const target = expandHome(w.slice("--work-tree=".length), home);
        if (target !== null) gitDir = resolve(gitDir, target);
        i++;
      } else if (GIT_FLAGS_WITH_VALUE.has(w)) {
        if (w === "--work-tree" && words[i + 1] !== undefined) {
          const target = expandHome(words[i + 1]!, home);
          if (target !== null) gitDir = resolve(gitDir, target);
        }
        i += 2;
      } else if (w.startsWith("-")) {
        i++;
      } else {
        sub = w;
        break;
      }
    }
    if (sub === undefined || !COMMITTING_SUBCOMMANDS.has(sub)) continue;
    const rest = words.slice(i + 1);
    // `git merge --abort`, `git cherry-pick --quit`… end a sequence without a commit of their own
    if (sub !== "commit" && rest.some((w) => w === "--abort" || w === "--quit" || w === "--skip")) continue;
    found.push({ dir: gitDir, amend: sub === "commit" && rest.includes("--amend"), sub });
  }
  return found;
}
