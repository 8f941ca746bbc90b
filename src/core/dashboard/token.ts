import { randomBytes } from "node:crypto";

/** The prefix of every `aiflare ui` token: it makes the token a redaction rule wherever it is pasted (SPEC §9). */
export const UI_TOKEN_PREFIX = "afu_";

/** A fresh per-run token for `aiflare ui`: the prefix and 192 random bits, base64url. */
export function newUiToken(): string {
  return `${UI_TOKEN_PREFIX}${randomBytes(24).toString("base64url")}`;
}
