/**
 * The scanning engine: one pass over the text finds which rule keywords occur, then only the rules whose
 * keywords were seen run their regex. Matches are resolved to non-overlapping spans and replaced.
 */
import type { Rule } from "./rules.ts";

/** A span of the text to replace, and the kind of secret it holds. */
export interface Span {
  start: number;
  end: number;
  kind: string;
  hard: boolean;
}

/** Decides whether a found secret is allowlisted (`text` is the whole input, for literals spanning more). */
export type AllowFn = (secret: string, start: number, end: number, text: string) => boolean;

/** A rule set with its keyword index, built once and reused for every call. */
export interface RuleSet {
  rules: readonly Rule[];
  /** rules without keywords (user patterns): always run */
  always: readonly number[];
  keywords: readonly string[];
  /** for each keyword, the rules it enables */
  keywordRules: readonly (readonly number[])[];
  /**
   * Hash of a keyword's first four characters (see `gramHash`; its first three for a keyword that short) -> 1 +
   * index into `buckets`, 0 when no keyword starts so. Four characters pass far fewer places in ordinary text on
   * to the check in full than three would (`ses…`, `tok…`, `age…`).
   */
  gram4: Uint16Array;
  gram3: Uint16Array;
  /**
   * 1 at the classes (`CLASS`, 5 bits each) of a keyword's first three characters: one look-up per character, with
   * no hash to compute, passes on only the few places where a keyword may start (a few in a hundred in prose and
   * code) to the two above.
   */
  starts: Uint8Array;
  /** keyword ids per hash (verified in full on a hit) */
  buckets: readonly (readonly number[])[];
}

/** Any UTF-16 code unit -> its lowercase ASCII code, or 0 for anything outside ASCII (never part of a keyword). */
const LOWER = new Uint8Array(65536);
for (let c = 1; c < 128; c++) LOWER[c] = c >= 65 && c <= 90 ? c | 32 : c;

/**
 * Any UTF-16 code unit -> its class for the keyword scan's first look: a letter (either case) 1–26, a digit 27,
 * `-` 28, `_` 29, `.` 30, any other printable ASCII character 31, anything else 0 (white space, control characters,
 * anything outside ASCII: never in a keyword's first three characters). Characters of a class look alike to that
 * first look only; a keyword is then checked character by character.
 */
const CLASS = new Uint8Array(65536);
for (let c = 33; c < 127; c++) CLASS[c] = 31;
for (let c = 48; c <= 57; c++) CLASS[c] = 27;
for (let c = 65; c <= 90; c++) CLASS[c] = CLASS[c | 32] = c - 64;
CLASS[45] = 28;
CLASS[95] = 29;
CLASS[46] = 30;

/** Bits of the hashes: 65,536 entries (128 KB) keep them sparse, so a hit is rarely a false one. */
const GRAM_BITS = 16;
/** The hash of 3 or 4 characters given as 7 bits each (lowercase ASCII). */
const gramHash = (key: number) => Math.imul(key, 0x9e3779b1) >>> (32 - GRAM_BITS);

/**
 * A rule set's keyword index as plain data: the built-in rules' is generated into rules-table.ts, so that a process
 * does not build it at start; `indexedRuleSet` lays it out in the tables the scan reads.
 */
export interface RuleIndex {
  always: readonly number[];
  keywords: readonly string[];
  keywordRules: readonly (readonly number[])[];
  /** hash, 1 + bucket, for each hash a keyword of four characters or more starts with */
  gram4: readonly number[];
  /** the same for keywords of three characters */
  gram3: readonly number[];
  /** the indices of `RuleSet.starts` that are 1 */
  starts: readonly number[];
  buckets: readonly (readonly number[])[];
}

