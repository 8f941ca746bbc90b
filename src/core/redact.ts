/** The repository's `redact:` settings, and `aiflare redact`'s view of what would be stored. */
import { isAiflareError } from "../errors.ts";
import { assertNoHardSecret, compileRedactOptions, redactJsonl, type Finding, type RedactOptions } from "../redact/index.ts";
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

export interface DisplayResult {
  text: string;
  findings: Finding[];
  /** a hard secret that survived stage one (only when allowlisted): aiflare would refuse to write this */
  refused?: Finding;
}

/**
 * What aiflare would store for `text` (for `aiflare redact`): both stages with the `redact:` options of the
 * repository around `cwd`, if any. JSON lines are redacted inside their string values, other lines as text.
 */
export function redactForDisplay(text: string, cwd: string): DisplayResult {
  const repo = findRepo(cwd);
  const opts = repo ? loadRedactOptions(repo.root) : {};
  const result = redactJsonl(text, opts);
  try {
    assertNoHardSecret(result.text);
    return result;
  } catch (err) {
    if (!isAiflareError(err, "REDACTION_REFUSED")) throw err;
    return { ...result, refused: { kind: String(err.data?.kind), line: Number(err.data?.line) } };
  }
}
