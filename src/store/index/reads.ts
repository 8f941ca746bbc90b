/** Reads of the index that the dashboard needs beyond the history views. */
import type { Database } from "bun:sqlite";

/** The stored (redacted) transcript of a session, JSONL, or null when none was stored. */
export function sessionTranscript(db: Database, sessionId: string): string | null {
  const row = db.query("SELECT content AS c FROM sessions WHERE session_id = ?").get(sessionId) as { c: string } | null;
  return row?.c ?? null;
}

/** The paths changed by the most entries captured at or after `sinceMs`, most first. */
export function topChangedFiles(db: Database, sinceMs: number, limit: number): { path: string; count: number }[] {
  return db
    .query(
      `SELECT f.path AS path, count(*) AS count FROM entry_files f JOIN entries e ON e.id = f.entry_id
       WHERE e.captured_ms >= ? GROUP BY f.path ORDER BY count DESC, f.path LIMIT ?`,
    )
    .all(sinceMs, limit) as { path: string; count: number }[];
}

/** The distinct branches entries were committed on, most used first. */
export function entryBranches(db: Database): string[] {
  return (db.query("SELECT branch AS b FROM entries GROUP BY branch ORDER BY count(*) DESC").all() as { b: string }[]).map(
    (r) => r.b,
  );
}
