/** The identifiers aiflare takes from outside: commit hashes, agent session ids, and the pids lock files name. */

/** A full SHA-1 commit hash, lower case. */
export const FULL_HASH_RE = /^[0-9a-f]{40}$/;

/** True when `s` is a full 40-hex commit hash. */
export function isFullHash(s: string): boolean {
  return FULL_HASH_RE.test(s);
}

const SESSION_ID_RE = /^[A-Za-z0-9._-]{1,128}$/;

/** True when `id` is a session id that may be used in a path or a shell line. */
export function isValidSessionId(id: unknown): boolean {
  return typeof id === "string" && SESSION_ID_RE.test(id) && id !== "." && id !== "..";
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
