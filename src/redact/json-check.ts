/**
 * Whether a line is one valid JSON text, checked without building it: `JSON.parse` of every transcript line
 * would allocate a copy of the whole transcript as objects, only to be thrown away.
 */

const enum C {
  Tab = 9,
  Lf = 10,
  Cr = 13,
  Space = 32,
  Quote = 34,
  Plus = 43,
  Comma = 44,
  Minus = 45,
  Dot = 46,
  Zero = 48,
  Nine = 57,
  Colon = 58,
  LBracket = 91,
  Backslash = 92,
  RBracket = 93,
  LBrace = 123,
  RBrace = 125,
}

/** Whether the four characters at `at` are hex digits. */
function isHex4(s: string, at: number): boolean {
  for (let k = at; k < at + 4; k++) {
    const c = s.charCodeAt(k);
    if (!((c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/**
 * A recursive-descent validator over one string; each method returns the position after what it read, or -1.
 * With `strings`, it records every string literal it reads as three numbers: start (the opening quote), end
 * (after the closing quote), and 1 for an object key or 0 for a value.
 */
class Checker {
  /** the next backslash at or after the last string's start (-1: none left), found once per stretch */
  private backslash = -2;
  /** the same for the next quote */
  private quote = -2;

  constructor(
    private readonly s: string,
    private readonly strings?: number[],
  ) {}

  private ws(i: number): number {
    const s = this.s;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c !== C.Space && c !== C.Tab && c !== C.Lf && c !== C.Cr) return i;
      i++;
    }
  }

  /** Reads a string literal; the line holds no control characters (checked once by the caller). */
  string(i: number, key: number): number {
    const s = this.s;
    const start = i;
    i++;
    // the next quote and backslash are looked for again only once passed: a long string with many escapes
    // (a file's content, `\n` on every line) costs one scan, not one per escape
    let b = this.backslash;
    let q = this.quote;
    for (;;) {
      if (q < i) {
        q = s.indexOf('"', i);
        if (q === -1) return -1;
      }
      if (b !== -1 && b < i) b = s.indexOf("\\", i);
      if (b === -1 || q < b) {
        this.backslash = b;
        this.quote = q;
        this.strings?.push(start, q + 1, key);
        return q + 1;
      }
      const e = s.charCodeAt(b + 1);
      if (e === 117) {
        if (!isHex4(s, b + 2)) return -1;
        i = b + 6;
      } else if (e === C.Quote || e === C.Backslash || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116) {
        i = b + 2;
      } else return -1;
    }
  }

  private number(i: number): number {
    const s = this.s;
    const start = i;
    if (s.charCodeAt(i) === C.Minus) i++;
    const digits = () => {
      const from = i;
      while (s.charCodeAt(i) >= C.Zero && s.charCodeAt(i) <= C.Nine) i++;
      return i > from;
    };
    if (s.charCodeAt(i) === C.Zero) i++;
    else if (!digits()) return -1;
    if (s.charCodeAt(i) === C.Dot) {
      i++;
      if (!digits()) return -1;
    }
    if ((s.charCodeAt(i) | 32) === 101) {
      i++;
      if (s.charCodeAt(i) === C.Plus || s.charCodeAt(i) === C.Minus) i++;
      if (!digits()) return -1;
    }
    return i > start ? i : -1;
  }

  /**
   * The position after the JSON value at `i` (white space first), or -1. Iterative, with the open containers on a
   * stack (at most 512 deep), so the validator is one small loop rather than a recursion to compile.
   */
  value(i: number): number {
    const s = this.s;
    const open: number[] = [];
    for (;;) {
      if (open.length > 512) return -1;
      i = this.ws(i);
      const c = s.charCodeAt(i);
      if (c === C.LBrace || c === C.LBracket) {
        i = this.ws(i + 1);
        if (s.charCodeAt(i) === (c === C.LBrace ? C.RBrace : C.RBracket)) i++;
        else {
          open.push(c);
          if (c === C.LBrace && (i = this.key(i)) < 0) return -1;
          continue;
        }
      } else if (c === C.Quote) i = this.string(i, 0);
      else i = this.scalar(i);
      if (i < 0) return -1;
      // after a value: a comma and the next value, or the ends of the containers it completes
      for (;;) {
        if (open.length === 0) return i;
        i = this.ws(i);
        const object = open[open.length - 1] === C.LBrace;
        const d = s.charCodeAt(i);
        if (d === C.Comma) {
          i = this.ws(i + 1);
          if (object && (i = this.key(i)) < 0) return -1;
          break;
        }
        if (d !== (object ? C.RBrace : C.RBracket)) return -1;
        open.pop();
        i++;
      }
    }
  }

  /** An object key at `i` and its colon: the position after the colon, or -1. */
  private key(i: number): number {
    const s = this.s;
    if (s.charCodeAt(i) !== C.Quote) return -1;
    i = this.string(i, 1);
    if (i < 0) return -1;
    i = this.ws(i);
    return s.charCodeAt(i) === C.Colon ? i + 1 : -1;
  }

  /** `true`, `false`, `null` or a number at `i`: the position after it, or -1. */
  private scalar(i: number): number {
    for (const lit of ["true", "false", "null"]) if (this.s.startsWith(lit, i)) return i + lit.length;
    return this.number(i);
  }

  whole(): boolean {
    const end = this.value(0);
    return end >= 0 && this.ws(end) === this.s.length;
  }
}

/** Any control character at all (rare in a JSON line: one check, then the exact one). */
const ANY_CONTROL = /[\x00-\x1f]/;
/** Control characters other than the whitespace JSON allows between tokens. */
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f]/;

/** True when `line` is exactly one JSON value (surrounding whitespace allowed). */
export function isJsonText(line: string): boolean {
  return jsonStrings(line, false) !== null;
}

const NONE: number[] = [];

/**
 * When `line` is exactly one JSON value (surrounding whitespace allowed): where its string literals are, as
 * `[start, end, isKey]` triples in order (see Checker), or an empty list when `collect` is false. Otherwise null.
 */
export function jsonStrings(line: string, collect = true): number[] | null {
  if (ANY_CONTROL.test(line)) {
    if (CONTROL.test(line)) return null;
    // a tab or line break is whitespace between tokens but not allowed inside a string: rare, so let the parser say
    try {
      JSON.parse(line);
    } catch {
      return null;
    }
  }
  const strings = collect ? [] : undefined;
  return new Checker(line, strings).whole() ? (strings ?? NONE) : null;
}
