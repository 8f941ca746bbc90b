import { closeSync, existsSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
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
