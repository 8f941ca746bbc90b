/** The repository's `redact:` settings, and `aiflare redact`'s view of what would be stored. */
import { compileRedactOptions, redactJsonlStream, type RedactedPiece, type RedactOptions } from "../redact/index.ts";
import { loadConfig } from "./config.ts";
import { findRepo } from "./repo.ts";

/** The `redact:` settings of the repository at `root` (defaults without aiflare.yml); a bad pattern is a CONFIG error now. */
export function loadRedactOptions(root: string): RedactOptions {
  const { patterns, allow } = loadConfig(root).redact;
  const opts = { patterns, allow };
  compileRedactOptions(opts);
  return opts;
}

/**
 * What aiflare would store for text arriving in `chunks` (for `aiflare redact`): both stages, as `redactForWrite`
 * runs them, with the `redact:` options of the repository around `cwd`, if any, one piece at a time (cut only
 * after a JSON line), so a large transcript is never whole in memory. JSON lines are redacted inside their string
 * values, other lines as text; finding lines count from the start of the input. A piece holding a hard secret that
 * survives stage one (only when allowlisted; aiflare would refuse to write it) has `refused` set.
 */
export function redactForDisplay(chunks: AsyncIterable<string> | Iterable<string>, cwd: string): AsyncGenerator<RedactedPiece> {
  const repo = findRepo(cwd);
  const opts = repo ? loadRedactOptions(repo.root) : {};
  return redactJsonlStream(chunks, { ...opts, stageTwo: true });
}

/**
 * The text of a file, or of stdin for "-", as UTF-8 chunks of `size` bytes at most, read one at a time as the
 * consumer asks (no read-ahead, so memory holds one chunk). Every `collectEvery` bytes read, the garbage the
 * consumer left behind (the pieces before, redacted and written) is collected: left to the collector's own pace
 * it would pile up to several times the input's size.
 */
export async function* readTextChunks(path: string, size = 64 << 10, collectEvery = 4 << 20): AsyncGenerator<string> {
  const { closeSync, openSync, readSync } = await import("node:fs");
  const fd = path === "-" ? 0 : openSync(path, "r");
  const buf = Buffer.allocUnsafe(size);
  const decoder = new TextDecoder();
  let sinceCollected = 0;
  try {
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, buf, 0, size, null);
      } catch (err) {
        // stdin that is a non-blocking pipe with nothing yet to read
        if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
        await Bun.sleep(5);
        continue;
      }
      if (n === 0) break;
      sinceCollected += n;
      if (sinceCollected >= collectEvery) {
        Bun.gc(true);
        sinceCollected = 0;
      }
      const text = decoder.decode(buf.subarray(0, n), { stream: true });
      if (text) yield text;
    }
    const tail = decoder.decode();
    if (tail) yield tail;
  } finally {
    if (fd !== 0) closeSync(fd);
  }
}
