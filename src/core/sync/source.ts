/**
 * Where `sync` reads entries and sessions and remembers what the backend accepted (the SQLite index, see
 * `index-source.ts`). Each mark or record is kept as soon as it is made.
 */

/** An entry that should go to the backend, with its stored JSON text. */
export interface PendingEntry {
  commitHash: string;
  /** identifies this version of the entry (the blob id); an entry rewritten later is pending again */
  version: string;
  raw: string;
}

/** An entry in scope that the backend already has, in this version. */
export interface AcceptedEntry {
  commitHash: string;
  sessionId?: string;
}

export interface EntrySelection {
  pending: PendingEntry[];
  accepted: AcceptedEntry[];
  /** commits asked for that have no entry */
  missing: string[];
}

/** A stored session transcript that should go to the backend. */
export interface PendingSession {
  id: string;
  version: string;
  bytes: number;
}

export interface SessionSelection {
  pending: PendingSession[];
  /** sessions asked for that have no stored transcript */
  missing: string[];
}

export interface SyncFailure {
  message: string;
  at: string;
}

/** Data access for `sync`. */
export interface SyncSource {
  /**
   * Entries to consider: every entry (or those of `commits`, full hashes) whose current version the
   * backend has not accepted; with `includeAccepted`, accepted ones are returned as pending too.
   */
  entries(opts: { commits?: string[]; includeAccepted?: boolean }): EntrySelection;
  /** Stored transcripts of `ids` whose current version is not accepted (all of them with `includeAccepted`). */
  sessions(ids: string[], opts?: { includeAccepted?: boolean }): SessionSelection;
  /** The stored transcript text of one session version. */
  readSession(session: PendingSession): string;
  markEntriesAccepted(entries: { commitHash: string; version: string; sessionId?: string }[], at: string): void;
  markSessionAccepted(id: string, version: string, at: string): void;
  /** Remembers why these entries failed (they stay pending); with no hashes, a failure of the whole run. */
  recordFailure(commitHashes: string[], message: string, at: string): void;
  lastError(): SyncFailure | null;
  /** Forgets the last run's failure after a run where nothing failed. */
  clearLastError(): void;
  /** The links on the timeline (squash and rebase-merge commits), unless this version of them was accepted. */
  links?(opts: { includeAccepted?: boolean }): { version: string; texts: string[] } | null;
  markLinksAccepted?(version: string): void;
}