/** The keyword index of `rules`. Keywords must be lowercase ASCII-leading and ≥ 3 characters. */
export function ruleIndex(rules: readonly Rule[]): RuleIndex {
  const ids = new Map<string, number>();
  const keywords: string[] = [];
  const keywordRules: number[][] = [];
  const always: number[] = [];
  rules.forEach((rule, i) => {
    if (rule.keywords.length === 0) always.push(i);
    for (const kw of rule.keywords) {
      let id = ids.get(kw);
      if (id === undefined) {
        id = keywords.length;
        ids.set(kw, id);
        keywords.push(kw);
        keywordRules.push([]);
      }
      keywordRules[id]!.push(i);
    }
  });
  const grams = { gram3: new Map<number, number>(), gram4: new Map<number, number>() };
  const buckets: number[][] = [];
  const starts = new Set<number>();
  keywords.forEach((kw, id) => {
    const a = kw.charCodeAt(0);
    const b = kw.charCodeAt(1);
    const c = kw.charCodeAt(2);
    if (kw.length < 3 || a > 127 || b > 127 || c > 127 || !CLASS[a] || !CLASS[b] || !CLASS[c]) {
      throw new Error(`keyword ${kw}: needs 3 leading printable ASCII characters`);
    }
    starts.add((CLASS[a]! << 10) | (CLASS[b]! << 5) | CLASS[c]!);
    const d = kw.length > 3 ? kw.charCodeAt(3) : 128;
    const [gram, h] = d < 128 ? [grams.gram4, gramHash((a << 21) | (b << 14) | (c << 7) | d)] : [grams.gram3, gramHash((a << 14) | (b << 7) | c)];
    let bucket = gram.get(h);
    if (bucket === undefined) {
      buckets.push([]);
      bucket = buckets.length;
      gram.set(h, bucket);
    }
    buckets[bucket - 1]!.push(id);
  });
  const pairs = (gram: Map<number, number>) => [...gram].flat();
  return { always, keywords, keywordRules, gram4: pairs(grams.gram4), gram3: pairs(grams.gram3), starts: [...starts], buckets };
}

/** The rule set of `rules` with their keyword index `index` (see `ruleIndex`). */
export function indexedRuleSet(rules: readonly Rule[], index: RuleIndex): RuleSet {
  const table = (pairs: readonly number[]) => {
    const gram = new Uint16Array(1 << GRAM_BITS);
    for (let i = 0; i < pairs.length; i += 2) gram[pairs[i]!] = pairs[i + 1]!;
    return gram;
  };
  const starts = new Uint8Array(1 << 15);
  for (const s of index.starts) starts[s] = 1;
  const { always, keywords, keywordRules, buckets } = index;
  return { rules, always, keywords, keywordRules, gram3: table(index.gram3), gram4: table(index.gram4), starts, buckets };
}

/** Builds the keyword index of a rule set. Keywords must be lowercase ASCII-leading and ≥ 3 characters. */
export function buildRuleSet(rules: readonly Rule[]): RuleSet {
  return indexedRuleSet(rules, ruleIndex(rules));
}

/** The rules a rule set drawn from another keeps, as plain data (see `subRuleSet`): indices into the other's. */
export interface SubIndex {
  rules: readonly number[];
  always: readonly number[];
  /** for each keyword of the other set, the kept rules it enables (indices into `rules`) */
  keywordRules: readonly (readonly number[])[];
}

/** Which rules of `set` `keep` accepts, in their order, and what each keyword enables among them. */
export function subIndex(set: RuleSet, keep: (rule: Rule) => boolean): SubIndex {
  const rules: number[] = [];
  const at = new Int32Array(set.rules.length).fill(-1);
  for (let i = 0; i < set.rules.length; i++) {
    if (!keep(set.rules[i]!)) continue;
    at[i] = rules.length;
    rules.push(i);
  }
  const kept = (list: readonly number[]) => {
    const out: number[] = [];
    for (const i of list) if (at[i]! >= 0) out.push(at[i]!);
    return out;
  };
  const keywordRules: number[][] = [];
  for (const list of set.keywordRules) keywordRules.push(kept(list));
  return { rules, always: kept(set.always), keywordRules };
}

/**
 * The rules of `set` that `sub` names, sharing its keyword index: no keyword table is built again. A keyword of
 * only rules left out is still looked for, and enables nothing.
 */
export function drawnRuleSet(set: RuleSet, sub: SubIndex): RuleSet {
  const rules = sub.rules.map((i) => set.rules[i]!);
  const { always, keywordRules } = sub;
  return { rules, always, keywords: set.keywords, keywordRules, gram3: set.gram3, gram4: set.gram4, starts: set.starts, buckets: set.buckets };
}

