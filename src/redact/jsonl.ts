/**
 * Structure-aware redaction of JSONL: each line that is JSON keeps its bytes except the string values that
 * held a secret, which are decoded, redacted and re-encoded in place. Keys are never changed. Runs of lines
 * that are not JSON are redacted as text together, so a multi-line private key is still found.
 */
import { basicAuthLike, passwordLike, tokenLike } from "./checks.ts";
import { replaceSpans, spanLines } from "./engine.ts";
import { findAllSpans } from "./hidden.ts";
import { jsonStrings } from "./json-check.ts";
import { redactHome } from "./home.ts";
import type { CompiledOptions } from "./options.ts";

export interface Finding {
  kind: string;
  line: number;
}

/**
 * Stage two, run on each piece as stage one leaves it: returns the first hard secret still present, if any. Given
 * to the stage-one functions by `redactForWrite`; a piece stage one left unchanged, with no allowlist, holds no
 * hard secret (the hard rules are part of the full set, which found nothing), so only changed pieces are scanned.
 */
export type HardCheck = (text: string) => Finding | undefined;

/** Runs `check` on `after` unless stage one provably left no hard secret in it. */
function stageTwo(check: HardCheck | undefined, before: string, after: string, c: CompiledOptions, line: number): void {
  if (!check || (after === before && !c.allow)) return;
  const f = check(after);
  if (f) throw new HardSecretLeft({ kind: f.kind, line: line + f.line - 1 });
}

/** Thrown by stage two through the stage-one functions; the caller turns it into REDACTION_REFUSED. */
export class HardSecretLeft extends Error {
  constructor(readonly finding: Finding) {
    super(`hard secret left: ${finding.kind}`);
  }
}

/** Stage one over plain text; finding lines start at `firstLine`. */
export function redactTextWith(text: string, c: CompiledOptions, firstLine = 1, check?: HardCheck): { text: string; findings: Finding[] } {
  const found = findAllSpans(text, c.set, c.allow);
  const spans = c.known ? c.known.apply(text, found) : found;
  const lines = spanLines(text, spans);
  const out = replaceSpans(text, spans, redactHome);
  stageTwo(check, text, out, c, firstLine);
  return { text: out, findings: spans.map((s, i) => ({ kind: s.kind, line: lines[i]! + firstLine - 1 })) };
}

const KEY_KINDS: [RegExp, string][] = [
  // a Docker config's `"auth": "<base64 of user:password>"`
  [/^auth$/, "docker-config-auth"],
  [/(?:password|passwd|passphrase)$/, "password-assignment"],
  [/(?:secret|secretkey|clientsecret)$/, "secret-assignment"],
  [/(?:token|authorization)$/, "token-assignment"],
  [/(?:apikey|accesskey|privatekey|signingkey|encryptionkey|masterkey)$/, "key-assignment"],
  [/(?:credential|credentials)$/, "credential-assignment"],
];

const keyKinds = new Map<string, string | undefined>();

/** The kind a value is redacted as because of its key (`"apiKey": "…"`), or undefined for ordinary keys. */
export function secretKeyKind(key: string | undefined): string | undefined {
  if (!key || key.length > 64) return undefined;
  if (keyKinds.has(key)) return keyKinds.get(key);
  const kind = keyKindOf(key);
  if (keyKinds.size < 4096) keyKinds.set(key, kind);
  return kind;
}

function keyKindOf(key: string): string | undefined {
  const k = key.toLowerCase().replace(/[_\-. ]/g, "");
  for (const [re, kind] of KEY_KINDS) if (re.test(k)) return kind;
  return undefined;
}

/**
 * A string holding JSONL: an entry's `conversationSnippet`, or a prompt that pastes a transcript line after other
 * text. One of its lines is a JSON object (after indentation), whose strings hold their secrets escaped.
 */
export function holdsJsonLine(value: string): boolean {
  for (let brace = value.indexOf("{"); brace !== -1; brace = value.indexOf("{", brace + 1)) {
    let start = brace;
    while (start > 0 && (value.charCodeAt(start - 1) === 32 || value.charCodeAt(start - 1) === 9)) start--;
    if (start > 0 && value.charCodeAt(start - 1) !== 10) continue;
    const nl = value.indexOf("\n", brace);
    if (isJsonLine(value.slice(brace, nl === -1 ? value.length : nl))) return true;
  }
  return false;
}

/** Stage one over one string value, with its key as context. */
export function redactValueString(value: string, c: CompiledOptions, key?: string, check?: HardCheck): { text: string; kinds: string[] } {
  // JSONL inside a string is redacted in its decoded strings, never in the escaped form (`\n/Users/alice`)
  if (holdsJsonLine(value)) {
    const r = redactJsonlWith(value, c, check);
    return { text: r.text, kinds: r.findings.map((f) => f.kind) };
  }
  const r = redactPlainValue(value, c, key);
  stageTwo(check, value, r.text, c, 1);
  return r;
}

