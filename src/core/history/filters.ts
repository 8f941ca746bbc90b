/** Turns the user's filter flags into a validated `HistoryFilter`. */
import { isAbsolute, relative, resolve, sep } from "node:path";
import { usageError } from "../../errors.ts";
import { TAGS, type Tag } from "../../store/entry.ts";

export interface HistoryFilter {
  /** session id or a prefix of it */
  session?: string;
  tags?: Tag[];
  /** repository-relative path of a file or directory ("" = the whole repository) */
  file?: string;
  /** the branch the entries were committed on (exact name) */
  branch?: string;
  /** part of the person's name or email (any case) */
  author?: string;
  /** FTS5 query built from the user's words */
  match?: string;
  sinceMs?: number;
  untilMs?: number;
  /** 0 = no limit */
  limit: number;
  /** the user gave --limit (else the view applies its default) */
  limitGiven?: boolean;
}

export interface FilterInput {
  session?: string;
  author?: string;
  tag?: string;
  file?: string;
  grep?: string;
  since?: string;
  until?: string;
  limit?: string | number;
}

const UNIT_MS: Record<string, number> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
  mo: 30 * 86_400_000,
  y: 365 * 86_400_000,
};

const UNIT_ALIASES: [RegExp, string][] = [
  [/^(s|secs?|seconds?)$/, "s"],
  [/^(m|mins?|minutes?)$/, "m"],
  [/^(h|hrs?|hours?)$/, "h"],
  [/^(d|days?)$/, "d"],
  [/^(w|weeks?)$/, "w"],
  [/^(mo|months?)$/, "mo"],
  [/^(y|years?)$/, "y"],
];

/**
 * Reads a point in time: an age (`7d`, `12h`, `2 weeks ago`), `today`, `yesterday`, a local date
 * (`2026-11-29`) or a date and time (`2026-11-29 10:00`, ISO-8601 with or without zone). A bare date used
 * as an upper bound means the end of that day.
 */
export function parseTimeSpec(text: string, now: Date, bound: "since" | "until"): number | null {
  const s = text.trim().toLowerCase();
  const age = /^(\d+)\s*([a-z]+)(?:\s+ago)?$/.exec(s);
  if (age) {
    const unit = UNIT_ALIASES.find(([re]) => re.test(age[2]!))?.[1];
    if (unit) return now.getTime() - Number(age[1]) * UNIT_MS[unit]!;
  }
  const startOfDay = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const dayBound = (start: number) => (bound === "until" ? start + UNIT_MS.d! : start);
  if (s === "today") return dayBound(startOfDay(now));
  if (s === "yesterday") return dayBound(startOfDay(new Date(now.getTime() - UNIT_MS.d!)));
  if (s === "now") return now.getTime();
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (date) {
    const d = new Date(Number(date[1]), Number(date[2]) - 1, Number(date[3]));
    if (d.getMonth() !== Number(date[2]) - 1) return null;
    return dayBound(d.getTime());
  }
  const dt = /^(\d{4})-(\d{2})-(\d{2})[t ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(z|[+-]\d{2}:?\d{2})?$/.exec(s);
  if (dt) {
    if (dt[7]) {
      const ms = Date.parse(s.replace(" ", "t").toUpperCase());
      return Number.isFinite(ms) ? ms : null;
    }
    const [, y, mo, d, h, mi, sec] = dt.map(Number) as number[];
    return new Date(y!, mo! - 1, d!, h!, mi!, Number.isFinite(sec) ? sec! : 0).getTime();
  }
  return null;
}

/** Builds an FTS5 query that finds entries containing every word (as a word prefix). */
export function ftsQuery(words: string): string | undefined {
  // The index keeps no positions, so each token is its own prefix term (all of them must match); splitting
  // on what the unicode61 tokenizer treats as separators makes `foo-bar` or `src/app.ts` search their parts.
  const tokens = words.split(/[^\p{L}\p{N}\p{Co}]+/u).filter((t) => t !== "");
  if (tokens.length === 0) return undefined;
  return [...new Set(tokens)].map((t) => `"${t}"*`).join(" ");
}

/**
 * Validates and normalises the filter flags. `cwd` and `root` resolve `--file` the way git resolves a
 * pathspec: relative to where the user is.
 */
export function buildFilter(input: FilterInput, ctx: { cwd: string; root: string; now: Date }): HistoryFilter {
  const filter: HistoryFilter = { limit: 0 };
  if (input.limit !== undefined && input.limit !== "") {
    const n = Number(input.limit);
    if (!Number.isInteger(n) || n < 0) {
      throw usageError(`--limit must be a whole number (0 for no limit), not "${input.limit}".`);
    }
    filter.limit = n;
    filter.limitGiven = true;
  }
  if (input.session) filter.session = input.session.trim();
  if (input.author !== undefined) {
    const author = input.author.trim();
    if (!author) throw usageError("--author needs part of a name or an email to look for.");
    filter.author = author;
  }
  if (input.tag) {
    const tags = input.tag.split(",").map((t) => t.trim().toUpperCase()).filter(Boolean);
    const bad = tags.filter((t) => !(TAGS as readonly string[]).includes(t));
    if (bad.length) {
      throw usageError(`Unknown tag "${bad.join(", ")}". Use one or more of: ${TAGS.join(", ")}.`);
    }
    filter.tags = tags as Tag[];
  }
  if (input.file !== undefined && input.file !== "") {
    const abs = isAbsolute(input.file) ? input.file : resolve(ctx.cwd, input.file);
    const rel = relative(ctx.root, abs);
    if (rel.startsWith("..") || isAbsolute(rel)) {
      throw usageError(`--file "${input.file}" is outside the repository at ${ctx.root}.`);
    }
    filter.file = rel.split(sep).join("/").replace(/\/+$/, "");
  }
  if (input.grep !== undefined) {
    const match = ftsQuery(input.grep);
    if (!match) throw usageError("--grep needs at least one word to search for.");
    filter.match = match;
  }
  for (const bound of ["since", "until"] as const) {
    const text = input[bound];
    if (text === undefined || text === "") continue;
    const ms = parseTimeSpec(text, ctx.now, bound);
    if (ms === null) {
      throw usageError(`Cannot read --${bound} "${text}". Use a date (2026-11-29, "2026-11-29 10:00") or an age (7d, 12h, 2w).`);
    }
    if (bound === "since") filter.sinceMs = ms;
    else filter.untilMs = ms;
  }
  if (filter.sinceMs !== undefined && filter.untilMs !== undefined && filter.sinceMs >= filter.untilMs) {
    throw usageError(`--since "${input.since}" is not before --until "${input.until}": nothing can match. Swap them?`);
  }
  return filter;
}
