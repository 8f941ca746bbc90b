import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { AiflareError } from "../../errors.ts";
import { processAlive } from "../../util/ids.ts";

/** A held lock; `release` is idempotent. */
export interface SyncLock {
  release(): void;
}

function holderPid(file: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function tryAcquire(file: string): boolean {
  try {
    const fd = openSync(file, "wx", 0o600);
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    const pid = holderPid(file);
    // A lock left by a process that died (killed mid-sync) is taken over.
    if (pid !== null && processAlive(pid)) return false;
    if (pid === null) {
      // Just created by another process that has not written its pid yet: give it a moment.
      return false;
    }
    rmSync(file, { force: true });
    return tryAcquire(file);
  }
}

/**
 * Takes the sync lock file (pid inside, stale locks of dead processes taken over), so two syncs
 * never send the same entries or overwrite each other's record. Waits up to `waitMs`.
 */
export async function acquireSyncLock(file: string, waitMs: number): Promise<SyncLock> {
  mkdirSync(dirname(file), { recursive: true });
  const deadline = Date.now() + waitMs;
  let emptySince: number | undefined;
  for (;;) {
    if (tryAcquire(file)) break;
    // A lock file without a pid for more than a second is debris of a crash between create and write.
    if (holderPid(file) === null) {
      emptySince ??= Date.now();
      if (Date.now() - emptySince > 1000) {
        rmSync(file, { force: true });
        continue;
      }
    } else {
      emptySince = undefined;
    }
    if (Date.now() >= deadline) {
      const pid = holderPid(file);
      throw new AiflareError(
        "LOCKED",
        `another aiflare sync is running${pid ? ` (pid ${pid})` : ""}; run \`aiflare sync\` again when it has finished`,
      );
    }
    await Bun.sleep(100);
  }
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      if (holderPid(file) === process.pid) rmSync(file, { force: true });
    },
  };
}