/** The rules of `set` that `keep` accepts, in their order, sharing its keyword index (see `drawnRuleSet`). */
export function subRuleSet(set: RuleSet, keep: (rule: Rule) => boolean): RuleSet {
  return drawnRuleSet(set, subIndex(set, keep));
}

/** How a redacted secret starts in the text (`replaceSpans`). */
const PLACEHOLDER = "<REDACTED:";

/** The answer when nothing is found (shared, never changed). */
export const NO_SPANS: readonly Span[] = Object.freeze([]);

/** The answer when no keyword occurs (shared, never changed). */
const NO_HITS: ReadonlyMap<number, number[]> = new Map();

/**
 * Where each rule may match: for every rule whose keyword occurs in `text` (ASCII case-insensitive), the
 * positions where the keyword starts, in order; rules in their order. Rules without keywords get an empty list
 * (they search the text). One pass over the text.
 */
export function keywordHits(text: string, set: RuleSet): ReadonlyMap<number, number[]> {
  const n = text.length;
  // each rule's list at the rule's index: a keyword enables up to a dozen rules, and a look-up here costs a
  // fraction of one in a Map
  let byRule: (number[] | undefined)[] | undefined;
  if (n >= 3 && set.keywords.length > 0) {
    const { gram3, gram4, starts, buckets } = set;
    // the classes of the last three characters
    let classes = (CLASS[text.charCodeAt(0)]! << 5) | CLASS[text.charCodeAt(1)]!;
    for (let i = 2; i < n; i++) {
      classes = ((classes << 5) | CLASS[text.charCodeAt(i)]!) & 0x7fff;
      if (starts[classes] === 0) continue;
      // the last three characters, 7 bits each; a keyword of four characters or more that starts at i - 2, then
      // one of three
      const key = (LOWER[text.charCodeAt(i - 2)]! << 14) | (LOWER[text.charCodeAt(i - 1)]! << 7) | LOWER[text.charCodeAt(i)]!;
      const b4 = i + 1 < n ? gram4[gramHash((key << 7) | LOWER[text.charCodeAt(i + 1)]!)]! : 0;
      if (b4 !== 0) byRule = keywordsAt(text, i - 2, set, buckets[b4 - 1]!, byRule);
      const b3 = gram3[gramHash(key)]!;
      if (b3 !== 0) byRule = keywordsAt(text, i - 2, set, buckets[b3 - 1]!, byRule);
    }
  }
  if (byRule === undefined && set.always.length === 0) return NO_HITS;
  byRule ??= new Array(set.rules.length);
  for (const r of set.always) byRule[r] = [];
  const hits = new Map<number, number[]>();
  for (let r = 0; r < byRule.length; r++) if (byRule[r] !== undefined) hits.set(r, byRule[r]!);
  return hits;
}

/** Adds to `byRule` (made when first needed) each keyword of `bucket` that starts at `at`. */
function keywordsAt(text: string, at: number, set: RuleSet, bucket: readonly number[], byRule: (number[] | undefined)[] | undefined) {
  const n = text.length;
  for (const id of bucket) {
    const kw = set.keywords[id]!;
    if (at + kw.length > n) continue;
    let k = 0;
    while (k < kw.length && LOWER[text.charCodeAt(at + k)] === kw.charCodeAt(k)) k++;
    if (k < kw.length) continue;
    // what an earlier pass redacted names no secret now (`<REDACTED:aws-access-key-id> …` then a token): a second
    // pass over stored text finds exactly what the first found. Looked at only here, where a keyword starts: a
    // search of the whole text for placeholders would cost more than the keyword scan's few look-arounds
    if (inPlaceholder(text, at)) continue;
    for (const r of set.keywordRules[id]!) {
      byRule ??= new Array(set.rules.length);
      const list = byRule[r];
      if (list === undefined) byRule[r] = [at];
      else if (list[list.length - 1] !== at) list.push(at);
    }
  }
  return byRule;
}

