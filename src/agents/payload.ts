/**
 * A minimal shape check for hook payloads. Hooks run on every prompt, so their parsing stays on plain
 * JavaScript: no schema library is loaded before the payload has been appended.
 */

/** What a declared payload field may hold; "?" marks a field that may be absent. */
export type FieldKind = "string" | "string?" | "nullable-string?" | "boolean?" | "nullable-boolean?" | "unknown?";

/** A short printable string from a payload (a model name), or undefined for anything else. */
export function shortName(x: unknown): string | undefined {
  if (typeof x !== "string" || x.length === 0 || x.length > 200) return undefined;
  // no control character (Unicode's Cc: U+0000–U+001F, U+007F–U+009F), looked for in a loop: the hooks use no
  // regular expression, whose first use costs a hook more than the check
  for (let i = 0; i < x.length; i++) {
    const c = x.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return undefined;
  }
  return x;
}

/** A payload field of the wrong type, or a payload that is not an object. */
export class PayloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PayloadError";
  }
}

function fits(kind: FieldKind, value: unknown): boolean {
  if (value === undefined) return kind !== "string";
  switch (kind) {
    case "string":
    case "string?":
      return typeof value === "string";
    case "nullable-string?":
      return value === null || typeof value === "string";
    case "boolean?":
      return typeof value === "boolean";
    case "nullable-boolean?":
      return value === null || typeof value === "boolean";
    case "unknown?":
      return true;
  }
}

/**
 * Returns the declared fields of `raw` after checking their types; undeclared fields are ignored.
 * Throws a PayloadError naming the first field that does not fit.
 */
export function checkPayload<K extends string>(raw: unknown, fields: Record<K, FieldKind>): Record<K, unknown> {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new PayloadError("payload is not an object");
  const obj = raw as Record<string, unknown>;
  const out = {} as Record<K, unknown>;
  for (const key of Object.keys(fields) as K[]) {
    const value = obj[key];
    if (!fits(fields[key], value)) throw new PayloadError(`field ${key} is not of type ${fields[key]}`);
    out[key] = value;
  }
  return out;
}
