/**
 * Text from outside — prompts, replies, titles, file and branch names, a backend's answers — may hold terminal
 * control sequences that set the window title, clear the screen, write the clipboard (OSC 52) or fake output.
 * Everything aiflare prints for a person passes through `termSafe` first; `--json` output does not (JSON escapes
 * control characters itself).
 */

/* eslint-disable no-control-regex */
// OSC, DCS, SOS, PM and APC strings (7-bit and 8-bit introducers), up to their terminator (BEL or ST)
const STRING_SEQ = /(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)/g;
// CSI (7-bit and 8-bit) with its parameters
const CSI_SEQ = /(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?/g;
// any other escape: ESC, intermediates, one final byte
const ESC_SEQ = /\x1b[\x20-\x2f]*[\x30-\x7e]?/g;
// what is left of C0 (but tab and newline), DEL and C1
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
const ANY_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

/** `text` without terminal control sequences or control characters; newlines and tabs are kept. */
export function termSafe(text: string): string {
  if (!ANY_CONTROL.test(text)) return text;
  return text.replace(STRING_SEQ, "").replace(CSI_SEQ, "").replace(ESC_SEQ, "").replace(CONTROLS, "");
}

// where `termSafe` finds something in JSON text: C0 controls are escaped there (\b, \f, \r, \u00XX; tab and newline,
// which termSafe keeps, as \t and \n), DEL and C1 stay as they are
const JSON_CONTROL = /[\x7f-\x9f]|\\[bfr]|\\u00/;

/**
 * Whether `termSafe` would change some string in `data`, JSON data only (plain objects, arrays, strings, numbers; a
 * Map or a class instance is not looked into): one native pass over its JSON text, where a view of a hundred rows
 * that hold nothing to clean would otherwise copy each of them. A backslash the text itself holds (`\b`, `\u00e9`)
 * may answer true for nothing to clean, never false for something.
 */
export function holdsControls(data: unknown): boolean {
  const json = JSON.stringify(data);
  return json !== undefined && JSON_CONTROL.test(json);
}

/** `value` with `termSafe` applied to every string in it (arrays, plain objects and maps, copied). */
export function termSafeDeep<T>(value: T): T {
  // plain loops: a view calls this once on a hundred rows, mostly before the engine compiles anything, and Array's
  // map and Object.entries cost more there than the copying itself
  if (typeof value === "string") return termSafe(value) as T;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = termSafeDeep(value[i]);
    return out as T;
  }
  if (value instanceof Map) {
    const out = new Map();
    for (const [k, v] of value) out.set(termSafeDeep(k), termSafeDeep(v));
    return out as T;
  }
  if (value && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const k in value) if (Object.hasOwn(value, k)) out[k] = termSafeDeep((value as Record<string, unknown>)[k]);
    return out as T;
  }
  return value;
}
