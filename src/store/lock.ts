import { renameSync, writeSync } from "node:fs";
import { join } from "node:path";
import { AiflareError } from "../errors.ts";
import { lockFile, type HeldLock } from "../util/lockfile.ts";
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

/** Takes `<ref>.lock` (util/lockfile.ts), waiting and taking over a lock older than `staleMs`; left open to be written. */
async function acquireRefLock(lockPath: string, opts: Required<LockOptions>): Promise<HeldLock> {
  try {
    return await lockFile(lockPath, {
      staleMs: opts.staleMs,
      waitMs: opts.timeoutMs,
      maxPollMs: 50,
      mode: 0o644,
      createDir: true,
      busy: () =>
        new AiflareError("LOCKED", `${lockPath} is held by another process; if no git or aiflare process is running, delete that file and retry`),
    });
  } catch (err) {
    if (err instanceof AiflareError) throw err;
    throw new AiflareError("GIT", `cannot create ${lockPath}: ${(err as Error).message}`, { cause: err });
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
  const lock = await acquireRefLock(lockPath, opts);
  let renamed = false;
  try {
    const current = readRef(commonDir, ref);
    const next = await compute(current);
    if (next === null || next === current) return null;
    const buf = Buffer.from(`${next}\n`, "latin1");
    let off = 0;
    while (off < buf.length) off += writeSync(lock.fd, buf, off, buf.length - off);
    // held past staleMs (a slow compute), it may have been taken over: renaming would put another's lock on the ref
    if (!lock.stillHeld()) {
      throw new AiflareError("LOCKED", `${lockPath} was taken over while this update was under way (over ${opts.staleMs} ms); retry`);
    }
    lock.close();
    renameSync(lockPath, refPath);
    renamed = true;
    return next;
  } finally {
    if (!renamed) lock.release();
  }
}
