/**
 * Secret values found once, redacted wherever they occur again: a password found in `DB_PASSWORD=…` is also
 * replaced in the agent's reply that repeats it, where no rule would see it. The caller keeps one memory per agent
 * session and passes it with the options; every redaction adds what it finds and replaces what is known.
 */
import type { Span } from "./engine.ts";

/** Shorter values are not remembered: ordinary words and numbers would be redacted everywhere (a password needs 6). */
const MIN_KNOWN = 6;
/** Longer values (a whole private key) are remembered too, up to this size. */
const MAX_KNOWN = 16_384;
/** A session remembers at most this many values: they make one search, run over every text redacted. */
const MAX_VALUES = 500;

/** The text a value is in a JSON string literal, when escaping changes it (`"`, `\`, line breaks, `/`). */
function jsonEscaped(value: string): string | undefined {
  const e = JSON.stringify(value).slice(1, -1);
  return e === value ? undefined : e;
}

/** The secret values of one session, each with the kind it was first found as. */
export class SecretMemory {
  readonly #kinds = new Map<string, string>();
  /** what the text may hold: each value, and its JSON-escaped form where that differs, with its kind */
  #needles = new Map<string, string>();
  /** all needles as one search, longest first (built when first needed after a change) */
  #search: RegExp | undefined;
  /** values remembered since `takeAdded` was last called, for the caller to keep */
  #added: { value: string; kind: string }[] = [];

  constructor(known: Iterable<{ value: string; kind: string }> = []) {
    for (const k of known) this.#add(k.value, k.kind);
    this.#added = [];
  }

  get size(): number {
    return this.#kinds.size;
  }

  /** Remembers a secret value found as `kind`; false when it was known already or is not kept (too short, too long, full). */
  remember(value: string, kind: string): boolean {
    if (value.length < MIN_KNOWN || value.length > MAX_KNOWN || value.startsWith("<REDACTED:") || this.#kinds.has(value)) return false;
    if (this.#kinds.size >= MAX_VALUES) return false;
    this.#add(value, kind);
    return true;
  }

  #add(value: string, kind: string): void {
    if (this.#kinds.has(value)) return;
    this.#kinds.set(value, kind);
    this.#needles.set(value, kind);
    const escaped = jsonEscaped(value);
    if (escaped) this.#needles.set(escaped, kind);
    this.#search = undefined;
    this.#added.push({ value, kind });
  }

  /** The values remembered after the first `count`, in the order they were found. */
  valuesAfter(count: number): string[] {
    const out: string[] = [];
    let i = 0;
    for (const v of this.#kinds.keys()) if (i++ >= count) out.push(v);
    return out;
  }

  /** The values remembered since the last call (and forgets that they were new). */
  takeAdded(): { value: string; kind: string }[] {
    const added = this.#added;
    this.#added = [];
    return added;
  }

  /** Whether `text` still holds one of `values` as it is or JSON-escaped (once or twice). */
  static holdsAny(text: string, values: readonly string[]): boolean {
    for (const v of values) {
      if (text.includes(v)) return true;
      const once = jsonEscaped(v);
      if (once && (text.includes(once) || text.includes(jsonEscaped(once)!))) return true;
    }
    return false;
  }

  /**
   * Remembers the secrets of `spans` (found in `text` by the rules), then adds a span for every occurrence of a
   * known value; spans that overlap are joined. Returns `spans` itself when nothing is added.
   */
  apply(text: string, spans: readonly Span[]): readonly Span[] {
    for (const s of spans) this.remember(text.slice(s.start, s.end), s.kind);
    if (this.#needles.size === 0) return spans;
    // one pass over the text for all of them: a search per value would cost a session with many of them dearly
    const search = (this.#search ??= new RegExp(
      [...this.#needles.keys()].sort((a, b) => b.length - a.length).map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"),
      "g",
    ));
    let extra: Span[] | undefined;
    search.lastIndex = 0;
    for (let m = search.exec(text); m !== null; m = search.exec(text)) {
      (extra ??= []).push({ start: m.index, end: m.index + m[0].length, kind: this.#needles.get(m[0])!, hard: false });
      // another value may start inside this one and run past it
      search.lastIndex = m.index + 1;
    }
    return extra ? joinSpans(spans, extra) : spans;
  }
}

/** Spans of both lists in order, overlapping ones joined (named by the first of them). */
function joinSpans(a: readonly Span[], b: readonly Span[]): Span[] {
  const all = [...a, ...b].sort((x, y) => x.start - y.start || y.end - x.end);
  const out: Span[] = [];
  for (const s of all) {
    const last = out[out.length - 1];
    if (last && s.start < last.end) {
      if (s.end > last.end) out[out.length - 1] = { ...last, end: s.end, hard: last.hard || s.hard };
      continue;
    }
    out.push(s);
  }
  return out;
}
