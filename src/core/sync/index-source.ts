import type { Database } from "bun:sqlite";
import {
  clearSyncError,
  inChunks,
  lastSyncError,
  markEntriesAccepted,
  markSessionAccepted,
  recordSyncFailure,
} from "../../store/index-db.ts";
import { isValidSessionId } from "../session.ts";
import type { AcceptedEntry, EntrySelection, PendingEntry, PendingSession, SessionSelection, SyncSource } from "./source.ts";

interface EntryRow {
  h: string;
  b: string;
  j: string;
  s: string | null;
  acc: string | null;
}

/**
 * A SyncSource over the SQLite index: entries and transcripts come from the index (kept in step with the
 * branches by `withIndex`), and what the backend accepted is remembered in its sync tables.
 */
export function createIndexSource(db: Database): SyncSource {
  const entrySql = `SELECT e.commit_hash AS h, e.blob_oid AS b, d.json AS j, e.session_id AS s, x.accepted_hash AS acc
    FROM entries e JOIN entry_docs d ON d.entry_id = e.id LEFT JOIN sync_entries x ON x.commit_hash = e.commit_hash`;

  return {
    entries({ commits, includeAccepted = false }): EntrySelection {
      const rows: EntryRow[] = commits
        ? inChunks([...new Set(commits)], (ph, part) =>
            db.query(`${entrySql} WHERE e.commit_hash IN (${ph}) ORDER BY e.captured_ms, e.id`).all(...part) as EntryRow[],
          )
        : (db.query(`${entrySql} ORDER BY e.captured_ms, e.id`).all() as EntryRow[]);
      const found = new Set(rows.map((r) => r.h));
      const pending: PendingEntry[] = [];
      const accepted: AcceptedEntry[] = [];
      for (const r of rows) {
        if (!includeAccepted && r.acc === r.b) accepted.push({ commitHash: r.h, sessionId: r.s ?? undefined });
        else pending.push({ commitHash: r.h, version: r.b, raw: r.j });
      }
      const missing = commits ? [...new Set(commits)].filter((c) => !found.has(c)) : [];
      return { pending, accepted, missing };
    },

    sessions(ids, { includeAccepted = false } = {}): SessionSelection {
      const wanted = [...new Set(ids)].filter(isValidSessionId);
      type Row = { id: string; b: string; n: number; acc: string | null };
      const rows = inChunks(wanted, (ph, part) =>
        db
          .query(
            `SELECT x.session_id AS id, x.blob_oid AS b, length(CAST(x.content AS BLOB)) AS n, s.accepted_hash AS acc
             FROM sessions x LEFT JOIN sync_sessions s ON s.session_id = x.session_id WHERE x.session_id IN (${ph})`,
          )
          .all(...part) as Row[],
      );
      const byId = new Map(rows.map((r) => [r.id, r]));
      const pending: PendingSession[] = [];
      const missing: string[] = [];
      for (const id of wanted) {
        const r = byId.get(id);
        if (!r) missing.push(id);
        else if (includeAccepted || r.acc !== r.b) pending.push({ id, version: r.b, bytes: r.n });
      }
      return { pending, missing };
    },

    readSession(session) {
      const row = db
        .query("SELECT content AS c FROM sessions WHERE session_id = ? AND blob_oid = ?")
        .get(session.id, session.version) as { c: string } | null;
      if (!row) throw new Error(`session ${session.id} changed while syncing`);
      return row.c;
    },

    markEntriesAccepted(entries, at) {
      markEntriesAccepted(
        db,
        entries.map((e) => ({ commitHash: e.commitHash, contentHash: e.version })),
        at,
      );
    },

    markSessionAccepted(id, version, at) {
      markSessionAccepted(db, id, version, at);
    },

    recordFailure(commitHashes, message, at) {
      recordSyncFailure(db, commitHashes, message, at);
    },

    lastError() {
      return lastSyncError(db);
    },

    clearLastError() {
      clearSyncError(db);
    },
  };
}
