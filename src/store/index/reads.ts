/** Reads of the index that the dashboard needs beyond the history views. */
import type { Database } from "bun:sqlite";

/** The paths changed by the most entries captured at or after `sinceMs`, most first. */
export function topChangedFiles(db: Database, sinceMs: number, limit: number): { path: string; count: number }[] {
  return db
    .query(
      `SELECT f.path AS path, count(*) AS count FROM entry_files f JOIN entries e ON e.id = f.entry_id
       WHERE e.captured_ms >= ? GROUP BY f.path ORDER BY count DESC, f.path LIMIT ?`,
    )
    .all(sinceMs, limit) as { path: string; count: number }[];
}

