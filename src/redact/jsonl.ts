/**
 * Structure-aware redaction of JSONL: each line that is JSON keeps its bytes except the string values that
 * held a secret, which are decoded, redacted and re-encoded in place. Keys are never changed. Runs of lines
 * that are not JSON are redacted as text together, so a multi-line private key is still found.
 */
import { passwordLike, tokenLike } from "./checks.ts";
import { replaceSpans, spanLines, type Span } from "./engine.ts";
import { findAllSpans } from "./hidden.ts";
import { redactHome } from "./home.ts";
import type { CompiledOptions } from "./options.ts";

export interface Finding {
  kind: string;
  line: number;
}

/** Stage one over plain text; finding lines start at `firstLine`. */
export function redactTextWith(text: string, c: CompiledOptions, firstLine = 1): { text: string; findings: Finding[] } {
  const spans = findAllSpans(text, c.set, c.allow);
  const lines = spanLines(text, spans);
  return {
    text: replaceSpans(text, spans, redactHome),
    findings: spans.map((s, i) => ({ kind: s.kind, line: lines[i]! + firstLine - 1 })),
  };
}

const KEY_KINDS: [RegExp, string][] = [
  [/(?:password|passwd|passphrase)$/, "password-assignment"],
  [/(?:secret|secretkey|clientsecret)$/, "secret-assignment"],
  [/(?:token|authorization)$/, "token-assignment"],
  [/(?:apikey|accesskey|privatekey|signingkey|encryptionkey|masterkey)$/, "key-assignment"],
  [/(?:credential|credentials)$/, "credential-assignment"],
];

/** The kind a value is redacted as because of its key (`"apiKey": "…"`), or undefined for ordinary keys. */
export function secretKeyKind(key: string | undefined): string | undefined {
  if (!key || key.length > 64) return undefined;
  const k = key.toLowerCase().replace(/[_\-. ]/g, "");
  for (const [re, kind] of KEY_KINDS) if (re.test(k)) return kind;
  return undefined;
}

/** Stage one over one string value, with its key as context. */
export function redactValueString(value: string, c: CompiledOptions, key?: string): { text: string; kinds: string[] } {
  const keyKind = secretKeyKind(key);
  if (keyKind && !/\s/.test(value)) {
    const ok = keyKind === "password-assignment" ? passwordLike(value) : tokenLike(value, 3.0, 12);
    if (ok && !value.startsWith("<REDACTED:") && !c.allow?.(value, 0, value.length, value)) {
      return { text: `<REDACTED:${keyKind}>`, kinds: [keyKind] };
    }
  }
  if (value.length < 3) return { text: value, kinds: [] };
  const spans: Span[] = findAllSpans(value, c.set, c.allow);
  return { text: replaceSpans(value, spans, redactHome), kinds: spans.map((s) => s.kind) };
}

/** Calls `onString(raw, start, end, key)` for every string value (not key) of a valid JSON text. */
function eachStringValue(line: string, onString: (start: number, end: number, key: string | undefined) => void): void {
  let key: string | undefined;
  const n = line.length;
  for (let i = 0; i < n; i++) {
    if (line.charCodeAt(i) !== 34) continue;
    let j = i + 1;
    let escaped = false;
    while (j < n) {
      const c = line.charCodeAt(j);
      if (c === 92) {
        escaped = true;
        j += 2;
        continue;
      }
      if (c === 34) break;
      j++;
    }
    let k = j + 1;
    while (k < n && (line[k] === " " || line[k] === "\t" || line[k] === "\r" || line[k] === "\n")) k++;
    if (line[k] === ":") key = escaped ? (JSON.parse(line.slice(i, j + 1)) as string) : line.slice(i + 1, j);
    else onString(i, j + 1, key);
    i = j;
  }
}

function decode(line: string, start: number, end: number): string {
  const raw = line.slice(start + 1, end - 1);
  return raw.includes("\\") ? (JSON.parse(line.slice(start, end)) as string) : raw;
}

function isJsonLine(line: string): boolean {
  const t = line.trimStart();
  const c = t[0];
  if (c !== "{" && c !== "[" && c !== '"') return false;
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

/** Stage one over one JSON line: only string values change. */
function redactJsonLine(line: string, c: CompiledOptions, lineNo: number, findings: Finding[]): string {
  const parts: string[] = [];
  let pos = 0;
  eachStringValue(line, (start, end, key) => {
    const value = decode(line, start, end);
    const r = redactValueString(value, c, key);
    if (r.text === value) return;
    for (const kind of r.kinds) findings.push({ kind, line: lineNo });
    parts.push(line.slice(pos, start), JSON.stringify(r.text));
    pos = end;
  });
  if (pos === 0) return line;
  parts.push(line.slice(pos));
  return parts.join("");
}

/** Stage one over JSONL text (lines that are not JSON are redacted as text). */
export function redactJsonlWith(text: string, c: CompiledOptions): { text: string; findings: Finding[] } {
  const lines = text.split("\n");
  const out: string[] = [];
  const findings: Finding[] = [];
  let blockStart = -1;
  const flush = (end: number) => {
    if (blockStart === -1) return;
    const r = redactTextWith(lines.slice(blockStart, end).join("\n"), c, blockStart + 1);
    out.push(r.text);
    findings.push(...r.findings);
    blockStart = -1;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (isJsonLine(line)) {
      flush(i);
      out.push(redactJsonLine(line, c, i + 1, findings));
    } else if (blockStart === -1) {
      blockStart = i;
    }
  }
  flush(lines.length);
  return { text: out.join("\n"), findings };
}

/** Every decoded string value of the JSON lines of `text` that holds an escape, with its line (for stage two). */
export function escapedStrings(text: string): { value: string; line: number }[] {
  const found: { value: string; line: number }[] = [];
  if (!text.includes("\\")) return found;
  text.split("\n").forEach((line, i) => {
    if (!line.includes("\\") || !isJsonLine(line)) return;
    eachStringValue(line, (start, end) => {
      if (line.slice(start, end).includes("\\")) found.push({ value: decode(line, start, end), line: i + 1 });
    });
  });
  return found;
}
