/** The repository's `redact:` settings, and `aiflare redact`'s view of what would be stored. */
import { isAiflareError } from "../errors.ts";
import { assertNoHardSecret, compileRedactOptions, redactJsonlStream, type Finding, type RedactOptions } from "../redact/index.ts";
import { loadConfig, loadRedactConfig } from "./config.ts";
import type { Logger } from "./log.ts";
import { findRepo } from "./repo.ts";

/** The `redact:` settings of the repository at `root` (defaults without aiflare.yml); a bad pattern is a CONFIG error now. */
export function loadRedactOptions(root: string): RedactOptions {
  const { patterns, allow } = loadConfig(root).redact;
  const opts = { patterns, allow };
  compileRedactOptions(opts);
  return opts;
}

/** The redaction settings for a hook or capture: a broken aiflare.yml falls back to the defaults (and is logged). */
export function redactOptionsFor(root: string, logger?: Logger): RedactOptions {
  try {
    return loadRedactConfig(root);
  } catch (err) {
    logger?.log("warn", `aiflare.yml ignored for redaction: ${(err as Error).message}`);
    return {};
  }
}

export interface DisplayPiece {
  /** the redacted text of the piece, without the newline that joins it to the piece before */
  text: string;
  findings: Finding[];
  /** a hard secret that survived stage one in this piece (only when allowlisted): aiflare would refuse to write it */
  refused?: Finding;
}

/**
 * What aiflare would store for text arriving in `chunks` (for `aiflare redact`): both stages with the `redact:`
 * options of the repository around `cwd`, if any, one piece at a time (cut only after a JSON line), so a large
 * transcript is never whole in memory. JSON lines are redacted inside their string values, other lines as text;
 * finding lines count from the start of the input.
 */
export async function* redactForDisplay(chunks: AsyncIterable<string> | Iterable<string>, cwd: string): AsyncGenerator<DisplayPiece> {
  const repo = findRepo(cwd);
  const opts = repo ? loadRedactOptions(repo.root) : {};
  for await (const piece of redactJsonlStream(chunks, opts)) {
    try {
      assertNoHardSecret(piece.text);
      yield { text: piece.text, findings: piece.findings };
    } catch (err) {
      if (!isAiflareError(err, "REDACTION_REFUSED")) throw err;
      const refused = { kind: String(err.data?.kind), line: Number(err.data?.line) + piece.firstLine - 1 };
      yield { text: piece.text, findings: piece.findings, refused };
    }
  }
}

/** The text of a file, or of stdin for "-", as UTF-8 chunks of the size the stream gives. */
export async function* readTextChunks(path: string): AsyncGenerator<string> {
  const stream = path === "-" ? Bun.stdin.stream() : Bun.file(path).stream();
  const decoder = new TextDecoder();
  for await (const bytes of stream) {
    const text = decoder.decode(bytes, { stream: true });
    if (text) yield text;
  }
  const tail = decoder.decode();
  if (tail) yield tail;
}
