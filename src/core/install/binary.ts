import { realpathSync } from "node:fs";
import { basename, delimiter, isAbsolute, join } from "node:path";
import { AiflareError } from "../../errors.ts";
import { isExecutableFile } from "../fsutil.ts";

/** Quotes `s` for a POSIX shell; plain paths stay as they are so settings files read naturally. */
export function shellQuote(s: string): string {
  if (/^[A-Za-z0-9_\/.,:@%+=-]+$/.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Undoes `shellQuote` for the leading word of a command line (single/double quotes or bare). */
export function firstShellWord(cmd: string): string {
  let out = "";
  let i = 0;
  const s = cmd.trimStart();
  while (i < s.length && !/\s/.test(s[i]!)) {
    const c = s[i]!;
    if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) return out + s.slice(i + 1);
      out += s.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      const end = s.indexOf('"', i + 1);
      if (end < 0) return out + s.slice(i + 1);
      out += s.slice(i + 1, end).replace(/\\(["\\$`])/g, "$1");
      i = end + 1;
    } else if (c === "\\" && i + 1 < s.length) {
      out += s[i + 1];
      i += 2;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/**
 * The absolute path of this aiflare binary, for hooks to call. Prefers the name found on PATH when it
 * leads to the same file (a package manager's symlink survives upgrades; the versioned file behind it
 * does not). Run from source (under bun) there is no binary to point hooks at: that is an error.
 */
export function currentBinary(opts: { execPath?: string; path?: string } = {}): { bin: string; quoted: string } {
  const execPath = opts.execPath ?? process.execPath;
  const exe = basename(execPath).replace(/\.exe$/, "");
  if (exe === "bun" || exe === "node") {
    throw new AiflareError(
      "INVALID_ARGUMENT",
      "install needs the compiled aiflare binary (hooks call it by path): run `bun run build`, then `dist/aiflare install`.",
    );
  }
  for (const dir of (opts.path ?? process.env.PATH ?? "").split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, "aiflare");
    if (isExecutableFile(candidate) && sameFile(candidate, execPath)) return { bin: candidate, quoted: shellQuote(candidate) };
  }
  return { bin: execPath, quoted: shellQuote(execPath) };
}

/** The executable `name` as a shell finds it on `path` (the first absolute directory holding it), or undefined. */
export function onPath(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? "").split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/**
 * What Gemini CLI's hooks call aiflare by. Gemini trusts a project's hooks by name and command line and flags one
 * whose command changed as untrusted, so the command must outlive upgrades and moves of the binary: plain `aiflare`
 * when the aiflare a shell finds on PATH is this binary (Gemini runs hooks through a shell with the user's PATH),
 * else this binary's path, which changes only when the binary moves.
 */
export function stableCommandBinary(binary: { bin: string; quoted: string }, path: string | undefined): string {
  const found = onPath("aiflare", path);
  return found && sameFile(found, binary.bin) ? "aiflare" : binary.quoted;
}

/** True when a hook command line is one of aiflare's (`…aiflare… hook <event>`). */
export function isAiflareCommand(cmd: unknown): boolean {
  return typeof cmd === "string" && /aiflare\S*\s+hook\s+[a-z-]+/.test(cmd);
}

/** The `hook <event>` part of an aiflare command line, e.g. `post-tool-use`. */
export function hookEventOf(cmd: string): string | undefined {
  return /\shook\s+([a-z-]+)/.exec(cmd)?.[1];
}
