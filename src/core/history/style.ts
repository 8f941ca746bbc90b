/** Terminal styling and layout helpers for history output. Colour only when asked. */
import { AGENT_DISPLAY_NAMES } from "../../util/agent-names.ts";
import { readlinkSync } from "node:fs";
import { UNTAGGED, type Tag } from "../../store/entry.ts";

export interface Style {
  color: boolean;
  /** terminal width in columns (a default when not a terminal) */
  width: number;
  /** wrap long text lines at word boundaries to `width` (on a terminal; piped output keeps its lines) */
  wrap?: boolean;
}

const CODES = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  magenta: [35, 39],
  cyan: [36, 39],
} as const;

export type Paint = keyof typeof CODES;

/** Wraps `text` in ANSI codes when colour is on. */
export function paint(style: Style, text: string, ...how: Paint[]): string {
  if (!style.color || !text) return text;
  let out = text;
  for (const h of how) out = `\x1b[${CODES[h][0]}m${out}\x1b[${CODES[h][1]}m`;
  return out;
}

const TAG_COLOR: Record<Tag, Paint> = {
  FEATURE: "green",
  BUGFIX: "red",
  REFACTORING: "blue",
  TEST: "magenta",
  DOCS: "cyan",
};

/** A tag in its colour, padded to `width` columns; an untagged entry (null) says so, dimmed. */
export function paintTag(style: Style, tag: string | null, width = 0): string {
  if (tag === null || tag === UNTAGGED) return paint(style, "untagged".padEnd(width), "dim");
  const padded = tag.padEnd(width);
  const color = TAG_COLOR[tag as Tag];
  return color ? paint(style, padded, color) : padded;
}

const AGENT_NAMES: Readonly<Record<string, string>> = { ...AGENT_DISPLAY_NAMES, OTHER: "other agent" };

/** The display name of an agent type (`CLAUDE_CODE` → Claude Code). */
export function agentName(agent: string): string {
  return AGENT_NAMES[agent] ?? agent;
}

/** Columns a string takes on a terminal (wide CJK and emoji count two). */
export function width(text: string): number {
  return PRINTABLE_ASCII.test(text) ? text.length : Bun.stringWidth(text);
}

/** Text made only of printable ASCII characters: one column each. */
export const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const NOT_PRINTABLE_ASCII = /[^\x20-\x7e]/;

/** Pads with spaces to `cols` display columns. */
export function padTo(text: string, cols: number): string {
  const w = width(text);
  return w >= cols ? text : text + " ".repeat(cols - w);
}

/** Cuts `text` to at most `cols` display columns, ending with `…` when cut. */
export function truncate(text: string, cols: number): string {
  // More than `cols` printable ASCII characters up front: cut without measuring the rest.
  const wide = text.search(NOT_PRINTABLE_ASCII);
  if (cols > 1 && (wide > cols || (wide === -1 && text.length > cols))) return `${text.slice(0, cols - 1)}…`;
  if (width(text) <= cols) return text;
  if (cols <= 1) return "…";
  if (wide === -1) return `${text.slice(0, cols - 1)}…`;
  let out = "";
  let w = 0;
  for (const ch of text) {
    const cw = width(ch);
    if (w + cw > cols - 1) break;
    out += ch;
    w += cw;
  }
  return `${out}…`;
}

/** One line of a multi-line text, whitespace collapsed. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * Breaks one line into lines of at most `cols` display columns at spaces (a word longer than that is cut), the
 * continuation lines starting with `hang` (e.g. the indentation of a list item). ANSI codes count as zero width.
 */
