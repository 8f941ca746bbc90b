/**
 * The timeline's WHERE clause, shared by both adapters: the filters are the same SQL in SQLite and PostgreSQL except
 * for placeholders and full-text search, which each adapter's dialect supplies.
 */
import type { TimelineQuery } from "./storage.ts";

export interface Dialect {
  placeholder(n: number): string;
  /** a condition on `e` that holds when the entry contains every word (the value is bound at `param`) */
  match(param: string): string;
  matchValue(words: string[]): string;
  /** a condition on `f.path` that holds for paths under `dir/`, with an index the database can use for it */
  under(bind: (v: unknown) => string, dir: string): string;
}

/** The person a key (`k`) was issued to, in both dialects; NULL when the operator named nobody. */
export const KEY_OWNER = "NULLIF(k.owner, '')";

/**
 * The one order of entries (SPEC §4), the same in both adapters and in the local index: commit time, then when
 * each entry was recorded, then the commit hash. `e` is the alias of the entries table ("" for none).
 */
export function entryOrder(dir: "ASC" | "DESC", e = "e"): string {
  const p = e ? `${e}.` : "";
  return `${p}sort_ms ${dir}, ${p}recorded_ms ${dir}, ${p}commit_hash ${dir}`;
}

/** Escapes LIKE's wildcards; pair with `ESCAPE '\'`. */
export function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** A LIKE pattern for text starting with `text`. */
export function likePrefix(text: string): string {
  return `${likeEscape(text)}%`;
}

/** The ordered, filtered, paged SELECT of the timeline (columns as the caller names them). */
export function timelineSql(d: Dialect, columns: string, projectId: string, q: TimelineQuery): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const bind = (v: unknown) => {
    params.push(v);
    return d.placeholder(params.length);
  };
  const where = [`e.project_id = ${bind(projectId)}`];
  if (q.tags?.length) where.push(`e.tag IN (${q.tags.map(bind).join(", ")})`);
  if (q.sessionPrefix) where.push(`e.session_id LIKE ${bind(likePrefix(q.sessionPrefix))} ESCAPE '\\'`);
  if (q.branch) where.push(`e.branch = ${bind(q.branch)}`);
  if (q.author) {
    const part = bind(`%${likeEscape(q.author.toLowerCase())}%`);
    where.push(`(LOWER(e.author) LIKE ${part} ESCAPE '\\' OR LOWER(e.key_owner) LIKE ${part} ESCAPE '\\')`);
  }
  if (q.sinceMs !== undefined) where.push(`e.sort_ms >= ${bind(q.sinceMs)}`);
  if (q.untilMs !== undefined) where.push(`e.sort_ms < ${bind(q.untilMs)}`);
  if (q.file !== undefined) where.push(fileCondition(d, bind, projectId, q.file));
  if (q.words?.length) where.push(d.match(bind(d.matchValue(q.words))));
  if (q.after) {
    const { sortMs, recordedMs, commitHash } = q.after;
    where.push(`(e.sort_ms, e.recorded_ms, e.commit_hash) < (${bind(sortMs)}, ${bind(recordedMs)}, ${bind(commitHash)})`);
  }
  const sql = `SELECT ${columns} FROM entries e WHERE ${where.join(" AND ")} ORDER BY ${entryOrder("DESC")} LIMIT ${bind(q.limit)}`;
  return { sql, params };
}

/** Entries that touch `path` or anything under it ("" = every entry with files). */
export function fileCondition(d: Dialect, bind: (v: unknown) => string, projectId: string, path: string): string {
  const files = () => `SELECT f.entry_id FROM entry_files f WHERE f.project_id = ${bind(projectId)}`;
  if (path === "") return `e.id IN (${files()})`;
  // two index searches, the file itself and the range under it (an OR of both would scan the project's files)
  return `e.id IN (${files()} AND f.path = ${bind(path)} UNION ALL ${files()} AND ${d.under(bind, path)})`;
}
