/**
 * Secrets written so that the rules cannot see them as they stand: split by a line break or a shell
 * `\`-newline, broken up by zero-width characters, spelled with `\u00XX`, `\xXX` or `%XX` escapes, or
 * base64-encoded (a Kubernetes Secret, a base64 `.env`). Each such run of text is turned into what it stands for
 * (joined, decoded) and scanned with the same rules; a secret found there redacts the run it came from.
 *
 * Native searches find the places worth a look (see `hiddenSpans`), so ordinary text costs little more than them.
 */
import { findSpans, subRuleSet, type AllowFn, type RuleSet, type Span } from "./engine.ts";
import type { Scan } from "./quiet.ts";

/** How deep decoded text is decoded again (base64 inside an escaped string inside base64). */
const MAX_DEPTH = 2;
/** Shortest joined or decoded run worth scanning (the shortest token rules need more). */
const MIN_RUN = 8;
/** Longest token looked for from a joined line's start. */
const WINDOW = 400;
/** Shortest base64 run worth decoding: 15 bytes. */
const MIN_BASE64 = 20;

/** Characters of a token: letters, digits and `_-+/=.` */
const TOKEN = new Uint8Array(128);
/** Characters of base64 (standard and URL-safe alphabets, without padding). */
const BASE64 = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  const alnum = /[A-Za-z0-9]/.test(ch);
  TOKEN[c] = alnum || "_-+/=.".includes(ch) ? 1 : 0;
  BASE64[c] = alnum || "+/_-".includes(ch) ? 1 : 0;
}

/** Characters that render as nothing: zero-width space/joiners, word joiner, invisible operators, BOM, soft hyphen. */
function isInvisible(c: number): boolean {
  return c === 0xad || c === 0x180e || (c >= 0x200b && c <= 0x200d) || (c >= 0x2060 && c <= 0x2064) || c === 0xfeff;
}

const isToken = (c: number) => c < 128 && TOKEN[c] === 1;
const isAlnum = (c: number) => (c >= 48 && c <= 57) || ((c | 32) >= 97 && (c | 32) <= 122);

