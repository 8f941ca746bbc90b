import type { Database } from "bun:sqlite";
import type { Entry } from "../entry.ts";
import { snapshotAt } from "../branch.ts";
import { ObjectStore } from "../objects.ts";
import { readSessionTranscript, sessionPartsAt } from "../session-read.ts";
import { AiflareError } from "../../errors.ts";
import { gitSyncRaw, parseCatFileBatch, streamBlobs } from "../../util/git.ts";
import { conversationLines } from "../../util/jsonl.ts";
import { entryOrder, indexRepos } from "./db.ts";

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

/** One entry's standing for sync: its current version, stored JSON, session, and what was last accepted. */
export interface EntrySyncRow {
  commitHash: string;
  /** the current version (blob id) */
  contentHash: string;
  /** the entry JSON as stored on the timeline branch */
  json: string;
  sessionId: string;
  /** the version the backend last accepted, or null */
  acceptedHash: string | null;
  attempts: number;
  lastError: string | null;
}

/**
 * Every entry (or those of `commits`, full hashes) with its sync standing towards the backend `target`, oldest
 * first, so a backend sees entries in the order they were made.
 */
export function entrySyncRows(db: Database, target: string, commits?: string[]): EntrySyncRow[] {
  const base = `SELECT e.commit_hash AS commitHash, e.blob_oid AS contentHash, e.session_id AS sessionId,
      s.accepted_hash AS acceptedHash, coalesce(s.attempts, 0) AS attempts, s.last_error AS lastError
    FROM entries e LEFT JOIN sync_entries s ON s.target = ? AND s.commit_hash = e.commit_hash`;
  const order = ` ORDER BY ${entryOrder("ASC", "e")}`;
  // the JSON is read from the timeline's objects only when asked for: most rows are looked at for their standing
  type Raw = Omit<EntrySyncRow, "json">;
  const withJson = (r: Raw): EntrySyncRow => ({
    ...r,
    get json() {
      return entryJson(db, r.contentHash) ?? "";
    },
  });
  if (commits === undefined) return (db.query(base + order).all(target) as Raw[]).map(withJson);
  const rows = inChunks([...new Set(commits)], (ph, part) =>
    (db.query(`${base} WHERE e.commit_hash IN (${ph})${order}`).all(target, ...part) as Raw[]).map(withJson),
  );
  // chunks are each in order; merge them back into capture order
  const rank = new Map(
    (db.query(`SELECT commit_hash AS h FROM entries ORDER BY ${entryOrder("ASC")}`).all() as { h: string }[]).map((r, i) => [r.h, i]),
  );
  return rows.sort((x, y) => (rank.get(x.commitHash) ?? 0) - (rank.get(y.commitHash) ?? 0));
}

/** Which sync table keeps the standing of each indexed table's rows, and by what key. */
const SYNC_OF = {
  entries: { sync: "sync_entries", key: "commit_hash" },
  sessions: { sync: "sync_sessions", key: "session_id" },
} as const;

/** How many rows of `table` the backend `target` has not accepted in their current version. */
function pendingCount(db: Database, target: string, table: keyof typeof SYNC_OF): number {
  const { sync, key } = SYNC_OF[table];
  const row = db
    .query(
      `SELECT count(*) AS n FROM ${table} x LEFT JOIN ${sync} s ON s.target = ? AND s.${key} = x.${key}
       WHERE s.accepted_hash IS NULL OR s.accepted_hash != x.blob_oid`,
    )
    .get(target) as { n: number };
  return row.n;
}

/** How many entries the backend `target` has not accepted in their current version. */
export function pendingEntryCount(db: Database, target: string): number {
  return pendingCount(db, target, "entries");
}

/** How many stored session transcripts the backend `target` has not accepted in their current version. */
export function pendingSessionCount(db: Database, target: string): number {
  return pendingCount(db, target, "sessions");
}

/**
 * Entries never accepted, or changed since (the agent's summary rewrites an entry after its first
 * version). `commits` limits the answer to those full hashes (e.g. the commits being pushed).
 */
export function pendingEntries(db: Database, target: string, opts: { commits?: string[] } = {}): PendingEntry[] {
  return entrySyncRows(db, target, opts.commits)
    .filter((r) => r.acceptedHash !== r.contentHash)
    .map((r) => ({
      commitHash: r.commitHash,
      contentHash: r.contentHash,
      entry: JSON.parse(r.json) as Entry,
      attempts: r.attempts,
      lastError: r.lastError,
    }));
}

