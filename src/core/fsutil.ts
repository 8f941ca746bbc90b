import { accessSync, chmodSync, closeSync, constants, existsSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { CONTEXT_DIR } from "./session.ts";

/**
 * Creates `<root>/.context-capture/` (owner-only, since it holds raw conversation) with a `.gitignore`
 * of its own, so it never shows in `git status` even before `install` edits the repository's.
 */
export function ensureContextDir(root: string): string {
  const dir = join(root, CONTEXT_DIR);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ignore = join(dir, ".gitignore");
  if (!existsSync(ignore)) {
    try {
      writeFileSync(ignore, "*\n", { mode: 0o600, flag: "wx" });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  return dir;
}

/**
 * Appends `text` with one write(2) to a file opened with O_APPEND, so parallel writers never
 * interleave or lose lines. Creates the file owner-only.
 */
export function appendWhole(path: string, text: string): void {
  const fd = openSync(path, "a", 0o600);
  try {
    const buf = Buffer.from(text, "utf8");
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
  } finally {
    closeSync(fd);
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
 */
export function atomicWrite(path: string, text: string, mode?: number): void {
  mkdirSync(dirname(path), { recursive: true });
  const finalMode = mode ?? modeOf(path);
  const tmp = `${path}.aiflare-tmp-${process.pid}`;
  try {
    writeFileSync(tmp, text, { flag: "w", mode: finalMode ?? 0o666 });
    // the umask may have taken bits off at creation
    if (finalMode !== undefined) chmodSync(tmp, finalMode);
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
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
