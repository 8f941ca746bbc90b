/** API keys (random, stored only as a hash) and the signed sign-in cookie, whose secret lives in the database. */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

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

/** The stored form of a key: SHA-256, hex. A lookup by hash leaks nothing about the key through timing. */
export function hashKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** Constant-time equality of two strings. */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A fresh secret for signing cookies. */
export function newSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** The sign-in session a cookie carries: the ids of the keys signed in with, and when it was issued. */
export interface CookieSession {
  keys: string[];
  issuedMs: number;
}

/** How long a sign-in lasts. */
export const SESSION_MAX_AGE_S = 30 * 24 * 3600;

/** `payload.signature`, both base64url. */
export function signSession(s: CookieSession, secret: string): string {
  const payload = Buffer.from(JSON.stringify({ k: s.keys, t: s.issuedMs })).toString("base64url");
  return `${payload}.${createHmac("sha256", secret).update(payload).digest("base64url")}`;
}

/** The session of a cookie value whose signature holds and which has not expired; else null. */
export function verifySession(value: string, secret: string, nowMs = Date.now()): CookieSession | null {
  const [payload, sig, extra] = value.split(".");
  if (!payload || !sig || extra !== undefined) return null;
  if (!sameText(sig, createHmac("sha256", secret).update(payload).digest("base64url"))) return null;
  try {
    const j = JSON.parse(Buffer.from(payload, "base64url").toString()) as { k?: unknown; t?: unknown };
    if (!Array.isArray(j.k) || !j.k.every((k) => typeof k === "string") || typeof j.t !== "number") return null;
    if (nowMs - j.t > SESSION_MAX_AGE_S * 1000) return null;
    return { keys: j.k as string[], issuedMs: j.t };
  } catch {
    return null;
  }
}
