/** Pieces of the read API's answers that `aiflare ui` and `aiflare serve` shape the same way. */

/**
 * The group roots a timeline page refers to without holding them (they are on an older page, or outside the
 * filters): the answer carries them as `roots`, so a nested commit is never shown without its request.
 */
export function missingRoots(page: { commitHash: string; groupRootId: string | null }[]): string[] {
  const shown = new Set(page.map((e) => e.commitHash));
  const out = new Set<string>();
  for (const e of page) if (e.groupRootId && !shown.has(e.groupRootId)) out.add(e.groupRootId);
  return [...out];
}

/** The words of a search text (letters and digits), lower-cased, at most 16. */
export function searchWords(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)
    .filter(Boolean)
    .slice(0, 16);
}

/** A pattern that finds any of `words` where a word starts (search matches word prefixes), or null for none. */
export function wordsPattern(words: string[]): RegExp | null {
  if (words.length === 0) return null;
  const alternatives = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
  return new RegExp(`(?<![\\p{L}\\p{N}_])(?:${alternatives})[\\p{L}\\p{N}_]*`, "giu");
}

/** Where a search hit an entry: the field and the words around the first hit. */
export interface MatchContext {
  field: string;
  text: string;
}

const BEFORE = 60;
const AFTER = 120;

/**
 * The first of `fields` (in order) that holds one of `words`, cut to the words around the hit, whitespace folded.
 * Null when none does (the hit was in the title, which the list shows anyway, or in a form the search folds, such
 * as letters without their accents).
 */
export function matchContext(fields: [name: string, text: string][], words: string[]): MatchContext | null {
  const re = wordsPattern(words);
  if (!re) return null;
  for (const [field, text] of fields) {
    re.lastIndex = 0;
    const hit = re.exec(text);
    if (!hit) continue;
    let from = Math.max(0, hit.index - BEFORE);
    let to = Math.min(text.length, hit.index + hit[0].length + AFTER);
    // whole words at both ends
    if (from > 0) from = text.indexOf(" ", from) + 1 || hit.index;
    if (to < text.length) to = Math.max(text.lastIndexOf(" ", to), hit.index + hit[0].length);
    const cut = text.slice(Math.min(from, hit.index), to).replace(/\s+/g, " ").trim();
    return { field, text: `${from > 0 ? "…" : ""}${cut}${to < text.length ? "…" : ""}` };
  }
  return null;
}

/** An entry's searched texts in the order a hit is shown from: the summary's fields, then the conversation. */
export function searchFields(
  e: { intent: string; alternatives: string; diffSummary: string },
  conversation: { role: string; content: string }[],
): [string, string][] {
  const fields: [string, string][] = [
    ["intent", e.intent],
    ["alternatives", e.alternatives],
    ["diff summary", e.diffSummary],
  ];
  for (const l of conversation) fields.push([l.role === "user" ? "prompt" : "reply", l.content]);
  return fields;
}
