/**
 * The index queries recall runs: which entries changed a file, the latest ones of a branch or a session, and
 * commits still waiting for their summary; and a read of the index that never refreshes or waits. Loads only
 * `node:fs` and `bun:sqlite`.
 */
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { ObjectStore } from "../objects.ts";
import { readRef, TIMELINE_REF } from "../refs.ts";
import { entryOrder, indexPath, indexRepos, SCHEMA_VERSION } from "./db.ts";

/** What recall shows of one entry. */
export interface RecallEntry {
  commitHash: string;
  title: string;
  tag: string;
  /** the commit's date when recorded (committedAt), else when the entry was written */
  date: string;
  intent: string;
  alternatives: string;
  sessionId: string;
  branch: string;
  changedFiles: string[];
  summaryStatus?: string;
  /** a teammate's entry from the team cache or server: whose (absent: this clone's own) */
  from?: string;
}

/**
 * The entries of `rows` (their blob ids, in order), read from the timeline's objects: the index keeps what
 * it filters by, the whole entry stays in git. An entry whose blob is gone is left out.
 */
function readEntries(db: Database, rows: { o: string }[]): RecallEntry[] {
  const commonDir = indexRepos.get(db);
  if (!commonDir || rows.length === 0) return [];
  const store = new ObjectStore(commonDir);
  const out: RecallEntry[] = [];
  for (const r of rows) {
    const obj = store.tryRead(r.o);
    if (obj?.type === "blob") out.push(toRecallEntry(obj.content.toString("utf8")));
  }
  return out;
}

/** An entry's JSON text as recall reads it. */
export function toRecallEntry(json: string): RecallEntry {
  const e = JSON.parse(json) as Record<string, unknown>;
  const str = (x: unknown) => (typeof x === "string" ? x : "");
  return {
    commitHash: str(e.commitHash),
    title: str(e.title),
    tag: str(e.tag),
    date: str(e.committedAt) || str(e.capturedAt),
    intent: str(e.intent),
    alternatives: str(e.alternatives),
    sessionId: str(e.claudeSessionId),
    branch: str(e.branch),
    changedFiles: Array.isArray(e.changedFiles) ? e.changedFiles.filter((f): f is string => typeof f === "string") : [],
    summaryStatus: typeof e.summaryStatus === "string" ? e.summaryStatus : undefined,
  };
}

/** Why the index cannot be read as it is. */
export type IndexState = "missing" | "behind" | "unreadable";

/** What reading a current index gave: no timeline at all, `fn`'s value, or why the index must be brought up first. */
export type IndexRead<T> = { state: "no-timeline" } | { state: "current"; value: T } | { state: IndexState };

/**
 * Runs `fn` on the index only when it is current: the repository has a timeline and the index file reflects its
 * tip, with this version's schema. Never writes, refreshes or waits for a writer; reports what stands in the way.
 */
export function readCurrentIndex<T>(commonDir: string, fn: (db: Database) => T): IndexRead<T> {
  const tip = readRef(commonDir, TIMELINE_REF);
  if (!tip) return { state: "no-timeline" };
  const path = indexPath(commonDir);
  if (!existsSync(path)) return { state: "missing" };
  let db: Database | undefined;
  try {
    db = new Database(path, { readwrite: true, create: false });
    indexRepos.set(db, commonDir);
    const version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    if (version !== SCHEMA_VERSION) return { state: "unreadable" };
    const indexed = db.query("SELECT value FROM meta WHERE key = 'timeline_tip'").get() as { value: string } | null;
    if (!indexed?.value) return { state: "unreadable" };
    if (indexed.value !== tip) return { state: "behind" };
    return { state: "current", value: fn(db) };
  } catch {
    return { state: "unreadable" };
  } finally {
    db?.close();
  }
}

/** Entries whose commits changed any of `paths`, newest first. */
export function entriesChangingPaths(db: Database, paths: string[], limit: number): RecallEntry[] {
  if (paths.length === 0) return [];
  // Driven from the file's rows (CROSS JOIN fixes the order): a file with few entries among many costs little.
  // One path lists an entry once (the key is path, entry); several may list it more than once.
  const rows = db
    .query(
      `SELECT ${paths.length > 1 ? "DISTINCT " : ""}e.blob_oid AS o, e.captured_ms, e.recorded_ms, e.commit_hash
       FROM entry_files f CROSS JOIN entries e ON e.id = f.entry_id
       WHERE f.path IN (${paths.map(() => "?").join(", ")}) ORDER BY ${entryOrder("DESC")} LIMIT ?`,
    )
    .all(...paths, limit) as { o: string }[];
  return readEntries(db, rows);
}

