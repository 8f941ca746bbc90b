/**
 * The Markdown subset the page shows (headings, paragraphs, lists, code blocks, inline code, bold, italic, links),
 * parsed into plain data without the DOM. Inline spans are found in one left-to-right pass: each delimiter looks up
 * its closer through a finder that remembers the last answer, so every character is read a bounded number of times
 * and any input (runs of `[`, `*`, backticks…) is parsed in linear time.
 */

/** An inline span; a link keeps its source, shown as text when its address is not one the page may open. */
export type Span =
  | { kind: "text" | "code" | "strong" | "em"; text: string }
  | { kind: "link"; text: string; href: string; source: string };

export type Block =
  | { kind: "p" | "h"; spans: Span[] }
  | { kind: "pre"; text: string }
  | { kind: "list"; ordered: boolean; items: Span[][] };

/** What Next looks for to find whitespace (`\s`). */
const SPACE = -1;

/**
 * Where the next `code` (or, for SPACE, the next whitespace) is at or after a position: `s.length` when none. It
 * remembers its last answer, so while the positions asked for grow, each character is read once.
 */
class Next {
  private from = Number.POSITIVE_INFINITY;
  private at = -1;
  constructor(
    private readonly s: string,
    private readonly code: number,
  ) {}

  after(i: number): number {
    if (i >= this.from && i <= this.at) return this.at;
    const { s, code } = this;
    let k = Math.min(i, s.length);
    if (code === SPACE) while (k < s.length && !isSpace(s.charCodeAt(k))) k++;
    else while (k < s.length && s.charCodeAt(k) !== code) k++;
    this.from = i;
    this.at = k;
    return k;
  }
}

/** `\s` of a regular expression, for one UTF-16 code (-1, outside the text: false). */
function isSpace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 160) return false;
  return c === 160 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** `\w` of a regular expression, for one UTF-16 code (-1, outside the text: false). */
function isWord(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

/** Inline spans of one line or paragraph. */
export function parseInline(s: string): Span[] {
  const n = s.length;
  const [tick, star, under, close, paren, nl, space] = [96, 42, 95, 93, 41, 10, SPACE].map((c) => new Next(s, c)) as [Next, Next, Next, Next, Next, Next, Next];
  const out: Span[] = [];
  let last = 0;
  const emit = (start: number, end: number, span: Span) => {
    if (start > last) out.push({ kind: "text", text: s.slice(last, start) });
    out.push(span);
    last = end;
  };
  // the code at k, -1 outside the text: every code compared is an integer, never charCodeAt's NaN
  const at = (k: number) => (k >= 0 && k < n ? s.charCodeAt(k) : -1);
  for (let i = 0; i < n; ) {
    const c = s.charCodeAt(i);
    // every closer below is searched from i + 1 or i + 2 and must come before the line's end (nl)
    if (c === 96 /* ` */) {
      const j = tick.after(i + 1);
      if (j > i + 1 && j < nl.after(i + 1)) {
        emit(i, j + 1, { kind: "code", text: s.slice(i + 1, j) });
        i = j + 1;
        continue;
      }
    } else if (c === 42 /* * */) {
      const d = at(i + 1);
      if (d === 42) {
        const j = star.after(i + 2);
        if (j > i + 2 && j < nl.after(i + 1) && at(j + 1) === 42) {
          emit(i, j + 2, { kind: "strong", text: s.slice(i + 2, j) });
          i = j + 2;
          continue;
        }
      } else if (d >= 0 && !isSpace(d)) {
        const j = star.after(i + 2);
        if (j < nl.after(i + 1)) {
          emit(i, j + 1, { kind: "em", text: s.slice(i + 1, j) });
          i = j + 1;
          continue;
        }
      }
    } else if (c === 95 /* _ */ && !isWord(at(i - 1))) {
      const j = under.after(i + 1);
      if (j > i + 1 && j < nl.after(i + 1) && !isWord(at(j + 1))) {
        emit(i, j + 1, { kind: "em", text: s.slice(i + 1, j) });
        i = j + 1;
        continue;
      }
    } else if (c === 91 /* [ */) {
      const j = close.after(i + 1);
      if (j > i + 1 && j < nl.after(i + 1) && at(j + 1) === 40 /* ( */) {
        const k = paren.after(j + 2);
        if (k > j + 2 && k < n && k <= space.after(j + 2)) {
          emit(i, k + 1, { kind: "link", text: s.slice(i + 1, j), href: s.slice(j + 2, k), source: s.slice(i, k + 1) });
          i = k + 1;
          continue;
        }
      }
    }
    i++;
  }
  if (last < n) out.push({ kind: "text", text: s.slice(last) });
  return out;
}

/** Block structure of `source`. */
export function parseMarkdown(source: string): Block[] {
  const blocks: Block[] = [];
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  let para: string[] = [];
  let list: Extract<Block, { kind: "list" }> | null = null;
  const flushPara = () => {
    if (para.length) blocks.push({ kind: "p", spans: parseInline(para.join(" ")) });
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = /^\s*(```|~~~)/.exec(line);
    if (fence) {
      flushPara();
      list = null;
      const code: string[] = [];
      for (i++; i < lines.length && !lines[i]!.trim().startsWith(fence[1]!); i++) code.push(lines[i]!);
      blocks.push({ kind: "pre", text: code.join("\n") });
      continue;
    }
    if (!line.trim()) {
      flushPara();
      list = null;
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      flushPara();
      list = null;
      blocks.push({ kind: "h", spans: parseInline(heading[2]!) });
      continue;
    }
    const item = /^\s*(?:([-*+])|(\d+)[.)])\s+(.*)$/.exec(line);
    if (item) {
      flushPara();
      const ordered = item[2] !== undefined;
      if (!list || list.ordered !== ordered) {
        list = { kind: "list", ordered, items: [] };
        blocks.push(list);
      }
      list.items.push(parseInline(item[3]!));
      continue;
    }
    if (list && /^\s{2,}\S/.test(line)) {
      // appended one by one: a long line's spans are too many to spread into one call
      const spans = list.items[list.items.length - 1]!;
      spans.push({ kind: "text", text: " " });
      for (const span of parseInline(line.trim())) spans.push(span);
      continue;
    }
    list = null;
    para.push(line.trim());
  }
  flushPara();
  return blocks;
}
