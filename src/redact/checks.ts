/** Value checks shared by the rules: entropy, placeholders, things that are code rather than a secret. */

/** Shannon entropy in bits per character. */
export function entropy(s: string): number {
  if (s.length === 0) return 0;
  const counts = new Map<number, number>();
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** How many of lower case, upper case, digits and other characters occur. */
export function charClasses(s: string): number {
  let lower = 0;
  let upper = 0;
  let digit = 0;
  let other = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 97 && c <= 122) lower = 1;
    else if (c >= 65 && c <= 90) upper = 1;
    else if (c >= 48 && c <= 57) digit = 1;
    else other = 1;
  }
  return lower + upper + digit + other;
}

const PLACEHOLDER_RE =
  /^(?:(?:your|my|the|some|example|dummy|fake|test|sample)[_-]?)?(?:password|passwd|pass|pwd|secret|token|key|api[_-]?key|value|redacted)s?$|^(?:x+|\*+|\.+|-+|_+|#+|0+|null|nil|none|undefined|true|false|empty|changeme|string|number|boolean|bytes|str|int|any|object|required|optional)$|^<.*>$|^\$\{.*\}?$|^\$\(|^\$[A-Za-z_]\w*$|^\{\{.*\}\}$|^\{[\w.]+\}$|^%[\w(]|^\[[\w. -]*\]$|^:\w+$|REDACTED|^\.\.\.|\.\.\.$|^process\.env|^os\.environ|^env\(|^ENV\[|^getenv|^secrets\.|^vars\./i;

/** True for values that stand in for a secret rather than being one: `<password>`, `${TOKEN}`, `xxxx`… */
export function isPlaceholder(v: string): boolean {
  return PLACEHOLDER_RE.test(v);
}

/** An identifier as people write them: camelCase, PascalCase, snake_case, CONSTANT_CASE (not random case). */
const IDENT_RE = /^(?:[a-z_$][a-z0-9_$]*(?:[A-Z][a-z0-9_$]+)*[A-Z]?|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)*|[A-Z][A-Z0-9_]*)$/;

/** `req.body.password`, `os.environ.get`, `Config::KEY`: member access made of ordinary identifiers. */
function isMemberChain(v: string): boolean {
  const parts = v.split(/\?\.|\.|::|->/);
  return parts.length > 1 && parts.every((p) => IDENT_RE.test(p));
}

/** A file path or a URL, not a token. */
function isPathOrUrl(v: string): boolean {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) return true;
  if (!/^(?:\.{0,2}\/|~\/|[A-Za-z]:\\)/.test(v)) return false;
  return v.split(/[\/\\]/).every((seg) => /^[A-Za-z]?[a-z0-9._@%-]*$/.test(seg));
}

const CODE_RE =
  /^(?:this|self|req|request|config|options|opts|args|params|props|env|ctx|settings)\b|^[A-Z]+(?:_[A-Z0-9]+)+$|^[A-Z]+$|^[a-z]+(?:[A-Z][a-z]+)+$|^[a-z]+(?:_[a-z]+)+$|^[a-z]+(?:-[a-z]+)+$|^[a-z]+$|^[A-Z][a-z]+(?:[A-Z][a-z]+)*$/;

/** True for values that are code or a plain word (`req.body.password`, `DB_PASSWORD`, `getToken`). */
export function looksLikeCode(v: string): boolean {
  if (CODE_RE.test(v) || isMemberChain(v)) return true;
  // `!questionToken`, `*ptr`, `&ref`: an operator before a name
  const bare = v.replace(/^[!~&*]+/, "");
  return bare !== v && (CODE_RE.test(bare) || isMemberChain(bare) || looksLikeIdentifier(bare));
}

const IDENT_CHARS_RE = /^[A-Za-z_$][\w$]*(?:(?:[.:-]|::|->)[A-Za-z_$][\w$]*)*$/;
const WORD_RE = /[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+|[A-Z]|\d+/g;

/**
 * An identifier as code names things (`contextToken2`, `The_0_operator_is_not_allowed`, `HTTPPasswordMgr`,
 * `Proxy-Authorization`): it splits into a few word-like parts. A random token splits into many short fragments
 * of mixed case and digits (`Zq8v3Lm2…`), or has long runs of capitals with no separator.
 */
export function looksLikeIdentifier(v: string): boolean {
  if (!IDENT_CHARS_RE.test(v)) return false;
  const words = v.match(WORD_RE) ?? [];
  let letters = 0;
  let short = 0;
  let digits = 0;
  for (const w of words) {
    const c = w.charCodeAt(0);
    if (c >= 48 && c <= 57) {
      // names carry a counter or a year, not a long number
      if (w.length > 4) return false;
      digits++;
      continue;
    }
    letters++;
    if (w.length <= 2) short++;
    // a long all-capital run is a base32 token, not a constant (constants separate words with `_`)
    else if (w.length > 10 && w === w.toUpperCase()) return false;
  }
  return short <= Math.max(1, letters >> 2) && digits <= 2 && words.length * 3.5 <= v.length + 3.5;
}

/** A value worth redacting after a password-like keyword: not a placeholder, code or a plain word, some mix of characters. */
export function passwordLike(v: string): boolean {
  if (v.length < 6 || isPlaceholder(v) || looksLikeCode(v) || isPathOrUrl(v)) return false;
  const classes = charClasses(v);
  // `geheim$parole` is a word pair, `Winter2024!x` or `S3cr3tPassw0rd` a password
  if (classes < 3 && !(classes === 2 && /\d/.test(v) && /[A-Za-z]/.test(v))) return false;
  if (looksLikeIdentifier(v)) return false;
  return entropy(v) >= 2.2;
}

/** A random-looking token: long enough, mixed characters, high entropy, not an identifier. */
export function tokenLike(v: string, minEntropy = 3.0, minLength = 12): boolean {
  if (v.length < minLength || isPlaceholder(v) || looksLikeCode(v) || looksLikeIdentifier(v)) return false;
  if (/^\d+$/.test(v) || /^(.)\1+$/.test(v)) return false;
  if (isPathOrUrl(v)) return false;
  return charClasses(v) >= 2 && entropy(v) >= minEntropy;
}

/** A random-looking token with upper case, lower case and digits (for keyword-adjacent tokens with no `=`). */
export function strongTokenLike(v: string): boolean {
  return /[a-z]/.test(v) && /[A-Z]/.test(v) && /\d/.test(v) && tokenLike(v, 3.5, 20);
}

/** True when the value holds both letters and digits. */
export function alnumMix(v: string): boolean {
  return /[A-Za-z]/.test(v) && /\d/.test(v);
}

/** `Basic` credentials: base64 of `user:password`. */
export function basicAuthLike(v: string): boolean {
  try {
    const decoded = Buffer.from(v, "base64").toString("utf8");
    return /^[\x20-\x7e]+:[\x20-\x7e]+$/.test(decoded) && !isPlaceholder(decoded.slice(decoded.indexOf(":") + 1));
  } catch {
    return false;
  }
}

/** A password inside a URL (`scheme://user:PASSWORD@host`). */
export function urlPasswordLike(v: string): boolean {
  return v.length >= 1 && !isPlaceholder(v);
}
