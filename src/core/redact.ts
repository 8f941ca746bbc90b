import { findRepo } from "./repo.ts";
import { isAiflareError } from "../errors.ts";
import { assertNoHardSecret, loadRedactOptions, redactJsonl, type Finding } from "../redact/index.ts";

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