/**
 * The names `path` had before the renames entries recorded, nearest first, following a chain of renames (a → b → c)
 * back to at most `max` names; empty when none is known.
 */
export function earlierPaths(db: Database, path: string, max = 20): string[] {
  const step = db.query("SELECT DISTINCT old_path AS p FROM renames WHERE path = ?");
  const seen = new Set([path]);
  const out: string[] = [];
  let next = [path];
  while (next.length && out.length < max) {
    const found: string[] = [];
    for (const p of next) {
      for (const row of step.all(p) as { p: string }[]) {
        if (seen.has(row.p) || out.length >= max) continue;
        seen.add(row.p);
        out.push(row.p);
        found.push(row.p);
      }
    }
    next = found;
  }
  return out;
}

/** When the oldest entry was written (ms), null for an empty index. */
export function oldestEntryMs(db: Database): number | null {
  const row = db.query("SELECT min(captured_ms) AS ms FROM entries").get() as { ms: number | null };
  return row.ms;
}

/** The latest entries made on `branch`, newest first. */
export function latestEntriesOnBranch(db: Database, branch: string, limit: number): RecallEntry[] {
  const rows = db
    .query(`SELECT blob_oid AS o FROM entries WHERE branch = ? ORDER BY ${entryOrder("DESC")} LIMIT ?`)
    .all(branch, limit) as { o: string }[];
  return readEntries(db, rows);
}

/** Which of `commits` have an entry in the index. */
export function commitsWithEntries(db: Database, commits: string[]): string[] {
  const q = db.query("SELECT 1 FROM entries WHERE commit_hash = ? LIMIT 1");
  return commits.filter((h) => q.get(h) !== null);
}

/** The latest entries of one session, newest first. */
export function latestEntriesOfSession(db: Database, sessionId: string, limit: number): RecallEntry[] {
  const rows = db
    .query(`SELECT blob_oid AS o FROM entries WHERE session_id = ? ORDER BY ${entryOrder("DESC")} LIMIT ?`)
    .all(sessionId, limit) as { o: string }[];
  return readEntries(db, rows);
}

/**
 * Entries of sessions other than `sessionId` still waiting for their summary, newest first. Only the latest
 * `scan` entries are looked at: a summary is written within minutes of its commit or not at all.
 */
export function pendingEntriesOfOtherSessions(db: Database, sessionId: string, limit: number, scan = 50): RecallEntry[] {
  const rows = db
    .query(
      `SELECT o FROM (
         SELECT blob_oid AS o, session_id AS s, summary_status AS st, captured_ms, recorded_ms, commit_hash FROM entries
         ORDER BY ${entryOrder("DESC")} LIMIT ?)
       WHERE s != ? AND st = 'pending' ORDER BY ${entryOrder("DESC")} LIMIT ?`,
    )
    .all(scan, sessionId, limit) as { o: string }[];
  return readEntries(db, rows);
}

/**
 * The parts of the given commits that the index knows as links (squash or rebase-merge commits: see
 * store/links.ts), read from the links cache only: recall never computes a link. Commits without a known link
 * are left out; an index without the cache gives nothing.
 */
export function linkedParts(db: Database, hashes: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (hashes.length === 0) return out;
  try {
    const q = db.query("SELECT link FROM links_cache WHERE commit_hash = ? AND link IS NOT NULL");
    for (const h of hashes) {
      const row = q.get(h) as { link: string } | null;
      if (!row) continue;
      const parts = (JSON.parse(row.link) as { parts?: { commitHash?: unknown }[] }).parts ?? [];
      const list: string[] = [];
      for (const p of parts) if (typeof p.commitHash === "string") list.push(p.commitHash);
      if (list.length) out.set(h, list);
    }
  } catch {
    // no links cache yet
  }
  return out;
}
