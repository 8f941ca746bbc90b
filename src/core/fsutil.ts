/**
 * Every file aiflare reads or writes in a repository goes through here, because a repository's own files are not
 * trusted (SPEC §8): a committed symlink must never carry a write — or a read that is then stored and sent — out of
 * the repository.
 *
 * - aiflare's own state (`.context-capture/`, its backups and session files) lives only in real directories owned by
 *   the user, and its files are opened with O_NOFOLLOW: a symlink anywhere on the way is refused, never followed.
 * - Files install edits for the user (`CLAUDE.md`, `.gitignore`, agent settings, git hooks) may be symlinks (dotfile
 *   managers make them): they are resolved, and written through only when the target stays inside the repository.
 */
import {
  accessSync,
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  type Stats,
} from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { AiflareError } from "../errors.ts";
import { CONTEXT_DIR } from "./session.ts";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_APPEND, O_TRUNC, O_NOFOLLOW } = constants;

/** The user running aiflare (undefined where the platform has no uids). */
const myUid = (): number | undefined => process.getuid?.();

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException)?.code;
}

function unsafe(message: string): AiflareError {
  return new AiflareError("UNSAFE_PATH", message);
}

/** `path` shown relative to `base` when it lies below it. */
function shown(base: string, path: string): string {
  const rel = relative(base, path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}

/** True when `path` is `dir` or lies below it (both absolute and normalised). */
export function isInside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/**
 * Checks (and with `create`, makes, mode 0700) the directory `path`: it must be a real directory owned by the user,
 * never a symlink. Returns its lstat; undefined when it does not exist and `create` is false. Throws UNSAFE_PATH
 * (naming `path` relative to `base`) otherwise.
 */
function ownDir(base: string, path: string, create: boolean): Stats | undefined {
  let st;
  try {
    st = lstatSync(path);
  } catch (err) {
    if (code(err) !== "ENOENT" || !create) {
      if (code(err) === "ENOENT") return undefined;
      throw err;
    }
    try {
      mkdirSync(path, { mode: 0o700 });
    } catch (e) {
      if (code(e) !== "EEXIST") throw e;
    }
    st = lstatSync(path);
  }
  if (st.isSymbolicLink()) {
    const what = shown(base, path);
    throw unsafe(`${what} is a symbolic link; aiflare keeps its own files only in real directories, so it refused to use it. Remove the link (rm ${what}) and try again.`);
  }
  if (!st.isDirectory()) throw unsafe(`${shown(base, path)} is not a directory; aiflare refused to use it. Move it away and try again.`);
  const uid = myUid();
  if (uid !== undefined && st.uid !== uid) {
    throw unsafe(`${shown(base, path)} is owned by another user (uid ${st.uid}); aiflare refused to use it. Remove it and try again.`);
  }
  return st;
}

/**
 * Checks (and with `create`, makes, mode 0700) every directory from below `base` down to `dir`: each must be a real
 * directory owned by the user, never a symlink. Throws UNSAFE_PATH naming the offending component.
 */
export function ensureOwnDir(base: string, dir: string, create = true): boolean {
  const rel = relative(base, dir);
  if (rel.startsWith("..") || isAbsolute(rel)) throw unsafe(`${dir} is not inside ${base}`);
  let cur = base;
  for (const part of rel.split(sep)) {
    if (!part) continue;
    cur = join(cur, part);
    if (!ownDir(base, cur, create)) return false;
  }
  return true;
}

/**
 * Creates (or checks) `<root>/.context-capture/`: a real directory owned by the user, mode 0700 (it holds raw
 * conversation), with a `.gitignore` of its own so it never shows in `git status`. Throws UNSAFE_PATH when it is a
 * symlink, not a directory or someone else's.
 */
export function ensureContextDir(root: string): string {
  const dir = join(root, CONTEXT_DIR);
  const st = ownDir(root, dir, true)!;
  // a directory git made (a repository that commits files under it) has the umask's mode: close it
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
  // created exclusively, and left as it is when present (looked at first: a thrown EEXIST costs every hook)
  const ignore = join(dir, ".gitignore");
  if (!lstatSync(ignore, { throwIfNoEntry: false })) {
    try {
      writeFileSync(ignore, "*\n", { mode: 0o600, flag: "wx" });
    } catch (err) {
      if (code(err) !== "EEXIST") throw err;
    }
  }
  return dir;
}

/** The parent of one of aiflare's own files must be a real directory owned by the user. */
function checkParent(path: string): void {
  const dir = dirname(path);
  const st = lstatSync(dir);
  const uid = myUid();
  if (st.isSymbolicLink() || !st.isDirectory() || (uid !== undefined && st.uid !== uid)) {
    throw unsafe(`${dir} is not a real directory of this user; aiflare refused to use ${basename(path)} in it`);
  }
}

/** Opens one of aiflare's own files without following a symlink; it must be a regular file. */
function openOwn(path: string, flags: number, mode = 0o600): number {
  checkParent(path);
  let fd: number;
  try {
    fd = openSync(path, flags | O_NOFOLLOW, mode);
  } catch (err) {
    if (code(err) === "ELOOP" || code(err) === "EMLINK") {
      throw unsafe(`${path} is a symbolic link; aiflare refused to follow it. Remove it and try again.`);
    }
    throw err;
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw unsafe(`${path} is not a regular file; aiflare refused to use it`);
  }
  return fd;
}

/** Writes all of `text` (UTF-8) at the descriptor's position: one write(2) unless the system takes less. */
export function writeAll(fd: number, text: string): void {
  // Given a descriptor, writeFileSync writes at its position (nothing truncated) and goes on after a short write.
  // It encodes natively: writeSync needs the text as bytes, and a TextEncoder's or Buffer's first use, and that
  // of writeSync itself, cost a hook more than the write.
  writeFileSync(fd, text);
}

/**
 * Appends `text` with one write(2) to one of aiflare's own files opened with O_APPEND (never through a symlink),
 * so parallel writers never interleave or lose lines. Creates the file owner-only.
 */
export function appendWhole(path: string, text: string): void {
  const fd = openOwn(path, O_WRONLY | O_APPEND | O_CREAT);
  try {
    writeAll(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** Opens one of aiflare's own files with `flags` (O_NOFOLLOW added; it must be a regular file). */
export function openOwnFile(path: string, flags: number): number {
  return openOwn(path, flags);
}

/** Opens one of aiflare's own files for appending (never through a symlink) and returns the descriptor. */
export function openOwnForAppend(path: string): number {
  return openOwn(path, O_WRONLY | O_APPEND | O_CREAT);
}

/** Appends to a file the user's tools named (e.g. `$CLAUDE_ENV_FILE`), following links as they intend. */
export function appendToUserFile(path: string, text: string): void {
  const fd = openSync(path, "a", 0o600);
  try {
    writeAll(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** Writes one of aiflare's own files in place (truncating it), never through a symlink. */
export function writeOwnFile(path: string, text: string): void {
  const fd = openOwn(path, O_WRONLY | O_CREAT | O_TRUNC);
  try {
    writeAll(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** Reads one of aiflare's own files, never through a symlink; null when it does not exist. */
export function readOwnFile(path: string): string | null {
  let fd: number;
  try {
    // looked at first: an absent file is a common answer, and a thrown ENOENT costs a hook more than the lstat
    if (!lstatSync(path, { throwIfNoEntry: false })) return null;
    fd = openOwn(path, O_RDONLY);
  } catch (err) {
    if (code(err) === "ENOENT" || code(err) === "ENOTDIR") return null;
    throw err;
  }
  try {
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

/** The size of one of aiflare's own files (not of a symlink's target); undefined when absent. */
export function ownFileSize(path: string): number | undefined {
  try {
    const st = lstatSync(path);
    return st.isFile() ? st.size : undefined;
  } catch {
    return undefined;
  }
}

function modeOf(path: string): number | undefined {
  try {
    return statSync(path).mode & 0o7777;
  } catch {
    return undefined;
  }
}

/**
 * Writes through a temp file in the same directory and a rename, so a reader sees the old text or the new one,
 * never part of it. Keeps an existing file's mode unless `mode` is given; the temp file has that mode from the start.
 * The temp file is created exclusively and the rename replaces a link rather than following it: callers that mean
 * to write through a link pass its resolved target (see `resolveTarget`).
 */
export function atomicWrite(path: string, text: string, mode?: number): void {
  const finalMode = mode ?? modeOf(path);
  const tmp = `${path}.aiflare-tmp-${process.pid}`;
  // The usual case is one exclusive create, a write and a rename: the folder is made, or a temporary file that a
  // killed process of the same pid left removed, only when the create says so (a hook pays for each file function's
  // first use).
  for (let tries = 0; ; tries++) {
    try {
      // a descriptor, as the hooks' other files are opened: writeFileSync's own flag and mode options cost a hook more
      const fd = openSync(tmp, O_WRONLY | O_CREAT | O_EXCL, finalMode ?? 0o666);
      try {
        writeAll(fd, text);
      } finally {
        closeSync(fd);
      }
      break;
    } catch (err) {
      const c = code(err);
      if (tries < 2 && c === "ENOENT") mkdirSync(dirname(path), { recursive: true });
      else if (tries < 2 && c === "EEXIST") rmSync(tmp, { force: true });
      else {
        rmSync(tmp, { force: true });
        throw err;
      }
    }
  }
  try {
    // the umask may have taken bits off at creation
    if (finalMode !== undefined && (finalMode & process.umask()) !== 0) chmodSync(tmp, finalMode);
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** The real path `path` leads to, following every symlink, also for paths (or link targets) that do not exist yet. */
export function realTarget(path: string, depth = 0): string {
  if (depth > 40) throw unsafe(`${path}: too many levels of symbolic links`);
  try {
    return realpathSync(path);
  } catch (err) {
    if (code(err) !== "ENOENT" && code(err) !== "ENOTDIR") throw err;
  }
  const parent = dirname(path);
  if (parent === path) return path;
  let st;
  try {
    st = lstatSync(path);
  } catch {
    st = undefined;
  }
  const realParent = realTarget(parent, depth + 1);
  if (st?.isSymbolicLink()) return realTarget(resolve(realParent, readlinkSync(path)), depth + 1);
  return join(realParent, basename(path));
}

/** Where a write to a file the user owns in the repository may go. */
export interface TargetScope {
  /** the directories a write may land in (real paths are compared) */
  inside: string[];
  /** directories inside those that it may not land in (a repository's git dir, for a working-tree file) */
  notInside?: string[];
  /** names the place in messages ("the repository", "the repository's git directory") */
  label: string;
}

/**
 * The real path a write to `path` lands on: `path` itself, or the target when `path` (or a directory above it) is a
 * symlink — which is kept, and written through, only when the target stays within `scope`. Throws UNSAFE_PATH with
 * an actionable message otherwise, before anything is written.
 */
export function resolveTarget(path: string, scope: TargetScope, base = scope.inside[0] ?? "/"): string {
  const real = realTarget(path);
  const within = (dirs: string[] | undefined) => (dirs ?? []).some((d) => isInside(real, realTarget(d)));
  if (within(scope.inside) && !within(scope.notInside)) return real;
  const what = shown(base, path);
  throw unsafe(
    `${what} leads to ${real} (through a symbolic link), outside ${scope.label}; aiflare writes only inside it, so ` +
      `nothing was changed. Replace the link with a regular file, or point it inside ${scope.label}, and run again.`,
  );
}

/** True when `path` is a regular file this process may execute. */
export function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