function redactPlainValue(value: string, c: CompiledOptions, key?: string): { text: string; kinds: string[] } {
  // a value with white space is never taken whole for its key; most values have some, so look at that first
  const keyKind = key === undefined || /\s/.test(value) ? undefined : secretKeyKind(key);
  if (keyKind) {
    const ok = keyKind === "password-assignment" ? passwordLike(value) : keyKind === "docker-config-auth" ? basicAuthLike(value) : tokenLike(value, 3.0, 12);
    if (ok && !value.startsWith("<REDACTED:") && !c.allow?.(value, 0, value.length, value)) {
      c.known?.remember(value, keyKind);
      return { text: `<REDACTED:${keyKind}>`, kinds: [keyKind] };
    }
  }
  if (value.length < 3) return { text: value, kinds: [] };
  const found = findAllSpans(value, c.set, c.allow, 0, c.scans?.get(value));
  const spans = c.known ? c.known.apply(value, found) : found;
  return { text: replaceSpans(value, spans, redactHome), kinds: spans.map((s) => s.kind) };
}

function decode(line: string, start: number, end: number): string {
  const raw = line.slice(start + 1, end - 1);
  return raw.includes("\\") ? (JSON.parse(line.slice(start, end)) as string) : raw;
}

/**
 * When `line` is one JSON text starting with `{`, `[` or `"` (after whitespace): its string literals as
 * `[start, end, isKey]` triples (see `jsonStrings`; none listed when `collect` is false); otherwise null.
 */
function jsonLineStrings(line: string, collect = true): number[] | null {
  let i = 0;
  let c = line.charCodeAt(0);
  while (c === 32 || c === 9 || c === 10 || c === 13) c = line.charCodeAt(++i);
  return c === 123 || c === 91 || c === 34 ? jsonStrings(line, collect) : null;
}

const isJsonLine = (line: string): boolean => jsonLineStrings(line, false) !== null;

/** The shortest string value that may hold something to redact (`/home/x`, a 6-character password). */
const MIN_VALUE = 6;

/** Key lists stage two found clean, for `cleanKeysCheck`: lines of a transcript repeat a few shapes. */
const cleanKeys = new Set<string>();
let cleanKeysCheck: HardCheck | undefined;

/** Stage two over a line's keys (joined by newlines); a list already found clean is not scanned again. */
function checkKeys(keys: string, check: HardCheck, lineNo: number): void {
  if (cleanKeysCheck !== check) {
    cleanKeys.clear();
    cleanKeysCheck = check;
  }
  if (cleanKeys.has(keys)) return;
  const f = check(keys);
  if (f) throw new HardSecretLeft({ kind: f.kind, line: lineNo });
  if (cleanKeys.size >= 1024) cleanKeys.clear();
  cleanKeys.add(keys);
}

/**
 * Stage one over one JSON line whose string literals are at `strings` (see `jsonLineStrings`): only string values
 * change. Keys are kept, so stage two looks at them as they are. Appends the line's output to `out` as pieces
 * (unchanged stretches are slices of the input, not copies).
 */
function redactJsonLine(line: string, strings: number[], c: CompiledOptions, lineNo: number, findings: Finding[], out: string[], check?: HardCheck): void {
  let pos = 0;
  let key: string | undefined;
  let keys: string | undefined;
  for (let k = 0; k < strings.length; k += 3) {
    const start = strings[k]!;
    const end = strings[k + 1]!;
    if (strings[k + 2] === 1) {
      key = decode(line, start, end);
      if (check) keys = keys === undefined ? key : `${keys}\n${key}`;
      continue;
    }
    // nothing shorter than a home directory or a password is worth decoding
    if (end - start < MIN_VALUE + 2) continue;
    const value = decode(line, start, end);
    let r: { text: string; kinds: string[] };
    try {
      r = redactValueString(value, c, key, check);
    } catch (err) {
      if (err instanceof HardSecretLeft) throw new HardSecretLeft({ kind: err.finding.kind, line: lineNo });
      throw err;
    }
    if (r.text === value) continue;
    for (const kind of r.kinds) findings.push({ kind, line: lineNo });
    out.push(line.slice(pos, start), JSON.stringify(r.text));
    pos = end;
  }
  if (keys !== undefined) checkKeys(keys, check!, lineNo);
  out.push(pos === 0 ? line : line.slice(pos));
}

/**
 * Stage one over JSONL text (lines that are not JSON are redacted as text); with `check`, stage two as it goes.
 * The output is built once from pieces, so a large transcript costs about its own size again, not more.
 */