export function wrapLine(line: string, cols: number, hang = ""): string[] {
  const visible = (s: string) => width(s.replace(/\x1b\[[0-9;]*m/g, ""));
  if (cols <= 0 || visible(line) <= cols) return [line];
  const lead = /^\s*/.exec(line)?.[0] ?? "";
  const out: string[] = [];
  let current = lead;
  let prefix = lead;
  for (const word of line.slice(lead.length).split(/ +/)) {
    if (!word) continue;
    const sep = current.trim() ? " " : "";
    if (visible(current) + sep.length + visible(word) <= cols) {
      current += sep + word;
      continue;
    }
    if (current.trim()) out.push(current);
    prefix = out.length > 0 ? hang || lead : lead;
    let rest = word;
    // a word wider than a whole line (a URL, a path): cut it, nothing else can be done
    while (visible(prefix) + visible(rest) > cols && cols - visible(prefix) > 0) {
      const room = cols - visible(prefix);
      out.push(prefix + rest.slice(0, room));
      rest = rest.slice(room);
      prefix = hang || lead;
    }
    current = prefix + rest;
  }
  if (current.trim()) out.push(current);
  return out;
}

/** Indents every non-blank line of `text` by `prefix`, trailing whitespace dropped; wrapped to `cols` when given. */
export function indent(text: string, prefix: string, cols?: number): string {
  return text
    .replace(/\s+$/, "")
    .split("\n")
    .flatMap((l) => {
      if (!l.trim()) return [""];
      if (cols === undefined) return [prefix + l];
      // list items and indented lines continue under their text
      const hang = prefix + " ".repeat(/^(\s*([-*+]|\d+[.)])\s+|\s+)/.exec(l)?.[0].length ?? 0);
      return wrapLine(prefix + l, cols, hang);
    })
    .join("\n");
}

const pad2 = (n: number) => String(n).padStart(2, "0");

const UTC_ZONE = /^:?(?:(?:Etc\/)?(?:UTC|UCT|GMT|GMT[+-]?0|Universal|Zulu)|UTC0)$/i;
let utcZone: boolean | undefined;

/** True for a zone name (TZ value or path under zoneinfo/) that means UTC. */
export function isUtcZoneName(name: string): boolean {
  return name === "" || UTC_ZONE.test(name);
}

/**
 * True when local time is UTC (`TZ`, else `/etc/localtime`). The first local-time operation loads the
 * runtime's time-zone database, which costs more than the rest of `history list`; in UTC it is not needed.
 */
export function zoneIsUtc(env: Record<string, string | undefined> = process.env): boolean {
  if (utcZone !== undefined) return utcZone;
  const tz = env.TZ;
  if (tz !== undefined) return (utcZone = isUtcZoneName(tz));
  try {
    const target = readlinkSync("/etc/localtime");
    const at = target.indexOf("zoneinfo/");
    return (utcZone = at >= 0 && isUtcZoneName(target.slice(at + "zoneinfo/".length)));
  } catch (err) {
    // no /etc/localtime is UTC; a copied file (not a link) could be any zone
    return (utcZone = (err as NodeJS.ErrnoException).code === "ENOENT");
  }
}

/** Year, month (1-12), day, hours and minutes of `ms` in local time. */
function localParts(ms: number): [number, number, number, number, number] {
  const d = new Date(ms);
  return zoneIsUtc()
    ? [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes()]
    : [d.getFullYear(), d.getMonth() + 1, d.getDate(), d.getHours(), d.getMinutes()];
}

/** `YYYY-MM-DD` in local time. */
export function day(ms: number): string {
  const [y, mo, d] = localParts(ms);
  return `${y}-${pad2(mo)}-${pad2(d)}`;
}

/** `HH:MM` in local time. */
export function clock(ms: number): string {
  const [, , , h, mi] = localParts(ms);
  return `${pad2(h)}:${pad2(mi)}`;
}

/** `2026-11-29 10:02–10:41`, or with both dates when the range crosses midnight. */
export function timeRange(from: number, to: number): string {
  if (from === to) return `${day(from)} ${clock(from)}`;
  if (day(from) === day(to)) return `${day(from)} ${clock(from)}–${clock(to)}`;
  return `${day(from)} ${clock(from)} – ${day(to)} ${clock(to)}`;
}
