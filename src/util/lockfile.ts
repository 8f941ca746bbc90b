import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { processAlive } from "./ids.ts";

/*
 * The one lock-file protocol of aiflare (the refs, the sync, the capture queue, a session's live files, the index's
 * build and repair): a lock is a file created exclusively (O_EXCL, never through a symlink). A lock left behind (its
 * holder killed) is taken over: by its age, or by the pid written in it naming no running process. Taking one over
 * is serialised through a second lock file (`<name>.aiflare-steal.lock`), under which the lock is judged again
 * before it is removed: many processes finding the same dead holder at once remove it once, and none of them
 * removes the fresh lock another has just made. A holder releases its lock only while it is still the file it
 * created. node:fs alone: the hooks take a session's lock on every call.
 */

/** A lock with a pid but none written yet, older than this, is debris of a crash between its creation and its write. */
const UNWRITTEN_STALE_MS = 1_000;
/** A steal lock is held for microseconds: one older than this was left by a process killed while holding it. */
const STEAL_STALE_MS = 10_000;

export interface LockFileOptions {
  /**
   * Writes this process's pid into the lock, and takes over a lock whose pid names no running process. Without it
   * the lock is left empty and open for the caller to write (a ref's new value) through {@link HeldLock.fd}.
   */
  pid?: boolean;
  /** A lock older than this is taken over whoever holds it (the holders keep it for much less). */
  staleMs?: number;
  /** How long to wait for a lock another process holds: 0 tries once. */
  waitMs: number;
  /** The longest pause between two tries while waiting; the pauses start at 1 ms and double, with jitter. */
  maxPollMs: number;
  /** The lock file's mode when created. */
  mode: number;
  /** When the lock's directory is missing: create it (else the ENOENT error is thrown to the caller). */
  createDir?: boolean;
  /** The error thrown when the wait is over, given the pid the lock names (null when none). */
  busy: (holder: number | null) => Error;
}

/** A lock this process holds. */
export interface HeldLock {
  /** The lock's descriptor for the caller to write without {@link LockFileOptions.pid}, else -1. */
  readonly fd: number;
  /** True while the file at the lock's path is the one this process created (not taken over); false once closed. */
  stillHeld(): boolean;
  /** Closes the lock's descriptor (before renaming the lock into place); idempotent. */
  close(): void;
  /**
   * Removes the lock, unless it is no longer the file this process created (checked while its descriptor is open),
   * and closes it; idempotent.
   */
  release(): void;
}

/** The pid written in the lock at `path`; null when none (absent, empty, being written, a symlink). */
function lockHolder(path: string): number | null {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    const pid = Number.parseInt(readFileSync(fd, "utf8"), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** True when the lock at `path` was left behind: older than `staleMs`, or (with a pid) its holder gone. */
function leftBehind(path: string, opts: Pick<LockFileOptions, "pid" | "staleMs">): boolean {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st) return false; // released meanwhile: the next try takes it
  const age = Date.now() - st.mtimeMs;
  if (opts.staleMs !== undefined && age > opts.staleMs) return true;
  if (!opts.pid) return false;
  const holder = lockHolder(path);
  return holder === null ? age > UNWRITTEN_STALE_MS : !processAlive(holder);
}

function tryUnlink(path: string): boolean {
  try {
    unlinkSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The file that serialises taking over `path` (it ends in ".lock": git never reads it as a ref). */
function stealPath(path: string): string {
  return `${path.endsWith(".lock") ? path.slice(0, -".lock".length) : path}.aiflare-steal.lock`;
}

const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Removes the lock at `path` if it is still left behind, judged again under the steal lock. True when it removed
 * it; false when another process is taking it over, or it is no longer left behind.
 */
function takeOver(path: string, opts: Pick<LockFileOptions, "pid" | "staleMs">): boolean {
  const steal = stealPath(path);
  let fd: number;
  try {
    fd = openSync(steal, CREATE, 0o600);
  } catch {
    if (leftBehind(steal, { pid: true, staleMs: STEAL_STALE_MS })) tryUnlink(steal);
    return false;
  }
  try {
    writeFileSync(fd, `${process.pid}\n`);
    return leftBehind(path, opts) && tryUnlink(path);
  } finally {
    closeSync(fd);
    tryUnlink(steal);
  }
}

/** One try: the lock, or null while another process holds it. A lock left behind is taken over first. */
export function tryLockFile(path: string, opts: LockFileOptions): HeldLock | null {
  for (let dirMade = false; ; ) {
    let fd: number;
    try {
      fd = openSync(path, CREATE, opts.mode);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" && opts.createDir && !dirMade) {
        mkdirSync(dirname(path), { recursive: true });
        dirMade = true;
        continue;
      }
      if (code !== "EEXIST") throw err;
      if (leftBehind(path, opts) && takeOver(path, opts)) continue;
      return null;
    }
    return held(path, fd, opts.pid === true);
  }
}

function held(path: string, fd: number, pid: boolean): HeldLock {
  if (pid) {
    try {
      writeFileSync(fd, `${process.pid}\n`);
    } catch (err) {
      closeSync(fd);
      tryUnlink(path);
      throw err;
    }
  }
  let open = true;
  const close = () => {
    if (!open) return;
    open = false;
    closeSync(fd);
  };
  // The descriptor is still open, so this lock's inode cannot have been reused by a file made since.
  const mine = () => {
    const there = lstatSync(path, { throwIfNoEntry: false });
    const own = fstatSync(fd);
    return there !== undefined && there.ino === own.ino && there.dev === own.dev;
  };
  let released = false;
  return {
    fd: pid ? -1 : fd,
    stillHeld: () => open && mine(),
    close,
    release() {
      if (released) return;
      released = true;
      // taken over meanwhile (held past staleMs), the file there is another's lock
      const remove = !open || mine();
      close();
      if (remove) tryUnlink(path);
    },
  };
}

/** A pause between tries, jittered so that waiters do not retry in step. */
function jittered(pause: number): number {
  return pause * (0.5 + Math.random());
}

/** Takes the lock at `path`, waiting up to `waitMs` (blocking the thread); throws `busy(...)` when the wait is over. */
export function lockFileSync(path: string, opts: LockFileOptions): HeldLock {
  const deadline = Date.now() + opts.waitMs;
  for (let pause = 1; ; pause = Math.min(pause * 2, opts.maxPollMs)) {
    const lock = tryLockFile(path, opts);
    if (lock) return lock;
    if (Date.now() >= deadline) throw opts.busy(lockHolder(path));
    Bun.sleepSync(jittered(pause));
  }
}

/** Takes the lock at `path`, waiting up to `waitMs`; throws `busy(...)` when the wait is over. */
export async function lockFile(path: string, opts: LockFileOptions): Promise<HeldLock> {
  const deadline = Date.now() + opts.waitMs;
  for (let pause = 1; ; pause = Math.min(pause * 2, opts.maxPollMs)) {
    const lock = tryLockFile(path, opts);
    if (lock) return lock;
    if (Date.now() >= deadline) throw opts.busy(lockHolder(path));
    await Bun.sleep(jittered(pause));
  }
}
