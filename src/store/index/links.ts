/**
 * The index's side of links (store/links.ts): a cache of each looked-at commit's link, negative answers
 * included, and the candidate entries a link is computed from. The cache table is made on first use and, like
 * the rest of the index, can be dropped at any time: links are read again from the timeline branch.
 */
import type { Database } from "bun:sqlite";
import { parseLink, type Link } from "../links.ts";
import { entryJsons, inChunks } from "./sync-state.ts";

const made = new WeakSet<Database>();

function ensureTable(db: Database): void {
  if (made.has(db)) return;
  // max_entry: the newest entry row when a negative answer was cached; a newer entry of a commit made before
  // commit_ms (the latest time a part can have) may change it
  db.run(
    "CREATE TABLE IF NOT EXISTS links_cache (commit_hash TEXT PRIMARY KEY, link TEXT, max_entry INTEGER NOT NULL, commit_ms INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID",
  );
  made.add(db);
}

function maxEntryId(db: Database): number {
  return (db.query("SELECT coalesce(max(id), 0) AS m FROM entries").get() as { m: number }).m;
}

/** What the index knows of a commit's link: a link, "none" (computed, nothing matched, still current) or undefined. */
export function cachedLink(db: Database, commitHash: string): Link | "none" | undefined {
  ensureTable(db);
  const row = db.query("SELECT link, max_entry AS m, commit_ms AS ms FROM links_cache WHERE commit_hash = ?").get(commitHash) as
    | { link: string | null; m: number; ms: number }
    | null;
  if (!row) return undefined;
  if (row.link !== null) return parseLink(row.link) ?? undefined;
  // entries of later commits cannot be its parts: only an entry old enough makes the miss worth another look
  const newer = db.query("SELECT 1 FROM entries WHERE id > ? AND captured_ms <= ? LIMIT 1").get(row.m, row.ms);
  return newer ? undefined : "none";
}

/**
 * Caches a commit's link (null: nothing matched; `latestPartMs`: the latest time an entry could have and still be
 * one of its parts). Ignores an index that cannot be written.
 */
export function cacheLink(db: Database, commitHash: string, link: Link | null, latestPartMs = 0): void {
  ensureTable(db);
  try {
    db.query("INSERT OR REPLACE INTO links_cache (commit_hash, link, max_entry, commit_ms) VALUES (?, ?, ?, ?)").run(
      commitHash,
      link ? JSON.stringify(link) : null,
      maxEntryId(db),
      latestPartMs,
    );
  } catch {
    // a read-only index: the answer is computed again next time
  }
}

/** A candidate part: an indexed entry's commit, its time and its JSON. */
export interface LinkCandidate {
  commitHash: string;
  ms: number;
  /** when the entry was recorded: after `ms`, what orders commits of the same second (SPEC §4) */
  recordedMs?: number;
  json: string;
}

/**
 * Entries that changed any of `paths` with a time in [fromMs, toMs], newest first, at most `limit`, with their JSON
 * (one `git cat-file` for all).
 */
export function linkCandidates(db: Database, paths: string[], fromMs: number, toMs: number, exclude: string, limit: number): LinkCandidate[] {
  const rows = inChunks([...new Set(paths)], (ph, part) =>
    db
      .query(
        `SELECT DISTINCT e.commit_hash AS h, e.blob_oid AS o, e.captured_ms AS ms, e.recorded_ms AS rec FROM entry_files f JOIN entries e ON e.id = f.entry_id
         WHERE f.path IN (${ph}) AND e.captured_ms BETWEEN ? AND ? AND e.commit_hash != ?`,
      )
      .all(...part, fromMs, toMs, exclude) as { h: string; o: string; ms: number; rec: number }[],
  );
  const unique = new Map(rows.map((r) => [r.h, r]));
  const chosen = [...unique.values()].sort((a, b) => b.ms - a.ms).slice(0, limit);
  const texts = entryJsons(db, chosen.map((r) => r.o));
  return chosen.flatMap((r) => {
    const json = texts.get(r.o);
    return json ? [{ commitHash: r.h, ms: r.ms, recordedMs: r.rec, json }] : [];
  });
}

/** For each of `parts`, the linked commit (squash, rebase-merge copy) that contains it, where the index knows one. */
export function landingCommits(db: Database, parts: string[]): Map<string, string> {
  ensureTable(db);
  const out = new Map<string, string>();
  const wanted = new Set(parts);
  if (wanted.size === 0) return out;
  const rows = db.query("SELECT commit_hash AS h, link FROM links_cache WHERE link IS NOT NULL").all() as { h: string; link: string }[];
  for (const row of rows) {
    const link = parseLink(row.link);
    for (const p of link?.parts ?? []) if (wanted.has(p.commitHash) && !out.has(p.commitHash)) out.set(p.commitHash, row.h);
  }
  return out;
}
