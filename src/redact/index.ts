/**
 * The redactor every write into a git object and every request body goes through (SPEC §8).
 *
 * Stage one replaces secrets with `<REDACTED:kind>` and home directories with `~`. Stage two scans the result
 * again with the hard-secret rules (private keys, cloud and provider keys), ignoring the allowlist; if anything
 * survives, the write is refused with REDACTION_REFUSED.
 */
import { AiflareError } from "../errors.ts";
import { spanLines } from "./engine.ts";
import { findAllSpans } from "./hidden.ts";
import {
  escapedStrings,
  HardSecretLeft,
  holdsJsonLine,
  redactJsonlChunks,
  redactJsonlWith,
  redactTextWith,
  redactValueString,
  secretKeyKind,
  type Finding,
  type HardCheck,
  type RedactedPiece,
} from "./jsonl.ts";
import { SecretMemory } from "./known.ts";
import { compileOptions, hardRuleSet, type CompiledOptions, type RedactOptions } from "./options.ts";
import { scanStrings } from "./quiet.ts";

export { SecretMemory } from "./known.ts";
export type { Finding, RedactedPiece } from "./jsonl.ts";
export type { RedactOptions } from "./options.ts";
export { builtinKinds, builtinRules, type Rule } from "./rules.ts";

export interface RedactResult {
  text: string;
  findings: Finding[];
}

/** Stage one: replaces secrets with `<REDACTED:kind>` and home directories with `~`. */
export function redactText(text: string, opts: RedactOptions = {}): RedactResult {
  return redactTextWith(text, compileOptions(opts));
}

/** Stage one for JSONL: redacts inside string values only, keeping every line valid JSON. */
export function redactJsonl(text: string, opts: RedactOptions = {}): RedactResult {
  return redactJsonlWith(text, compileOptions(opts));
}

/** What stage one would redact, without the secrets: kind and 1-based line of each finding. */
export function scan(text: string, opts: RedactOptions & { jsonl?: boolean } = {}): Finding[] {
  return (opts.jsonl ? redactJsonl(text, opts) : redactText(text, opts)).findings;
}

/** Hard secrets present in `text` (stage two), ignoring any allowlist. */
export function findHardSecrets(text: string): Finding[] {
  const spans = findAllSpans(text, hardRuleSet());
  const lines = spanLines(text, spans);
  return spans.map((s, i) => ({ kind: s.kind, line: lines[i]! }));
}

function refuse(f: Finding): never {
  throw new AiflareError(
    "REDACTION_REFUSED",
    `a ${f.kind} (line ${f.line}) is still present after redaction, so nothing was written; ` +
      `if it is listed under redact.allow in aiflare.yml, remove it (hard secrets cannot be allowlisted)`,
    { data: { kind: f.kind, line: f.line } },
  );
}

/** The first hard secret present in `text`, as it is or behind JSON escapes (`\/`, `\u0041`) in a JSONL line. */
const firstHardSecret: HardCheck = (text) => {
  const [first] = findHardSecrets(text);
  if (first) return first;
  for (const s of escapedStrings(text)) {
    const [hidden] = findHardSecrets(s.value);
    if (hidden) return { kind: hidden.kind, line: s.line };
  }
  return undefined;
};

/** Stage two: throws REDACTION_REFUSED when a hard secret is still present. The message names the kind only. */
export function assertNoHardSecret(text: string): void {
  const f = firstHardSecret(text);
  if (f) refuse(f);
}

/** Runs stage one with stage two checking each piece it leaves, turning a hard secret left into REDACTION_REFUSED. */
function withStageTwo<T>(run: (check: HardCheck) => T): T {
  try {
    return run(firstHardSecret);
  } catch (err) {
    if (err instanceof HardSecretLeft) refuse(err.finding);
    throw err;
  }
}

/**
 * Runs a redaction; when it found secrets new to the session's memory that its output still holds (an earlier line
 * repeated one before the line where it was found), runs it once more, now knowing them.
 */
function untilKnown<T>(c: CompiledOptions, run: () => T, serialize: (out: T) => string): T {
  if (!c.known) return run();
  const before = c.known.size;
  const out = run();
  if (c.known.size === before) return out;
  return SecretMemory.holdsAny(serialize(out), c.known.valuesAfter(before)) ? run() : out;
}

/**
 * Both stages, for anything about to be written into a git object or sent over the network. Stage two checks
 * each piece (string value, text block) as stage one leaves it.
 */
