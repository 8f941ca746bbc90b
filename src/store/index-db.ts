/**
 * The SQLite index: a cache of the timeline and sessions branches at `<common dir>/aiflare/index.sqlite`,
 * plus the sync state. Open it with `withIndex` (opens, repairs, brings it up to the branch tips, runs
 * your function, closes); everything else here takes the open `Database`.
 */
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import {
  buildIndexFile,
  discardCorruptIndex,
  fileIdentity,
  indexPath,
  indexRepos,
  initSchema,
  isCorruptionError,
  isUnwritableError,
  openIndexDb,
} from "./index/db.ts";
import { refreshIndex, type RefreshResult } from "./index/refresh.ts";

export { entryOrder, indexPath, SCHEMA_VERSION } from "./index/db.ts";
export { refreshIndex, type RefreshResult } from "./index/refresh.ts";
export { topChangedFiles } from "./index/reads.ts";
export {
  pendingEntries,
  markEntriesAccepted,
  recordSyncFailure,
  pendingSessions,
  markSessionAccepted,
  lastSyncError,
  clearSyncError,
  entrySyncRows,
  pendingEntryCount,
  pendingSessionCount,
  claimSyncTarget,
  syncStatus,
  type SyncTarget,
  type SyncTargetStatus,
  sessionSyncRows,
  sessionContent,
  sessionFirstRequest,
  entryJson,
  entryJsons,
  streamEntryJson,
  type EntrySyncRow,
  type SessionSyncRow,
  type PendingEntry,
  type PendingSession,
} from "./index/sync-state.ts";

/**
 * Opens the index, brings it up to the current branch tips and runs `fn` on it. A database found damaged
 * at any point (a "malformed" error, a failed check) is discarded and rebuilt once from the branches, without
 * bothering the caller. Where the index cannot be written (a read-only checkout) it is built in memory for
 * this one call.
 */
export async function withIndex<T>(
  commonDir: string,
  fn: (db: Database, refresh: RefreshResult) => T | Promise<T>,
): Promise<T> {
  const path = indexPath(commonDir);
  const built = existsSync(path) ? undefined : await buildMissing(path, commonDir);
  for (let attempt = 0; ; attempt++) {
    let db: Database;
    try {
      db = openIndexDb(path);
    } catch (err) {
      if (isUnwritableError(err)) return withMemoryIndex(commonDir, fn);
      throw err;
    }
    const seen = fileIdentity(path);
    indexRepos.set(db, commonDir);
    try {
      let refresh: RefreshResult;
      try {
        refresh = await refreshIndex(db, commonDir);
        // what this call built, unless the branches moved again since
        if (built && refresh.upToDate) refresh = built;
      } catch (err) {
        if (!isUnwritableError(err)) throw err;
        db.close();
        return await withMemoryIndex(commonDir, fn);
      }
      return await fn(db, refresh);
    } catch (err) {
      if (attempt > 0 || !isCorruptionError(err)) throw err;
      db.close();
      discardCorruptIndex(path, seen);
      continue;
    } finally {
      try {
        db.close();
      } catch {
        // already closed
      }
    }
  }
}

/**
 * A missing index built whole in a file of its own (see buildIndexFile), then published: what the refresh did,
 * or undefined where it could not be written (the caller's open decides what to do then).
 */
async function buildMissing(path: string, commonDir: string): Promise<RefreshResult | undefined> {
  try {
    return await buildIndexFile(path, (db) => {
      indexRepos.set(db, commonDir);
      return refreshIndex(db, commonDir);
    });
  } catch (err) {
    if (isUnwritableError(err)) return undefined;
    throw err;
  }
}

/** Builds the index in memory, runs `fn` on it and drops it: for repositories whose index cannot be written. */
async function withMemoryIndex<T>(commonDir: string, fn: (db: Database, refresh: RefreshResult) => T | Promise<T>): Promise<T> {
  const db = new Database(":memory:");
  try {
    initSchema(db);
    indexRepos.set(db, commonDir);
    return await fn(db, await refreshIndex(db, commonDir));
  } finally {
    db.close();
  }
}

/**
 * The branch tips the index file reflects, read without refreshing it (so a caller can tell whether it is
 * behind). Null when there is no readable index file.
 */
export function indexedTips(commonDir: string): { timeline: string | null; sessions: string | null } | null {
  const path = indexPath(commonDir);
  if (!existsSync(path)) return null;
  let db: Database | undefined;
  try {
    db = new Database(path, { readonly: true });
    const get = (key: string) =>
      ((db!.query("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | null)?.value ?? null) || null;
    return { timeline: get("timeline_tip"), sessions: get("sessions_tip") };
  } catch {
    return null;
  } finally {
    db?.close();
  }
}