/** Whether position `at` lies in the kind name of a `<REDACTED:kind>` placeholder. */
function inPlaceholder(text: string, at: number): boolean {
  let i = at;
  for (const floor = Math.max(0, at - 64); i > floor; i--) {
    const c = text.charCodeAt(i - 1);
    if (c === 58) break; // ':'
    // a kind is lowercase letters, digits, '.', '_' and '-'
    if (!((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 46 || c === 95 || c === 45)) return false;
  }
  return i >= PLACEHOLDER.length && text.startsWith(PLACEHOLDER, i - PLACEHOLDER.length);
}

/** Which rules have at least one keyword in `text`. */
export function activeRules(text: string, set: RuleSet): number[] {
  return [...keywordHits(text, set).keys()].sort((a, b) => a - b);
}

interface Candidate extends Span {
  priority: number;
}

/** Turns a regex match into a candidate span (the first group that took part, else the whole match), or null. */
function candidate(m: RegExpExecArray, text: string, rule: Rule, ri: number, allow?: AllowFn): Candidate | null {
  let start = m.index;
  let end = start + m[0].length;
  if (m.length > 1 && m.indices) {
    for (let g = 1; g < m.length; g++) {
      const idx = m.indices[g];
      if (idx) {
        [start, end] = idx;
        break;
      }
    }
  }
  if (end <= start) return null;
  const secret = text.slice(start, end);
  if (rule.check && !rule.check(secret)) return null;
  if (allow?.(secret, start, end, text)) return null;
  return { start, end, kind: rule.kind, hard: rule.hard, priority: ri };
}

/**
 * Finds the secrets in `text`: non-overlapping spans, in order. A built-in rule is tried only where one of its
 * keywords starts (a sticky match there, or up to `back` characters before it); a user pattern searches the text.
 * `hits`: the keyword hits of `text`, when already known.
 */
export function findSpans(text: string, set: RuleSet, allow?: AllowFn, hits = keywordHits(text, set)): Span[] {
  const candidates: Candidate[] = [];
  for (const [ri, positions] of hits) {
    const rule = set.rules[ri]!;
    const re = rule.re;
    let m: RegExpExecArray | null;
    if (!re.sticky) {
      re.lastIndex = 0;
      while ((m = re.exec(text)) !== null) {
        if (m[0].length === 0) {
          re.lastIndex++;
          continue;
        }
        const c = candidate(m, text, rule, ri, allow);
        if (c) candidates.push(c);
        else re.lastIndex = m.index + 1; // a shorter match may start inside a rejected one
      }
      continue;
    }
    const back = rule.back ?? 0;
    let next = 0;
    for (const p of positions) {
      for (let at = Math.max(next, p - back); at <= p; at++) {
        re.lastIndex = at;
        m = re.exec(text);
        if (m === null || m[0].length === 0) continue;
        const c = candidate(m, text, rule, ri, allow);
        if (!c) continue;
        candidates.push(c);
        next = m.index + m[0].length;
        break;
      }
    }
  }
  if (candidates.length === 0) return NO_SPANS as Span[];
  candidates.sort((a, b) => a.start - b.start || b.end - b.start - (a.end - a.start) || a.priority - b.priority);
  const spans: Span[] = [];
  let lastEnd = -1;
  for (const c of candidates) {
    if (c.start < lastEnd) continue;
    spans.push({ start: c.start, end: c.end, kind: c.kind, hard: c.hard });
    lastEnd = c.end;
  }
  return spans;
}

/** Replaces each span with `<REDACTED:kind>`; `between` rewrites the text between spans (home directories). */
export function replaceSpans(text: string, spans: readonly Span[], between: (s: string) => string = (s) => s): string {
  if (spans.length === 0) return between(text);
  const parts: string[] = [];
  let pos = 0;
  for (const s of spans) {
    parts.push(between(text.slice(pos, s.start)), `<REDACTED:${s.kind}>`);
    pos = s.end;
  }
  parts.push(between(text.slice(pos)));
  return parts.join("");
}

/** 1-based line numbers of the spans' starts (spans in order). */
export function spanLines(text: string, spans: readonly Span[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let pos = 0;
  for (const s of spans) {
    for (;;) {
      const nl = text.indexOf("\n", pos);
      if (nl === -1 || nl >= s.start) break;
      line++;
      pos = nl + 1;
    }
    lines.push(line);
  }
  return lines;
}