/**
 * Records that the backend accepted these entries. Pass the `{commitHash, contentHash}` pairs from
 * `pendingEntries` so that an entry rewritten meanwhile stays pending; a bare hash accepts its current version.
 */
export function markEntriesAccepted(
  db: Database,
  target: string,
  accepted: Array<string | { commitHash: string; contentHash: string }>,
  at: Date | string = new Date(),
): void {
  const current = db.query("SELECT blob_oid AS b FROM entries WHERE commit_hash = ?");
  const upsert = db.query(
    `INSERT INTO sync_entries (target, commit_hash, accepted_at, accepted_hash, last_error, attempts) VALUES (?, ?, ?, ?, NULL, 0)
     ON CONFLICT (target, commit_hash) DO UPDATE SET accepted_at = excluded.accepted_at, accepted_hash = excluded.accepted_hash,
       last_error = NULL, attempts = 0`,
  );
  const when = iso(at);
  db.transaction(() => {
    for (const item of accepted) {
      const hash = typeof item === "string" ? item : item.commitHash;
      const content =
        typeof item === "string" ? ((current.get(hash) as { b: string } | null)?.b ?? null) : item.contentHash;
      if (content) upsert.run(target, hash, when, content);
    }
  }).immediate();
}

/** Records a failed attempt for these commits and remembers `message` as the last sync error of `target`. */
export function recordSyncFailure(db: Database, target: string, hashes: string[], message: string, at: Date | string = new Date()): void {
  const upsert = db.query(
    `INSERT INTO sync_entries (target, commit_hash, last_error, attempts) VALUES (?, ?, ?, 1)
     ON CONFLICT (target, commit_hash) DO UPDATE SET last_error = excluded.last_error, attempts = attempts + 1`,
  );
  db.transaction(() => {
    for (const h of hashes) upsert.run(target, h, message);
    targetRow(db, target);
    db.query("UPDATE sync_targets SET last_error = ? WHERE target = ?").run(JSON.stringify({ message, at: iso(at) }), target);
  }).immediate();
}

/** One stored session transcript's standing for sync (without its content). */
export interface SessionSyncRow {
  sessionId: string;
  contentHash: string;
  bytes: number;
  acceptedHash: string | null;
  attempts: number;
  lastError: string | null;
}

/** Every stored session (or those of `sessionIds`) with its sync standing towards the backend `target`. */
export function sessionSyncRows(db: Database, target: string, sessionIds?: string[]): SessionSyncRow[] {
  const base = `SELECT x.session_id AS sessionId, x.blob_oid AS contentHash, x.bytes AS bytes,
      s.accepted_hash AS acceptedHash, coalesce(s.attempts, 0) AS attempts, s.last_error AS lastError
    FROM sessions x LEFT JOIN sync_sessions s ON s.target = ? AND s.session_id = x.session_id`;
  if (sessionIds === undefined) return db.query(base).all(target) as SessionSyncRow[];
  return inChunks([...new Set(sessionIds)], (ph, part) =>
    db.query(`${base} WHERE x.session_id IN (${ph})`).all(target, ...part) as SessionSyncRow[],
  );
}

/**
 * The stored transcript of a session in the given version, or null when it has changed or is gone. The
 * index keeps only its version: the text is read from the sessions branch's objects.
 */
export function sessionContent(db: Database, sessionId: string, contentHash: string): string | null {
  const row = db.query("SELECT 1 FROM sessions WHERE session_id = ? AND blob_oid = ?").get(sessionId, contentHash);
  const commonDir = indexRepos.get(db);
  if (!row || !commonDir) return null;
  const transcript = readSessionTranscript({ commonDir }, sessionId, { tip: indexedSessionsTip(db) });
  return transcript?.version === contentHash ? transcript.text : null;
}

/** The sessions branch tip the index reflects (what its session versions belong to). */
function indexedSessionsTip(db: Database): string | null {
  const row = db.query("SELECT value FROM meta WHERE key = 'sessions_tip'").get() as { value: string } | null;
  return row?.value || null;
}

/** The JSON text of an indexed entry, read from its blob on the timeline branch; null when the blob is gone. */
export function entryJson(db: Database, blobOid: string): string | null {
  const commonDir = indexRepos.get(db);
  if (!commonDir) return null;
  const obj = new ObjectStore(commonDir).tryRead(blobOid);
  return obj?.type === "blob" ? obj.content.toString("utf8") : null;
}

