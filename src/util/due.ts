import { lstatSync } from "node:fs";

/**
 * For work done at most every `everyMs`: true when the mark file at `mark` was last written more than that long ago,
 * or never, or as far in the future (a clock set back); then `write` marks this look (its time by the file's). A mark
 * that cannot be written leaves the next look due again.
 */
export function dueAndMarked(mark: string, everyMs: number, now: number, write: (path: string, text: string) => void): boolean {
  const last = lstatSync(mark, { throwIfNoEntry: false })?.mtimeMs;
  if (last !== undefined && Math.abs(now - last) < everyMs) return false;
  try {
    write(mark, `${now}\n`);
  } catch {
    // not marked: the next look comes again
  }
  return true;
}
