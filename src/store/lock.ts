import { closeSync, mkdirSync, openSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { AiflareError } from "../errors.ts";
import { readRef } from "./refs.ts";

/*
 * Ref updates with git's own lock protocol, so parallel aiflare processes and real git commands
 * (`git update-ref`, `git pack-refs`, `git gc`) never lose an update: create `<ref>.lock` exclusively,
 * re-read the ref under the lock, write the new value into the lock file, rename it over the ref.
 */

/** A lock older than this is treated as left behind by a killed process. Holders keep it for milliseconds. */
export const STALE_LOCK_MS = 5_000;
/** How long a writer waits for a busy lock before giving up. */
export const LOCK_TIMEOUT_MS = 20_000;

export interface LockOptions {
  staleMs?: number;
  timeoutMs?: number;
}

function ageMs(path: string): number | null {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

function tryUnlink(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/**
 * Removes a stale lock. Stealing is serialised through a second lock file so two waiters can never both
 * decide the same lock is stale and one of them delete the fresh lock the other has just created.
 */
function stealStaleLock(lockPath: string, staleMs: number): void {
  // ends in ".lock", so git never reads it as a ref
  const stealPath = `${lockPath.slice(0, -".lock".length)}.aiflare-steal.lock`;
  let fd: number;
  try {
    fd = openSync(stealPath, "wx", 0o644);
  } catch {
    const age = ageMs(stealPath);
    if (age !== null && age > staleMs * 2) tryUnlink(stealPath);
    return;
  }
  try {
    const age = ageMs(lockPath);
    if (age !== null && age > staleMs) tryUnlink(lockPath);
  } finally {
    closeSync(fd);
    tryUnlink(stealPath);
  }
}

/**
 * Takes `<ref>.lock`, waiting with jittered exponential backoff and recovering stale locks.
 * Returns the open descriptor of the lock file.
 */
async function acquire(lockPath: string, opts: Required<LockOptions>): Promise<number> {
  const started = Date.now();
  let delay = 1;
  for (;;) {
    try {
      return openSync(lockPath, "wx", 0o644);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") {
        mkdirSync(dirname(lockPath), { recursive: true });
        continue;
      }
      if (code !== "EEXIST") {
        throw new AiflareError("GIT", `cannot create ${lockPath}: ${(err as Error).message}`, { cause: err });
      }
    }
    const age = ageMs(lockPath);
    if (age !== null && age > opts.staleMs) {
      stealStaleLock(lockPath, opts.staleMs);
      continue;
    }
    if (Date.now() - started > opts.timeoutMs) {
      throw new AiflareError(
        "LOCKED",
        `${lockPath} is held by another process; if no git or aiflare process is running, delete that file and retry`,
      );
    }
    await Bun.sleep(delay + Math.random() * delay);
    delay = Math.min(delay * 2, 50);
  }
}

/**
 * Updates `ref` in `commonDir` under its lock. `compute` receives the ref's value read under the lock and
 * returns the new value, or null to leave the ref unchanged. Returns what was written (or null).
 */
export async function updateRefLocked(
  commonDir: string,
  ref: string,
  compute: (current: string | null) => string | null | Promise<string | null>,
  options: LockOptions = {},
): Promise<string | null> {
  const opts = { staleMs: options.staleMs ?? STALE_LOCK_MS, timeoutMs: options.timeoutMs ?? LOCK_TIMEOUT_MS };
  const refPath = join(commonDir, ref);
  const lockPath = `${refPath}.lock`;
  const fd = await acquire(lockPath, opts);
  let renamed = false;
  try {
    const current = readRef(commonDir, ref);
    const next = await compute(current);
    if (next === null || next === current) return null;
    const buf = Buffer.from(`${next}\n`, "latin1");
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    closeSync(fd);
    renameSync(lockPath, refPath);
    renamed = true;
    return next;
  } finally {
    if (!renamed) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
      tryUnlink(lockPath);
    }
  }
}
