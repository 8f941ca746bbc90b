/**
 * The team's entries as the team server answered them: a read-only cache beside the index
 * (`<common dir>/aiflare/team.sqlite`), kept per backend and project. Nothing here is local capture: it is never
 * written into the timeline branch, never sent by sync, and deleting the file loses only what `aiflare pull` or a
 * lookup brings back.
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import * as v from "valibot";
import { entrySchema, type Entry } from "./entry.ts";

/** A commit the server had no entry for is asked again after this long (a teammate may sync it meanwhile). */
export const MISS_TTL_MS = 10 * 60 * 1000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS team_entries (
  target TEXT NOT NULL,
  commit_hash TEXT NOT NULL,
  entry TEXT NOT NULL,
  fetched_ms INTEGER NOT NULL,
  PRIMARY KEY (target, commit_hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS team_misses (
  target TEXT NOT NULL,
  commit_hash TEXT NOT NULL,
  checked_ms INTEGER NOT NULL,
  PRIMARY KEY (target, commit_hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS team_pulls (target TEXT PRIMARY KEY, pulled_ms INTEGER NOT NULL, entries INTEGER NOT NULL) WITHOUT ROWID;
`;

/** Where the team cache of a repository lives. */
export function teamCachePath(commonDir: string): string {
  return join(commonDir, "aiflare", "team.sqlite");
}

function openTeamCache(commonDir: string): Database {
  const path = teamCachePath(commonDir);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const db = new Database(path, { create: true });
  try {
    db.exec("PRAGMA busy_timeout = 3000; PRAGMA journal_mode = WAL;");
    db.exec(SCHEMA);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/** Runs `fn` on the team cache (created when missing). */
export function withTeamCache<T>(commonDir: string, fn: (db: Database) => T): T {
  const db = openTeamCache(commonDir);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** The same for work that awaits while the cache is open. */
export async function withTeamCacheAsync<T>(commonDir: string, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = openTeamCache(commonDir);
  try {
    return await fn(db);
  } finally {
    db.close();
  }
}

/** An entry as the server sent it, checked like a local one; null when it is not an entry. */
export function teamEntry(value: unknown): Entry | null {
  const r = v.safeParse(entrySchema(), value);
  return r.success ? r.output : null;
}

/** The cached entries of these commits, and the commits recently found to have none. */
export function cachedTeamEntries(db: Database, target: string, hashes: string[], nowMs: number): { found: Map<string, Entry>; misses: Set<string> } {
  const found = new Map<string, Entry>();
  const misses = new Set<string>();
  const entryQ = db.query<{ entry: string }, [string, string]>("SELECT entry FROM team_entries WHERE target = ? AND commit_hash = ?");
  const missQ = db.query<{ checked_ms: number }, [string, string]>("SELECT checked_ms FROM team_misses WHERE target = ? AND commit_hash = ?");
  for (const h of hashes) {
    const row = entryQ.get(target, h);
    const e = row ? teamEntry(JSON.parse(row.entry)) : null;
    if (e) found.set(h, e);
    else if ((missQ.get(target, h)?.checked_ms ?? -Infinity) > nowMs - MISS_TTL_MS) misses.add(h);
  }
  return { found, misses };
}

/** Keeps what the server answered: its entries, and the asked commits it had none for. */
export function storeTeamAnswer(db: Database, target: string, entries: Entry[], missed: string[], nowMs: number): void {
  const put = db.query("INSERT OR REPLACE INTO team_entries (target, commit_hash, entry, fetched_ms) VALUES (?, ?, ?, ?)");
  const unmiss = db.query("DELETE FROM team_misses WHERE target = ? AND commit_hash = ?");
  const miss = db.query("INSERT OR REPLACE INTO team_misses (target, commit_hash, checked_ms) VALUES (?, ?, ?)");
  db.transaction(() => {
    for (const e of entries) {
      put.run(target, e.commitHash, JSON.stringify(e), nowMs);
      unmiss.run(target, e.commitHash);
    }
    for (const h of missed) miss.run(target, h, nowMs);
  })();
}

/** Records a whole pull: what the server holds now replaces every cached miss of this backend. */
export function recordPull(db: Database, target: string, entries: number, nowMs: number): void {
  db.transaction(() => {
    db.query("DELETE FROM team_misses WHERE target = ?").run(target);
    db.query("INSERT OR REPLACE INTO team_pulls (target, pulled_ms, entries) VALUES (?, ?, ?)").run(target, nowMs, entries);
  })();
}

/**
 * Cached entries of this backend that changed any of `paths` with a time in [fromMs, toMs], newest first, at most
 * `limit`: the candidate parts of a squash or rebase-merge commit on a clone that holds none of them itself.
 */
export function teamCandidates(db: Database, target: string, paths: string[], fromMs: number, toMs: number, exclude: string, limit: number): { commitHash: string; ms: number; json: string }[] {
  const wanted = new Set(paths);
  const out: { commitHash: string; ms: number; json: string }[] = [];
  for (const row of db.query<{ commit_hash: string; entry: string }, [string]>("SELECT commit_hash, entry FROM team_entries WHERE target = ?").iterate(target)) {
    if (row.commit_hash === exclude) continue;
    const e = teamEntry(JSON.parse(row.entry));
    if (!e || !e.changedFiles.some((f) => wanted.has(f))) continue;
    const ms = Date.parse(e.committedAt ?? e.capturedAt);
    if (Number.isFinite(ms) && ms >= fromMs && ms <= toMs) out.push({ commitHash: row.commit_hash, ms, json: row.entry });
  }
  return out.sort((a, b) => b.ms - a.ms).slice(0, limit);
}

/** Every cached entry of this backend (a read of the cache only; none when the cache does not exist). */
export function allTeamEntries(commonDir: string, target: string): Entry[] {
  if (!existsSync(teamCachePath(commonDir))) return [];
  return withTeamCache(commonDir, (db) => {
    const out: Entry[] = [];
    for (const row of db.query<{ entry: string }, [string]>("SELECT entry FROM team_entries WHERE target = ?").iterate(target)) {
      const e = teamEntry(JSON.parse(row.entry));
      if (e) out.push(e);
    }
    return out;
  });
}