/** The JSON text of many indexed entries (blob id → text), read with one `git cat-file`; gone ones left out. */
export function entryJsons(db: Database, blobOids: string[]): Map<string, string> {
  const out = new Map<string, string>();
  const commonDir = indexRepos.get(db);
  if (!commonDir || blobOids.length === 0) return out;
  const r = gitSyncRaw(["--git-dir", commonDir, "cat-file", "--batch"], { stdin: `${blobOids.join("\n")}\n` });
  if (r.code !== 0) throw new AiflareError("GIT", `git cat-file failed: ${r.stderr.trim()}`);
  const decoder = new TextDecoder();
  for (const [oid, obj] of parseCatFileBatch(r.stdout)) if (obj.type === "blob") out.set(oid, decoder.decode(obj.content));
  return out;
}

/**
 * The JSON text of each of `blobOids` in order, streamed out of git (entries the index lists, read in bulk):
 * memory stays flat at any number; `onJson` may return a promise, awaited before more is read.
 */
export async function streamEntryJson(db: Database, blobOids: string[], onJson: (json: string) => void | Promise<void>): Promise<void> {
  const commonDir = indexRepos.get(db);
  if (!commonDir) return;
  const decoder = new TextDecoder();
  await streamBlobs(commonDir, blobOids, (_oid, bytes) => onJson(decoder.decode(bytes)));
}

/** Longest first request kept (the full text stays in the transcript). */
const FIRST_REQUEST_KEEP = 400;

/**
 * The first user request of a stored session, read from its transcript on the sessions branch (the index keeps
 * transcripts' versions, not their text) and remembered in the index; null when there is none.
 */
export function sessionFirstRequest(db: Database, sessionId: string): string | null {
  const row = db.query("SELECT blob_oid AS o, first_request AS f FROM sessions WHERE session_id = ?").get(sessionId) as
    | { o: string; f: string | null }
    | null;
  if (!row) return null;
  if (row.f !== null) return row.f || null;
  const commonDir = indexRepos.get(db);
  if (!commonDir) return null;
  const store = new ObjectStore(commonDir);
  const parts = sessionPartsAt(snapshotAt(store, indexedSessionsTip(db)), sessionId);
  let first = "";
  // the transcript's parts in order, read only until the first request is found (usually in the first)
  for (const blob of parts?.blobs ?? []) {
    const obj = store.tryRead(blob);
    if (obj?.type !== "blob") break;
    const text = obj.content.toString("utf8");
    for (let start = 0; start < text.length && !first; ) {
      let end = text.indexOf("\n", start);
      if (end < 0) end = text.length;
      const line = conversationLines(text.slice(start, end))[0];
      if (line?.role === "user") first = line.content.slice(0, FIRST_REQUEST_KEEP);
      start = end + 1;
    }
    if (first) break;
  }
  try {
    db.query("UPDATE sessions SET first_request = ? WHERE session_id = ? AND blob_oid = ?").run(first, sessionId, row.o);
  } catch {
    // a read-only index: read again next time
  }
  return first || null;
}

/** Sessions whose current transcript differs from the one last accepted; `sessionIds` limits the answer. */
export function pendingSessions(db: Database, target: string, opts: { sessionIds?: string[] } = {}): PendingSession[] {
  return sessionSyncRows(db, target, opts.sessionIds)
    .filter((r) => r.acceptedHash !== r.contentHash)
    .map((r) => ({
      sessionId: r.sessionId,
      contentHash: r.contentHash,
      content: sessionContent(db, r.sessionId, r.contentHash) ?? "",
      attempts: r.attempts,
      lastError: r.lastError,
    }));
}

/** Records that the backend `target` accepted the transcript of `sessionId` whose content hash is `contentHash`. */
export function markSessionAccepted(db: Database, target: string, sessionId: string, contentHash: string, at: Date | string = new Date()): void {
  db.transaction(() => {
    db.query(
      `INSERT INTO sync_sessions (target, session_id, accepted_at, accepted_hash, last_error, attempts) VALUES (?, ?, ?, ?, NULL, 0)
       ON CONFLICT (target, session_id) DO UPDATE SET accepted_at = excluded.accepted_at, accepted_hash = excluded.accepted_hash,
         last_error = NULL, attempts = 0`,
    ).run(target, sessionId, iso(at), contentHash);
  }).immediate();
}