export function redactJsonlWith(text: string, c: CompiledOptions, check?: HardCheck): { text: string; findings: Finding[] } {
  const out: string[] = [];
  const findings: Finding[] = [];
  let blockStart = -1;
  let blockLine = 0;
  const flush = (end: number) => {
    if (blockStart === -1) return;
    const r = redactTextWith(text.slice(blockStart, end), c, blockLine, check);
    out.push(r.text);
    for (const f of r.findings) findings.push(f);
    blockStart = -1;
  };
  let lineNo = 0;
  for (let at = 0; at <= text.length; ) {
    lineNo++;
    const nl = text.indexOf("\n", at);
    const end = nl === -1 ? text.length : nl;
    const line = text.slice(at, end);
    const strings = jsonLineStrings(line);
    if (strings) {
      flush(at > 0 ? at - 1 : 0);
      if (at > 0) out.push("\n");
      redactJsonLine(line, strings, c, lineNo, findings, out, check);
    } else if (blockStart === -1) {
      if (at > 0) out.push("\n");
      blockStart = at;
      blockLine = lineNo;
    }
    if (nl === -1) break;
    at = nl + 1;
  }
  flush(text.length);
  return { text: out.join(""), findings };
}

/** Every decoded string value of the JSON lines of `text` that holds an escape, with its line (for stage two). */
export function escapedStrings(text: string): { value: string; line: number }[] {
  const found: { value: string; line: number }[] = [];
  if (!text.includes("\\")) return found;
  text.split("\n").forEach((line, i) => {
    if (!line.includes("\\")) return;
    const strings = jsonLineStrings(line);
    if (!strings) return;
    for (let k = 0; k < strings.length; k += 3) {
      const start = strings[k]!;
      const end = strings[k + 1]!;
      if (line.slice(start, end).includes("\\")) found.push({ value: decode(line, start, end), line: i + 1 });
    }
  });
  return found;
}

/** The last newline of `buf` at or after `floor` that ends a JSON line (a safe place to cut), or -1. */
function lastCut(buf: string, floor: number): number {
  let end = buf.lastIndexOf("\n");
  while (end !== -1 && end >= floor) {
    const start = end === 0 ? 0 : buf.lastIndexOf("\n", end - 1) + 1;
    if (isJsonLine(buf.slice(start, end))) return end;
    end = start - 1;
  }
  return -1;
}

function countNewlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** One piece of a streamed redaction: its text (without the newline that joins it to the piece before). */
export interface RedactedPiece {
  text: string;
  findings: Finding[];
  /** the input line the piece starts on (1-based) */
  firstLine: number;
  /** with `keepGoing`, the hard secret stage two found left in this piece (its text is then stage one's alone) */
  refused?: Finding;
}

/**
 * `redactJsonlWith` over text arriving in chunks: the text is cut only at the newline after a JSON line, never
 * inside a run of lines that are not JSON (a multi-line private key stays whole), so joining the pieces with
 * "\n" gives exactly the output of the whole text, with the same finding lines. Memory is one piece at a time.
 * A hard secret stage two finds is thrown as HardSecretLeft, or with `keepGoing` marked on its piece.
 */
export async function* redactJsonlChunks(
  chunks: AsyncIterable<string> | Iterable<string>,
  c: CompiledOptions,
  check?: HardCheck,
  keepGoing = false,
): AsyncGenerator<RedactedPiece> {
  let buf = "";
  let floor = 0;
  let line = 1;
  const piece = (text: string): RedactedPiece => {
    const firstLine = line;
    let r: { text: string; findings: Finding[] };
    let refused: Finding | undefined;
    try {
      r = redactJsonlWith(text, c, check);
    } catch (err) {
      if (!(err instanceof HardSecretLeft)) throw err;
      refused = { kind: err.finding.kind, line: err.finding.line + firstLine - 1 };
      if (!keepGoing) throw new HardSecretLeft(refused);
      r = redactJsonlWith(text, c);
    }
    line += countNewlines(text) + 1;
    const findings = firstLine === 1 ? r.findings : r.findings.map((f) => ({ kind: f.kind, line: f.line + firstLine - 1 }));
    return refused ? { text: r.text, findings, firstLine, refused } : { text: r.text, findings, firstLine };
  };
  for await (const chunk of chunks) {
    buf += chunk;
    const cut = lastCut(buf, floor);
    if (cut === -1) {
      floor = buf.length;
      continue;
    }
    const p = piece(buf.slice(0, cut));
    buf = buf.slice(cut + 1);
    // every newline left in buf ends a line that is not JSON
    floor = buf.length;
    yield p;
  }
  yield piece(buf);
}
