/** API keys and sign-in tokens: random, stored only as a hash. */
import { createHash, randomBytes } from "node:crypto";

/** Every key starts with this, so a leaked one is recognisable. */
export const KEY_PREFIX = "afk_";
/** How many characters of a key a list shows. */
const SHOWN = KEY_PREFIX.length + 8;

/** A new key (256 random bits) with its id, its hash and the prefix lists show. */
export function newKey(): { key: string; id: string; hash: string; prefix: string } {
  const key = `${KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
  return { key, id: randomId("key"), hash: hashKey(key), prefix: key.slice(0, SHOWN) };
}

/** A short random id such as `prj_3f9a1c0b7d2e`. */
export function randomId(kind: string): string {
  return `${kind}_${randomBytes(6).toString("hex")}`;
}

/** True when `text` has the form of a key: a request with anything else is refused without a database lookup. */
export function isKeyShaped(text: string): boolean {
  return /^afk_[A-Za-z0-9_-]{43}$/.test(text);
}

/** The stored form of a key or a sign-in token: SHA-256, hex. A lookup by hash leaks nothing about the key through timing. */
export function hashKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** The prefix of every sign-in session: it makes a session a redaction rule wherever it is pasted (SPEC §9). */
export const SESSION_PREFIX = "afs_";

/** A fresh sign-in session: the prefix and 256 random bits, base64url; the value of the cookie or bearer header. */
export function newToken(): string {
  return `${SESSION_PREFIX}${randomBytes(32).toString("base64url")}`;
}

/** True when `text` has the form of a session: anything else is refused without a database lookup. */
export function isTokenShaped(text: string): boolean {
  return /^afs_[A-Za-z0-9_-]{43}$/.test(text);
}

/** How long a sign-in lasts. */
export const SESSION_MAX_AGE_S = 30 * 24 * 3600;
