import type { Database } from "bun:sqlite";
import {
  clearSyncError,
  entryJsons,
  entrySyncRows,
  lastSyncError,
  markEntriesAccepted,
  markSessionAccepted,
  recordSyncFailure,
  sessionContent,
  sessionSyncRows,
} from "../../store/index-db.ts";
import { isValidSessionId } from "../session.ts";
import { indexRepos } from "../../store/index/db.ts";
import { setSyncValue, syncValue } from "../../store/index/sync-state.ts";
import { listLinks } from "../../store/links.ts";

/** The sync state key of the links version the backend accepted. */
const LINKS_SENT = "links_sent";
import type { AcceptedEntry, EntrySelection, PendingEntry, PendingSession, SessionSelection, SyncSource } from "./source.ts";

/**
 * A SyncSource over the SQLite index: entries and transcripts come from the index (kept in step with the
 * branches by `withIndex`), and what the backend `target` accepted is remembered in its sync tables.
 */
export function createIndexSource(db: Database, target: string): SyncSource {
  return {
    entries({ commits, includeAccepted = false }): EntrySelection {
      const rows = entrySyncRows(db, target, commits);
      const pending: PendingEntry[] = [];
      const accepted: AcceptedEntry[] = [];
      const toSend = rows.filter((r) => includeAccepted || r.acceptedHash !== r.contentHash);
      // the entries' text is read from the timeline in one go, not one object at a time
      const json = entryJsons(db, toSend.map((r) => r.contentHash));
      for (const r of rows) {
        if (!includeAccepted && r.acceptedHash === r.contentHash) accepted.push({ commitHash: r.commitHash, sessionId: r.sessionId });
        else pending.push({ commitHash: r.commitHash, version: r.contentHash, raw: json.get(r.contentHash) ?? r.json });
      }
      const found = new Set(rows.map((r) => r.commitHash));
      const missing = commits ? [...new Set(commits)].filter((c) => !found.has(c)) : [];
      return { pending, accepted, missing };
    },

    sessions(ids, { includeAccepted = false } = {}): SessionSelection {
      const wanted = [...new Set(ids)].filter(isValidSessionId);
      const byId = new Map(sessionSyncRows(db, target, wanted).map((r) => [r.sessionId, r]));
      const pending: PendingSession[] = [];
      const missing: string[] = [];
      for (const id of wanted) {
        const r = byId.get(id);
        if (!r) missing.push(id);
        else if (includeAccepted || r.acceptedHash !== r.contentHash) pending.push({ id, version: r.contentHash, bytes: r.bytes });
      }
      return { pending, missing };
    },

    readSession(session) {
      const content = sessionContent(db, session.id, session.version);
      if (content === null) throw new Error(`session ${session.id} changed while syncing`);
      return content;
    },

    markEntriesAccepted(entries, at) {
      markEntriesAccepted(
        db,
        target,
        entries.map((e) => ({ commitHash: e.commitHash, contentHash: e.version })),
        at,
      );
    },

    markSessionAccepted(id, version, at) {
      markSessionAccepted(db, target, id, version, at);
    },

    recordFailure(commitHashes, message, at) {
      recordSyncFailure(db, target, commitHashes, message, at);
    },

    lastError() {
      return lastSyncError(db, target);
    },

    clearLastError() {
      clearSyncError(db, target);
    },

    links({ includeAccepted = false }) {
      const commonDir = indexRepos.get(db);
      if (!commonDir) return null;
      const all = listLinks({ commonDir });
      if (all.texts.length === 0) return null;
      if (!includeAccepted && syncValue(db, LINKS_SENT) === all.version) return null;
      return all;
    },

    markLinksAccepted(version) {
      setSyncValue(db, LINKS_SENT, version);
    },
  };
}
