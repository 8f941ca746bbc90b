/** The identifiers aiflare takes from outside: commit hashes, agent session ids, and the pids lock files name. */

/** A full SHA-1 commit hash, lower case. */
export const FULL_HASH_RE = /^[0-9a-f]{40}$/;

// The checks below are loops over character codes rather than FULL_HASH_RE and a session id pattern: every hook
// runs them, and a regular expression's first use costs a hook more than the check itself.

/** True when `s` is a full 40-hex commit hash (what FULL_HASH_RE matches). */
export function isFullHash(s: string): boolean {
  if (typeof s !== "string" || s.length !== 40) return false;
  for (let i = 0; i < 40; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/** True when `id` is a session id that may be used in a path or a shell line: 1 to 128 of [A-Za-z0-9._-], not . or .. */
export function isValidSessionId(id: unknown): boolean {
  if (typeof id !== "string" || id.length === 0 || id.length > 128 || id === "." || id === "..") return false;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 46 || c === 95 || c === 45)) return false;
  }
  return true;
}

/**
 * Whether a process with this pid is running: signal 0 checks without signalling. One of another user counts as
 * running (signalling it is refused, not missing); any other failure means there is none.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