function hexValue(text: string, at: number, digits: number): number {
  if (at + digits > text.length) return -1;
  let v = 0;
  for (let k = 0; k < digits; k++) {
    const c = text.charCodeAt(at + k);
    const d = c >= 48 && c <= 57 ? c - 48 : (c | 32) >= 97 && (c | 32) <= 102 ? (c | 32) - 87 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/** A printable ASCII character other than space, as a `\uXXXX`/`\xXX`/`%XX` escape may spell it. */
const printable = (v: number) => v > 0x20 && v < 0x7f;

/** A run of token text as written (`start`..`end`) and what it stands for (`text`), with each character's origin. */
interface Run {
  start: number;
  end: number;
  text: string;
  /** for each character of `text`, where it starts and ends in the original */
  from: number[];
  to: number[];
  /** something was joined, dropped or decoded */
  changed: boolean;
  /** positions in `text` where a joined line starts */
  lineStarts: number[];
}

/**
 * The element at `i` that belongs to a token run: its decoded character ("" for a dropped one) and its length in
 * the original, or null when the run ends here. `inRun` says whether the run already holds a character.
 */
function element(text: string, i: number, inRun: boolean): [string, number] | null {
  const c = text.charCodeAt(i);
  if (isToken(c)) return [text[i]!, 1];
  if (isInvisible(c)) return ["", 1];
  const next = text.charCodeAt(i + 1);
  if (c === 92) {
    // \u0067, \x67
    if (next === 117) {
      const v = hexValue(text, i + 2, 4);
      if (printable(v)) return [String.fromCharCode(v), 6];
      if (v >= 0 && isInvisible(v)) return ["", 6];
      return null;
    }
    if (next === 120) {
      const v = hexValue(text, i + 2, 2);
      return printable(v) ? [String.fromCharCode(v), 4] : null;
    }
    // a shell line continuation, then the indentation of the next line
    if (inRun && (next === 10 || (next === 13 && text.charCodeAt(i + 2) === 10))) {
      let j = i + (next === 13 ? 3 : 2);
      while (text.charCodeAt(j) === 32 || text.charCodeAt(j) === 9) j++;
      return isToken(text.charCodeAt(j)) ? ["", j - i] : null;
    }
    // an escaped line break inside a quoted string (`"ghp_abc\ndef"` pasted as text)
    if (inRun && next === 110 && isAlnum(text.charCodeAt(i + 2))) return ["", 2];
    return null;
  }
  if (c === 37) {
    const v = hexValue(text, i + 1, 2);
    return printable(v) ? [String.fromCharCode(v), 3] : null;
  }
  // a line break inside a token (terminal wrapping)
  if (inRun && c === 10 && isToken(next)) return ["", 1];
  if (inRun && c === 13 && next === 10 && isToken(text.charCodeAt(i + 2))) return ["", 2];
  return null;
}

/** The token run around position `at`, not starting before `floor`. */
function runAt(text: string, at: number, floor: number): Run {
  let start = at;
  while (start > floor) {
    const c = text.charCodeAt(start - 1);
    if (!isToken(c) && !isInvisible(c)) break;
    start--;
  }
  const chars: string[] = [];
  const from: number[] = [];
  const to: number[] = [];
  const lineStarts: number[] = [];
  let changed = false;
  let i = start;
  while (i < text.length) {
    const el = element(text, i, chars.length > 0);
    if (!el) break;
    const [ch, width] = el;
    if (ch.length === 0 || width !== 1) changed = true;
    const c = text.charCodeAt(i);
    if (ch.length === 0 && (c === 10 || c === 13 || (c === 92 && text.charCodeAt(i + 1) !== 117))) lineStarts.push(chars.length);
    if (ch.length > 0) {
      chars.push(ch);
      from.push(i);
      to.push(i + width);
    }
    i += width;
  }
  return { start, end: Math.max(i, at + 1), text: chars.join(""), from, to, changed, lineStarts };
}

/** Shortest pair of token pieces around a line break worth joining (the shortest split token rules find). */
const MIN_JOINED = 16;

/**
 * Whether the token pieces before `i` and from `j` on may be one token cut in two: long enough together, and with
 * letters and digits (a random token has both; words and names wrapped onto the next line mostly do not).
 */
function joinable(text: string, i: number, j: number): boolean {
  // most line breaks are followed by indentation or a blank line: nothing to join
  if (!isToken(text.charCodeAt(j))) return false;
  let k = 0;
  // bit 1: a digit, bit 2: a letter
  let seen = 0;
  for (let c = text.charCodeAt(i - 1); k < MIN_JOINED - 1 && i - k > 0 && isToken(c); c = text.charCodeAt(i - k - 1)) {
    seen |= c >= 48 && c <= 57 ? 1 : isAlnum(c) ? 2 : 0;
    k++;
  }
  if (k === 0) return false;
  let m = 0;
  for (let c = text.charCodeAt(j); k + m < MIN_JOINED * 2 && isToken(c); c = text.charCodeAt(j + m)) {
    seen |= c >= 48 && c <= 57 ? 1 : isAlnum(c) ? 2 : 0;
    m++;
  }
  return m > 0 && k + m >= MIN_JOINED && seen === 3;
}

/** Whether a run that the rules cannot read as written may start at `i` (holding `c`). */
export function isAnomaly(text: string, i: number, c: number): boolean {
  if (c === 92) {
    const next = text.charCodeAt(i + 1);
    if (next === 117 || next === 120) return true;
    if (next === 110) return joinable(text, i, i + 2);
    if (next === 10 || next === 13) return i > 0 && isToken(text.charCodeAt(i - 1));
    return false;
  }
  if (c === 37) return printable(hexValue(text, i + 1, 2));
  if (c === 10) return joinable(text, i, i + 1);
  if (c === 13) return text.charCodeAt(i + 1) === 10 && joinable(text, i, i + 2);
  return isInvisible(c);
}

/** Base64 decoded to text, or null when it does not decode to mostly printable text. */
function decodeBase64(b64: string): string | null {
  const bytes = Buffer.from(b64, "base64");
  if (bytes.length < 12) return null;
  let ascii = 0;
  for (let k = 0; k < bytes.length; k++) {
    const b = bytes[k]!;
    if ((b >= 0x20 && b < 0x7f) || b === 9 || b === 10 || b === 13) ascii++;
    else if (b < 0x80) return null;
  }
  return ascii >= bytes.length * 0.8 ? bytes.toString("utf8") : null;
}

/**
 * The offset (0–3) at which `run` decodes to ASCII text, or -1. Base64 of a printable ASCII byte starts with one
 * of `I`–`Z`, `a`–`f` (its top six bits are 8–31), so in text every fourth character is one of those: most runs
 * of letters and digits (identifiers, hashes, binary data) are rejected without decoding.
 */
function base64Offset(run: string, from = 0, to = run.length): number {
  if (to - from < 16) return -1;
  for (let off = 0; off < 4; off++) {
    let good = 0;
    let seen = 0;
    for (let k = from + off; k + 3 < to; k += 4) {
      const c = run.charCodeAt(k);
      seen++;
      if ((c >= 73 && c <= 90) || (c >= 97 && c <= 102)) good++;
      else if (seen - good > seen * 0.1 + 1) break;
    }
    if (seen >= 4 && good >= seen * 0.9) return off;
  }
  return -1;
}

/** The end of a base64 block that continues on the following lines (wrapped at 64 or 76 columns). */
function base64BlockEnd(text: string, end: number): number {
  for (;;) {
    let j = end;
    while (j < text.length && text.charCodeAt(j) === 61 && j - end < 2) j++;
    let k = j;
    if (text.charCodeAt(k) === 13) k++;
    if (text.charCodeAt(k) === 10) k++;
    else if (text.charCodeAt(k) === 92 && text.charCodeAt(k + 1) === 110) k += 2;
    else return j;
    let m = k;
    while (m < text.length && isBase64(text.charCodeAt(m))) m++;
    if (m - k < 4) return j;
    end = m;
  }
}

const tokenSets = new WeakMap<RuleSet, RuleSet>();

/**
 * The token-shaped rules of `set` (a provider prefix and a body, the whole match is the secret), for text joined
 * across line breaks. Rules that take a value after a name (`password = …`) would run on over the joined lines.
 */
function tokenRules(set: RuleSet): RuleSet {
  let t = tokenSets.get(set);
  if (!t) {
    t = subRuleSet(set, (r) => r.keywords.length > 0 && !(r.groups ?? r.re.hasIndices));
    tokenSets.set(set, t);
    // joined text is scanned with the token rules, and text joined inside it again with the same ones
    tokenSets.set(t, t);
  }
  return t;
}

/** Scans decoded or joined text; `map` turns its spans into spans of the original. */
function scanInner(inner: string, set: RuleSet, allow: AllowFn | undefined, depth: number, map: (s: Span) => Span | null, out: Span[]): void {
  for (const s of findAllSpans(inner, set, allow, depth + 1)) {
    const m = map(s);
    if (m) out.push(m);
  }
}

const isBase64 = (c: number) => c < 128 && BASE64[c] === 1;

/**
 * The whole runs of base64 characters at least `MIN_BASE64` long, as start and end pairs in order. Such a run
 * covers one of every `MIN_BASE64` positions, so only those are looked at, and the run around one that holds a
 * base64 character measured: words of prose cost their own length once, not at every character of theirs.
 */
export function base64Runs(text: string): number[] {
  const runs: number[] = [];
  const n = text.length;
  for (let p = MIN_BASE64 - 1; p < n; p += MIN_BASE64) {
    if (!isBase64(text.charCodeAt(p))) continue;
    let start = p;
    while (start > 0 && isBase64(text.charCodeAt(start - 1))) start--;
    let end = p + 1;
    while (end < n && isBase64(text.charCodeAt(end))) end++;
    if (end - start >= MIN_BASE64) runs.push(start, end);
    // the next run starts after this one's end, and covers one of every MIN_BASE64 positions from there
    p = end;
  }
  return runs;
}

/**
 * Characters an anomaly may start with (`isAnomaly`): escapes, line breaks, and the invisible ones. Each is
 * searched for with `indexOf` (native, many times faster than a loop over the characters), and most text holds
 * none of them but line breaks.
 */
const ANOMALY_CHARS = ["\\", "%", "\r", "\u00ad", "\u180e", "\u200b", "\u200c", "\u200d", "\u2060", "\u2061", "\u2062", "\u2063", "\u2064", "\ufeff"];

/**
 * The positions, in order, of the characters where an anomaly may start: those of `ANOMALY_CHARS`, and the line
 * breaks between two token characters (a break anywhere else joins nothing: see `joinable`).
 */
export function anomalyPlaces(text: string): Int32Array | number[] {
  const places: number[] = [];
  for (let p = text.indexOf("\n"); p !== -1; p = text.indexOf("\n", p + 1)) {
    if (p > 0 && isToken(text.charCodeAt(p - 1)) && isToken(text.charCodeAt(p + 1))) places.push(p);
  }
  const lines = places.length;
  for (const ch of ANOMALY_CHARS) for (let p = text.indexOf(ch); p !== -1; p = text.indexOf(ch, p + 1)) places.push(p);
  // line breaks alone are in order already
  return places.length === lines ? places : Int32Array.from(places).sort();
}

/**
 * Secrets the rules find only once the text is joined or decoded, as spans of the original text. Where to look
 * (`base64Runs`, `anomalyPlaces`) is kept apart from what is found there (`base64Run`, `anomalyRun`); the places
 * are visited in the order of the text.
 */
export function hiddenSpans(text: string, set: RuleSet, allow: AllowFn | undefined, depth = 0): Span[] {
  const out: Span[] = [];
  if (depth > MAX_DEPTH) return out;
  const runs = base64Runs(text);
  const places = anomalyPlaces(text);
  let covered = 0;
  let b64Covered = 0;
  for (let r = 0, a = 0; r < runs.length || a < places.length; ) {
    if (a === places.length || (r < runs.length && runs[r]! < places[a]!)) {
      const start = runs[r]!;
      if (start >= b64Covered) b64Covered = base64Run(text, start, runs[r + 1]!, set, allow, depth, out);
      r += 2;
    } else {
      const at = places[a++]!;
      if (at >= covered && isAnomaly(text, at, text.charCodeAt(at))) covered = anomalyRun(text, at, covered, set, allow, depth, out);
    }
  }
  return out;
}

/** A run of base64 characters from `start` to `i`: its block decoded and scanned when it is text; returns the block's end. */
function base64Run(text: string, start: number, i: number, set: RuleSet, allow: AllowFn | undefined, depth: number, out: Span[]): number {
  const end = base64BlockEnd(text, i);
  // the first line tells most runs apart from base64 of text before anything is copied
  if (base64Offset(text, start, i) < 0) return end;
  const run = text.slice(start, end).replace(/\\n|[\r\n=]/g, "");
  const off = base64Offset(run);
  const decoded = off < 0 ? null : decodeBase64(run.slice(off));
  if (decoded !== null) scanInner(decoded, set, allow, depth, (s) => ({ start, end, kind: s.kind, hard: s.hard }), out);
  return end;
}

/** The token run around an anomaly at `i`, joined or decoded and scanned; returns where the run ends. */
function anomalyRun(text: string, i: number, covered: number, set: RuleSet, allow: AllowFn | undefined, depth: number, out: Span[]): number {
  const run = runAt(text, i, covered);
  if (!run.changed || run.text.length < MIN_RUN) return run.end;
  // the whole run, and a window from each line that was joined to the one before (a token starts there
  // more often than it continues the line above: `$ echo $TOKEN` then the wrapped value)
  const joined = run.lineStarts.length > 0;
  const rules = joined ? tokenRules(set) : set;
  for (const at of [0, ...run.lineStarts]) {
    const inner = at === 0 ? run.text : run.text.slice(at, at + WINDOW);
    if (inner.length < MIN_RUN) continue;
    scanInner(inner, rules, allow, depth, (s) => {
      const start = run.from[at + s.start]!;
      const end = run.to[at + s.end - 1]!;
      // across a line break, a token ends where the text's token does (`ghp_…` then `NEXT_LINE=1` is not one token)
      if (joined && end < text.length && isToken(text.charCodeAt(end))) return null;
      return { start, end, kind: s.kind, hard: s.hard };
    }, out);
  }
  return run.end;
}

/** Whether `text` breaks the line at `at` and then holds only a short lowercase word up to `end`. */
function endsLineBeforeWord(text: string, at: number, end: number): boolean {
  const c = text.charCodeAt(at);
  const start = c === 13 && text.charCodeAt(at + 1) === 10 ? at + 2 : c === 10 ? at + 1 : -1;
  return start > 0 && /^[a-z]{1,6}$/.test(text.slice(start, end));
}

/**
 * Direct and hidden spans together: overlapping ones are joined (named by the direct one), so nothing of either is
 * left over. `scan`: what the two scans already found in `text` (see quiet.ts), not scanned again.
 */
export function findAllSpans(text: string, set: RuleSet, allow?: AllowFn, depth = 0, scan?: Scan): Span[] {
  const direct = findSpans(text, set, allow, scan?.hits);
  const found = scan ? scan.hidden : hiddenSpans(text, set, allow, depth);
  if (found.length === 0) return direct;
  // A token found whole at the end of a line, followed by a short lowercase word, is not the first half of a split
  // one: the joined match would take the next line's word with it (`key ghp_…` then `and more`). A longer or mixed
  // continuation is the rest of a wrapped token and stays covered.
  const hidden = found.filter(
    (h) => !direct.some((d) => d.start < h.end && h.start < d.end && h.end > d.end && endsLineBeforeWord(text, d.end, h.end)),
  );
  if (hidden.length === 0) return direct;
  const all = [...direct.map((s) => ({ ...s, direct: true })), ...hidden.map((s) => ({ ...s, direct: false }))];
  all.sort((a, b) => a.start - b.start || Number(b.direct) - Number(a.direct) || b.end - a.end);
  const out: (Span & { direct: boolean })[] = [];
  for (const s of all) {
    const last = out[out.length - 1];
    if (last && s.start < last.end) {
      const named = !last.direct && s.direct ? s : last;
      out[out.length - 1] = { ...named, start: last.start, end: Math.max(last.end, s.end), hard: last.hard || s.hard, direct: last.direct || s.direct };
      continue;
    }
    out.push(s);
  }
  return out.map(({ start, end, kind, hard }) => ({ start, end, kind, hard }));
}
