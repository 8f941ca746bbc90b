/**
 * Many strings checked at once: which of them stage one provably leaves as they are. The strings are joined by NUL
 * and the joined text goes once through the keyword scan and once through the hidden-text scan, instead of each
 * string through both (most of what the server redacts again is long, clean text in many short strings).
 *
 * Why joining changes nothing: NUL is in no keyword, is neither a token nor a base64 character, starts no hidden
 * run and stops every one (see hidden.ts), so each scan finds in the joined text exactly what it finds in each
 * string, at the string's offset. A string with no keyword, no hidden span and no home directory has no span, and
 * stage one returns it as it is.
 */
import { keywordHits, type RuleSet, type Span } from "./engine.ts";
import { hiddenSpans } from "./hidden.ts";

const SEP = "\0";

/** What the two scans found in one string: the keyword hits (as `keywordHits` gives them) and the hidden spans. */
export interface Scan {
  hits: ReadonlyMap<number, number[]>;
  hidden: Span[];
}

/**
 * For each string, 1 in `quiet` when the rules of `set` (no allowlist) find nothing in it and no home directory is
 * in it; for each other string, what the scans found in it, which spares scanning it again (`findAllSpans`).
 */
export function scanStrings(strings: readonly string[], set: RuleSet): { quiet: Uint8Array; scans: Map<string, Scan> } {
  const quiet = new Uint8Array(strings.length);
  const scans = new Map<string, Scan>();
  // a rule without keywords searches the whole text, and a string holding NUL would shift the regions: no shortcut
  if (set.always.length > 0) return { quiet, scans };
  const starts = new Array<number>(strings.length);
  let at = 0;
  for (let i = 0; i < strings.length; i++) {
    starts[i] = at;
    at += strings[i]!.length + 1;
  }
  const text = strings.join(SEP);
  let seps = 0;
  for (let p = text.indexOf(SEP); p !== -1; p = text.indexOf(SEP, p + 1)) seps++;
  if (seps !== strings.length - 1) return { quiet, scans };
  quiet.fill(1);
  // redactHome's own test: a string holding neither is left as it is
  for (const home of ["/home/", "Users"]) {
    for (let p = text.indexOf(home); p !== -1; p = text.indexOf(home, p + 1)) quiet[regionOf(starts, p)] = 0;
  }
  const found = new Map<number, Scan>();
  const scanOf = (r: number) => {
    quiet[r] = 0;
    let scan = found.get(r);
    if (!scan) found.set(r, (scan = { hits: new Map(), hidden: [] }));
    return scan;
  };
  for (const [rule, positions] of keywordHits(text, set)) {
    for (const p of positions) {
      const r = regionOf(starts, p);
      const hits = scanOf(r).hits as Map<number, number[]>;
      const list = hits.get(rule);
      if (list) list.push(p - starts[r]!);
      else hits.set(rule, [p - starts[r]!]);
    }
  }
  for (const s of hiddenSpans(text, set, undefined)) {
    const r = regionOf(starts, s.start);
    scanOf(r).hidden.push({ ...s, start: s.start - starts[r]!, end: s.end - starts[r]! });
  }
  for (let i = 0; i < strings.length; i++) if (quiet[i] === 0) scans.set(strings[i]!, found.get(i) ?? { hits: new Map(), hidden: [] });
  return { quiet, scans };
}

/** The index of the string that position `pos` of the joined text lies in. */
function regionOf(starts: readonly number[], pos: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
