import { AiflareError } from "../../errors.ts";
import { lockFile, type HeldLock } from "../../util/lockfile.ts";

/** A held lock; `release` is idempotent. */
export type SyncLock = Pick<HeldLock, "release">;

/**
 * Takes the sync lock file (util/lockfile.ts: this process's pid inside, the lock of a process that died taken over),
 * so two syncs never send the same entries or overwrite each other's record. Waits up to `waitMs`.
 */
export function acquireSyncLock(file: string, waitMs: number): Promise<SyncLock> {
  return lockFile(file, {
    pid: true,
    waitMs,
    maxPollMs: 100,
    mode: 0o600,
    createDir: true,
    busy: (holder) =>
      new AiflareError("LOCKED", `another aiflare sync is running${holder ? ` (pid ${holder})` : ""}; run \`aiflare sync\` again when it has finished`),
  });
}