/** The backend a sync sends to: its key in the sync tables, and what may be shown of it. */
export interface SyncTarget {
  /** the normalised endpoint and the project's identity, joined: the key of its sync state */
  target: string;
  /** the normalised endpoint URL */
  endpoint: string;
  /** a hash of the API key (never the key): which project of that server */
  project: string;
}

/** Makes sure `target` has its row (state of unknown backends is never created here). */
function targetRow(db: Database, target: string, info?: SyncTarget): void {
  const [endpoint, project] = info ? [info.endpoint, info.project] : [target, ""];
  db.query("INSERT INTO sync_targets (target, endpoint, project) VALUES (?, ?, ?) ON CONFLICT (target) DO NOTHING").run(target, endpoint, project);
}

/**
 * Registers the backend a sync is about to send to. The first backend registered after an upgrade takes over
 * the state kept before sync state was per backend (what it accepted then, it has); any later backend starts
 * with nothing accepted, so it gets everything it lacks.
 */
export function claimSyncTarget(db: Database, info: SyncTarget): void {
  db.transaction(() => {
    const known = db.query("SELECT 1 FROM sync_targets WHERE target = ?").get(info.target) !== null;
    targetRow(db, info.target, info);
    if (known || db.query("SELECT 1 FROM sync_targets WHERE target != ?").get(info.target) !== null) return;
    db.query("UPDATE sync_entries SET target = ? WHERE target = ''").run(info.target);
    db.query("UPDATE sync_sessions SET target = ? WHERE target = ''").run(info.target);
    const legacy = db.query("SELECT value FROM sync_kv WHERE key = 'last_error'").get() as { value: string } | null;
    if (legacy) db.query("UPDATE sync_targets SET last_error = ? WHERE target = ?").run(legacy.value, info.target);
    db.run("DELETE FROM sync_kv WHERE key = 'last_error'");
  }).immediate();
}

/** The last recorded sync failure of `target`, or null when none was recorded since it last succeeded. */
export function lastSyncError(db: Database, target: string): { message: string; at: string } | null {
  const row = db.query("SELECT last_error AS value FROM sync_targets WHERE target = ?").get(target) as { value: string | null } | null;
  if (!row?.value) return null;
  try {
    return JSON.parse(row.value) as { message: string; at: string };
  } catch {
    return null;
  }
}

/** Forgets the last sync error of `target` and remembers when it succeeded (call after a sync where nothing failed). */
export function clearSyncError(db: Database, target: string, at: Date | string = new Date()): void {
  db.transaction(() => {
    targetRow(db, target);
    db.query("UPDATE sync_targets SET last_error = NULL, last_success_at = ? WHERE target = ?").run(iso(at), target);
  }).immediate();
}

/** What `sync --status` shows of one backend. */
export interface SyncTargetStatus {
  endpoint: string;
  project: string;
  pendingEntries: number;
  pendingSessions: number;
  lastSuccessAt: string | null;
  lastError: { message: string; at: string } | null;
}

/** The standing of every backend this repository has synced with (and of `current`, even if it never has). */
export function syncStatus(db: Database, current?: SyncTarget): (SyncTargetStatus & { current: boolean })[] {
  const rows = db.query("SELECT target, endpoint, project, last_success_at AS lastSuccessAt FROM sync_targets ORDER BY endpoint, project").all() as {
    target: string;
    endpoint: string;
    project: string;
    lastSuccessAt: string | null;
  }[];
  if (current && !rows.some((r) => r.target === current.target)) rows.unshift({ ...current, lastSuccessAt: null });
  return rows.map((r) => ({
    endpoint: r.endpoint,
    project: r.project,
    pendingEntries: pendingEntryCount(db, r.target),
    pendingSessions: pendingSessionCount(db, r.target),
    lastSuccessAt: r.lastSuccessAt,
    lastError: lastSyncError(db, r.target),
    current: r.target === current?.target,
  }));
}

/** A value of the sync state (`sync_kv`), or null. */
export function syncValue(db: Database, key: string): string | null {
  return (db.query("SELECT value FROM sync_kv WHERE key = ?").get(key) as { value: string } | null)?.value ?? null;
}

/** Sets a value of the sync state. */
export function setSyncValue(db: Database, key: string, value: string): void {
  db.query("INSERT INTO sync_kv (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(key, value);
}
