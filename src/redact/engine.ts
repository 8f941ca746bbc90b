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
  /** 3-gram (7 bits per lowercase ASCII char) -> keyword ids starting with it */
  buckets: Map<number, number[]>;
  /** 1 where a bucket exists: a cheap test before the map lookup */
  bitmap: Uint8Array;
}

const lower = (c: number) => (c >= 65 && c <= 90 ? c | 32 : c);

/** Builds the keyword index of a rule set. Keywords must be lowercase ASCII-leading and ≥ 3 characters. */
export function buildRuleSet(rules: readonly Rule[]): RuleSet {
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
  const buckets = new Map<number, number[]>();
  const bitmap = new Uint8Array(1 << 21);
  keywords.forEach((kw, id) => {
    const a = kw.charCodeAt(0);
    const b = kw.charCodeAt(1);
    const c = kw.charCodeAt(2);
    if (kw.length < 3 || a > 127 || b > 127 || c > 127) throw new Error(`keyword ${kw}: needs 3 leading ASCII characters`);
    const key = (a << 14) | (b << 7) | c;
    bitmap[key] = 1;
    const list = buckets.get(key);
    if (list) list.push(id);
    else buckets.set(key, [id]);
  });
  return { rules, always, keywords, keywordRules, buckets, bitmap };
}

/** Which rules have at least one keyword in `text` (ASCII case-insensitive), in one pass over the text. */
export function activeRules(text: string, set: RuleSet): number[] {
  const found = new Uint8Array(set.keywords.length);
  const active = new Uint8Array(set.rules.length);
  for (const i of set.always) active[i] = 1;
  const n = text.length;
  const { bitmap, buckets, keywords } = set;
  let remaining = keywords.length;
  if (n >= 3 && remaining > 0) {
    let c0 = lower(text.charCodeAt(0));
    let c1 = lower(text.charCodeAt(1));
    for (let i = 0; i + 2 < n; i++) {
      const c2 = lower(text.charCodeAt(i + 2));
      if ((c0 | c1 | c2) < 128 && bitmap[(c0 << 14) | (c1 << 7) | c2] === 1) {
        for (const id of buckets.get((c0 << 14) | (c1 << 7) | c2)!) {
          if (found[id] === 1) continue;
          const kw = keywords[id]!;
          let k = 3;
          while (k < kw.length && i + k < n && lower(text.charCodeAt(i + k)) === kw.charCodeAt(k)) k++;
          if (k === kw.length) {
            found[id] = 1;
            remaining--;
            for (const r of set.keywordRules[id]!) active[r] = 1;
          }
        }
        if (remaining === 0) break;
      }
      c0 = c1;
      c1 = c2;
    }
  }
  const out: number[] = [];
  for (let i = 0; i < active.length; i++) if (active[i] === 1) out.push(i);
  return out;
}

interface Candidate extends Span {
  priority: number;
}

/** Finds the secrets in `text`: non-overlapping spans, in order. */
export function findSpans(text: string, set: RuleSet, allow?: AllowFn): Span[] {
  const candidates: Candidate[] = [];
  for (const ri of activeRules(text, set)) {
    const rule = set.rules[ri]!;
    const re = rule.re;
    re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(text)) !== null) {
      if (m[0].length === 0) {
        re.lastIndex++;
        continue;
      }
      let start = m.index;
      let end = start + m[0].length;
      if (m.length > 1 && m.indices) {
        // the first group that took part in the match is the secret
        for (let g = 1; g < m.length; g++) {
          const idx = m.indices[g];
          if (idx) {
            [start, end] = idx;
            break;
          }
        }
      }
      if (end <= start) continue;
      const secret = text.slice(start, end);
      if (rule.check && !rule.check(secret)) {
        // let a shorter match starting inside this one be found (e.g. a token after a rejected prefix)
        re.lastIndex = m.index + 1;
        continue;
      }
      if (allow?.(secret, start, end, text)) continue;
      candidates.push({ start, end, kind: rule.kind, hard: rule.hard, priority: ri });
    }
  }
  if (candidates.length === 0) return [];
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
