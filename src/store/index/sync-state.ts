import type { Database } from "bun:sqlite";
import type { Entry } from "../entry.ts";

/** An entry the backend has not accepted in its current version. */
export interface PendingEntry {
  commitHash: string;
  /** identifies this version of the entry (its blob id); pass it back to `markEntriesAccepted` */
  contentHash: string;
  entry: Entry;
  attempts: number;
  lastError: string | null;
}

/** A session transcript whose current content the backend has not accepted. */
export interface PendingSession {
  sessionId: string;
  contentHash: string;
  /** the redacted JSONL transcript, as stored on the sessions branch */
  content: string;
  attempts: number;
  lastError: string | null;
}

const CHUNK = 500;

/** Runs `query` over `keys` in chunks, since SQLite limits the number of bound parameters. */
export function inChunks<R>(keys: string[], query: (placeholders: string, part: string[]) => R[]): R[] {
  const out: R[] = [];
  for (let i = 0; i < keys.length; i += CHUNK) {
    const part = keys.slice(i, i + CHUNK);
    out.push(...query(part.map(() => "?").join(","), part));
  }
  return out;
}

function iso(at: Date | string): string {
  return typeof at === "string" ? at : at.toISOString();
}

/**
 * Entries never accepted, or changed since (the agent's summary rewrites an entry after its first
 * version). `commits` limits the answer to those full hashes (e.g. the commits being pushed).
 * Oldest first, so a backend sees entries in the order they were captured.
 */
export function pendingEntries(db: Database, opts: { commits?: string[] } = {}): PendingEntry[] {
  const base = `SELECT e.commit_hash AS h, e.blob_oid AS b, d.json AS j, s.attempts AS a, s.last_error AS err
    FROM entries e JOIN entry_docs d ON d.entry_id = e.id LEFT JOIN sync_entries s ON s.commit_hash = e.commit_hash
    WHERE (s.accepted_hash IS NULL OR s.accepted_hash != e.blob_oid)`;
  type Row = { h: string; b: string; j: string; a: number | null; err: string | null };
  let rows: Row[];
  if (opts.commits === undefined) {
    rows = db.query(`${base} ORDER BY e.captured_ms, e.id`).all() as Row[];
  } else {
    rows = inChunks([...new Set(opts.commits)], (ph, part) => db.query(`${base} AND e.commit_hash IN (${ph})`).all(...part) as Row[]);
    const order = new Map(
      (db.query("SELECT commit_hash AS h, captured_ms AS t FROM entries").all() as { h: string; t: number }[]).map(
        (r) => [r.h, r.t],
      ),
    );
    rows.sort((x, y) => (order.get(x.h) ?? 0) - (order.get(y.h) ?? 0));
  }
  return rows.map((r) => ({
    commitHash: r.h,
    contentHash: r.b,
    entry: JSON.parse(r.j) as Entry,
    attempts: r.a ?? 0,
    lastError: r.err,
  }));
}

/**
 * Records that the backend accepted these entries. Pass the `{commitHash, contentHash}` pairs from
 * `pendingEntries` so that an entry rewritten meanwhile stays pending; a bare hash accepts its current version.
 */
export function markEntriesAccepted(
  db: Database,
  accepted: Array<string | { commitHash: string; contentHash: string }>,
  at: Date | string = new Date(),
): void {
  const current = db.query("SELECT blob_oid AS b FROM entries WHERE commit_hash = ?");
  const upsert = db.query(
    `INSERT INTO sync_entries (commit_hash, accepted_at, accepted_hash, last_error, attempts) VALUES (?, ?, ?, NULL, 0)
     ON CONFLICT (commit_hash) DO UPDATE SET accepted_at = excluded.accepted_at, accepted_hash = excluded.accepted_hash,
       last_error = NULL, attempts = 0`,
  );
  const when = iso(at);
  db.transaction(() => {
    for (const item of accepted) {
      const hash = typeof item === "string" ? item : item.commitHash;
      const content =
        typeof item === "string" ? ((current.get(hash) as { b: string } | null)?.b ?? null) : item.contentHash;
      if (content) upsert.run(hash, when, content);
    }
  }).immediate();
}

/** Records a failed attempt for these commits and remembers `message` as the last sync error. */
export function recordSyncFailure(db: Database, hashes: string[], message: string, at: Date | string = new Date()): void {
  const upsert = db.query(
    `INSERT INTO sync_entries (commit_hash, last_error, attempts) VALUES (?, ?, 1)
     ON CONFLICT (commit_hash) DO UPDATE SET last_error = excluded.last_error, attempts = attempts + 1`,
  );
  db.transaction(() => {
    for (const h of hashes) upsert.run(h, message);
    setLastSyncError(db, message, iso(at));
  }).immediate();
}

/** Sessions whose current transcript differs from the one last accepted; `sessionIds` limits the answer. */
export function pendingSessions(db: Database, opts: { sessionIds?: string[] } = {}): PendingSession[] {
  const base = `SELECT x.session_id AS id, x.blob_oid AS b, x.content AS c, s.attempts AS a, s.last_error AS err
    FROM sessions x LEFT JOIN sync_sessions s ON s.session_id = x.session_id
    WHERE (s.accepted_hash IS NULL OR s.accepted_hash != x.blob_oid)`;
  type Row = { id: string; b: string; c: string; a: number | null; err: string | null };
  const rows =
    opts.sessionIds === undefined
      ? (db.query(base).all() as Row[])
      : inChunks([...new Set(opts.sessionIds)], (ph, part) => db.query(`${base} AND x.session_id IN (${ph})`).all(...part) as Row[]);
  return rows.map((r) => ({ sessionId: r.id, contentHash: r.b, content: r.c, attempts: r.a ?? 0, lastError: r.err }));
}

/** Records that the backend accepted the transcript of `sessionId` whose content hash is `contentHash`. */
export function markSessionAccepted(db: Database, sessionId: string, contentHash: string, at: Date | string = new Date()): void {
  db.transaction(() => {
    db.query(
      `INSERT INTO sync_sessions (session_id, accepted_at, accepted_hash, last_error, attempts) VALUES (?, ?, ?, NULL, 0)
       ON CONFLICT (session_id) DO UPDATE SET accepted_at = excluded.accepted_at, accepted_hash = excluded.accepted_hash,
         last_error = NULL, attempts = 0`,
    ).run(sessionId, iso(at), contentHash);
  }).immediate();
}

function setLastSyncError(db: Database, message: string, at: string): void {
  db.query(
    "INSERT INTO sync_kv (key, value) VALUES ('last_error', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
  ).run(JSON.stringify({ message, at }));
}

/** The last recorded sync failure, or null when none was recorded since `clearSyncError`. */
export function lastSyncError(db: Database): { message: string; at: string } | null {
  const row = db.query("SELECT value FROM sync_kv WHERE key = 'last_error'").get() as { value: string } | null;
  if (!row) return null;
  try {
    return JSON.parse(row.value) as { message: string; at: string };
  } catch {
    return null;
  }
}

/** Forgets the last sync error (call after a sync that fully succeeded). */
export function clearSyncError(db: Database): void {
  db.transaction(() => db.run("DELETE FROM sync_kv WHERE key = 'last_error'")).immediate();
}