export function redactForWrite(text: string, opts: RedactOptions & { jsonl?: boolean } = {}): string {
  const c = compileOptions(opts);
  const run = () => withStageTwo((check) => (opts.jsonl ? redactJsonlWith(text, c, check) : redactTextWith(text, c, 1, check)).text);
  return untilKnown(c, run, (out) => out);
}

/**
 * Stage one for JSONL arriving in chunks; the pieces joined with "\n" equal `redactJsonl` of the whole text. With
 * `stageTwo`, each piece is checked as `redactForWrite` checks it, and one that would be refused is marked
 * `refused` (with stage one's text and findings) instead of ending the stream.
 */
export function redactJsonlStream(
  chunks: AsyncIterable<string> | Iterable<string>,
  opts: RedactOptions & { stageTwo?: boolean } = {},
): AsyncGenerator<RedactedPiece> {
  return redactJsonlChunks(chunks, compileOptions(opts), opts.stageTwo ? firstHardSecret : undefined, true);
}

/**
 * `redactForWrite` with `jsonl` over text arriving in chunks: yields the output as it goes, which joined equals
 * `redactForWrite` of the whole text. Throws REDACTION_REFUSED, as that does, when a piece keeps a hard secret;
 * what was yielded before holds none.
 */
export async function* redactForWriteStream(chunks: AsyncIterable<string> | Iterable<string>, opts: RedactOptions = {}): AsyncGenerator<string> {
  const c = compileOptions(opts);
  try {
    let first = true;
    for await (const p of redactJsonlChunks(chunks, c, firstHardSecret)) {
      yield first ? p.text : `\n${p.text}`;
      first = false;
    }
  } catch (err) {
    if (err instanceof HardSecretLeft) refuse(err.finding);
    throw err;
  }
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/**
 * The built-in keywords made of hex digits and dashes alone: the only ones a UUID can spell. Written out, so the
 * check needs no rule table (redact-identifier.test.ts keeps the list equal to the table's).
 */
export const HEX_KEYWORDS: readonly string[] = ["a3-", "aaaaaaaaaaaaaaaaaaaa", "acca", "eaaa", "eaac"];

/** Whether `id` holds one of {@link HEX_KEYWORDS}. */
function spellsHexKeyword(id: string): boolean {
  const lower = id.toLowerCase();
  for (const k of HEX_KEYWORDS) if (lower.includes(k)) return true;
  return false;
}

/**
 * Both stages over an identifier that is written as it is, outside any redacted text: a session id becomes a
 * path and a commit-message trailer on the sessions branch and a field of a request body. An id that stage one
 * would change (e.g. a `ghp_…` token given as a session id) cannot be redacted without losing what it names, so
 * it is refused with REDACTION_REFUSED. The message names the kind only.
 */
export function assertPlainIdentifier(id: string, opts: RedactOptions = {}): void {
  // the ids agents give: a UUID that spells none of the few keywords written in hex digits runs no built-in rule,
  // so the rule set need not be built for it
  if (!opts.patterns?.length && UUID_RE.test(id) && !spellsHexKeyword(id)) return;
  // by the rules alone: a session's own remembered secrets never make its id
  const { text, findings } = redactText(id, { patterns: opts.patterns, allow: opts.allow });
  assertNoHardSecret(text);
  const [first] = findings;
  if (first || text !== id) {
    throw new AiflareError(
      "REDACTION_REFUSED",
      `the session id looks like a ${first?.kind ?? "secret"}, so nothing was stored or sent under it; ` +
        `session ids are the agent's own (e.g. a UUID), never a token`,
      { data: { kind: first?.kind ?? "secret", line: 1 } },
    );
  }
}

/**
 * Both stages over every string inside a JSON-like value (e.g. a timeline entry). Keys are kept; a value under
 * a secret-like key (`password`, `apiKey`, `token`…) is redacted whole when it looks like a secret. A value with
 * nothing to redact may be returned as it is.
 */
export function redactValueForWrite<T>(value: T, opts: RedactOptions = {}): T {
  return redactValuesForWrite([value], opts).values[0] as T;
}

/**
 * `redactValueForWrite` of each value, and whether it changed each one. Without an allowlist, while the memory of
 * secrets is empty, the strings the rules provably leave as they are (`scanStrings`, all of them scanned together)
 * skip stage one, and a value holding only such strings is returned as it is.
 */
export function redactValuesForWrite(values: readonly unknown[], opts: RedactOptions = {}): { values: unknown[]; changed: boolean[] } {
  let c = compileOptions(opts);
  const out: unknown[] = [];
  const changed: boolean[] = [];
  // what the rules find in a string depends on the string alone unless secrets are remembered or allowed; a memory
  // that is still empty holds nothing to find (and once redaction adds to it, the strings are no longer skipped)
  const remembers = () => c.known !== undefined && c.known.size > 0;
  let quiet: Uint8Array | undefined;
  let counts: number[] = [];
  if (!remembers() && !c.allow) {
    const scanned = scanValues(values, c);
    quiet = scanned.quiet;
    counts = scanned.counts;
    c = { ...c, scans: scanned.scans };
  }
  let at = 0;
  let changes = 0;
  const walk = (x: unknown, key: string | undefined): unknown => {
    if (typeof x === "string") {
      if (quiet?.[at++] === 1 && !remembers()) return x;
      const text = withStageTwo((check) => redactValueString(x, c, key, check).text);
      if (text !== x) changes++;
      return text;
    }
    if (Array.isArray(x)) return x.map((item) => walk(item, key));
    if (x && typeof x === "object") return Object.fromEntries(Object.entries(x).map(([k, val]) => [k, walk(val, k)]));
    return x;
  };
  for (let v = 0; v < values.length; v++) {
    const value = values[v];
    const start = at;
    // a value whose strings all stay as they are is itself kept as it is, not copied
    if (quiet && !remembers() && allQuiet(quiet, start, start + counts[v]!)) {
      at += counts[v]!;
      out.push(value);
      changed.push(false);
      continue;
    }
    const before = changes;
    // a second run (untilKnown) walks the same strings again
    const run = () => {
      at = start;
      return walk(value, undefined);
    };
    out.push(untilKnown(c, run, (v) => JSON.stringify(v)));
    changed.push(changes !== before);
  }
  return { values: out, changed };
}

/** Whether `quiet` is 1 from `start` to `end`. */
function allQuiet(quiet: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (quiet[i] !== 1) return false;
  return true;
}

/**
 * Every string of `values` scanned at once (`scanStrings`), in the order `redactValuesForWrite` walks them: `quiet`
 * is 1 for a string stage one provably returns unchanged (the rules find nothing in it, and neither its key nor
 * JSON lines inside it ask for more than the rules).
 */
function scanValues(values: readonly unknown[], c: CompiledOptions): ReturnType<typeof scanStrings> & { counts: number[] } {
  const strings: string[] = [];
  const counts: number[] = [];
  const keys: (string | undefined)[] = [];
  const collect = (x: unknown, key: string | undefined): void => {
    if (typeof x === "string") {
      strings.push(x);
      keys.push(key);
    } else if (Array.isArray(x)) for (const item of x) collect(item, key);
    else if (x && typeof x === "object") {
      // the keys as Object.entries lists them, without an array per key
      const names = Object.keys(x);
      for (let k = 0; k < names.length; k++) collect((x as Record<string, unknown>)[names[k]!], names[k]);
    }
  };
  for (const v of values) {
    const before = strings.length;
    collect(v, undefined);
    counts.push(strings.length - before);
  }
  // JSON lines inside a string are redacted in their decoded strings (redactValueString), never from a scan of the
  // string's own text: such a string (an entry's conversation, most of its text) is not scanned, only redacted
  const scannedAt: number[] = [];
  const toScan: string[] = [];
  for (let i = 0; i < strings.length; i++) {
    if (holdsJsonLine(strings[i]!)) continue;
    scannedAt.push(i);
    toScan.push(strings[i]!);
  }
  const scanned = scanStrings(toScan, c.set);
  const quiet = new Uint8Array(strings.length);
  for (let j = 0; j < scannedAt.length; j++) {
    const i = scannedAt[j]!;
    // a secret-like key may take the value whole
    quiet[i] = scanned.quiet[j] === 1 && (keys[i] === undefined || secretKeyKind(keys[i]) === undefined) ? 1 : 0;
  }
  return { quiet, scans: scanned.scans, counts };
}

/** Checks options from aiflare.yml now, so a bad kind name or regular expression is a CONFIG error before any write. */
export function compileRedactOptions(opts: RedactOptions): void {
  compileOptions(opts);
}
