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
  /**
   * a table of (project_id, path, the order's columns, entry_id) holding each entry's files and the folders above
   * them, with an index in the one order: a file filter then walks it newest first and stops at the page's end
   */
  pathsTable?: string;
}

/** How a text search finds its entries (PostgreSQL): the newest `newest` entries only, or these ids only. */
export interface SearchPlan {
  newest?: number;
  ids?: number[];
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

/**
 * The ordered, filtered, paged SELECT of the timeline (columns as the caller names them). A search `plan` (PostgreSQL)
 * either looks for the words among the newest entries only (a walk in the one order that stops early: fast for a
 * common word) or among the entries of the ids the full-text index found (fast for a rare word).
 */
export function timelineSql(d: Dialect, columns: string, projectId: string, q: TimelineQuery, plan: SearchPlan = {}): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const bind = (v: unknown) => {
    params.push(v);
    return d.placeholder(params.length);
  };
  const where = [`e.project_id = ${bind(projectId)}`];
  // the file filter on the paths table: its rows are in the one order, so the walk starts there (alias p)
  const byPath = d.pathsTable !== undefined && q.file !== undefined && q.file !== "";
  const o = byPath ? "p" : "e";
  if (byPath) where.push(`p.project_id = ${bind(projectId)} AND p.path = ${bind(q.file)}`);
  if (q.tags?.length) where.push(`e.tag IN (${q.tags.map(bind).join(", ")})`);
  if (q.sessionPrefix) where.push(`e.session_id LIKE ${bind(likePrefix(q.sessionPrefix))} ESCAPE '\\'`);
  if (q.branch) where.push(`e.branch = ${bind(q.branch)}`);
  if (q.author) {
    const part = bind(`%${likeEscape(q.author.toLowerCase())}%`);
    where.push(`(LOWER(e.author) LIKE ${part} ESCAPE '\\' OR LOWER(e.key_owner) LIKE ${part} ESCAPE '\\')`);
  }
  if (q.sinceMs !== undefined) where.push(`${o}.sort_ms >= ${bind(q.sinceMs)}`);
  if (q.untilMs !== undefined) where.push(`${o}.sort_ms < ${bind(q.untilMs)}`);
  if (q.file !== undefined && !byPath) where.push(fileCondition(d, bind, projectId, q.file));
  if (q.after) {
    const { sortMs, recordedMs, commitHash } = q.after;
    where.push(`(${o}.sort_ms, ${o}.recorded_ms, ${o}.commit_hash) < (${bind(sortMs)}, ${bind(recordedMs)}, ${bind(commitHash)})`);
  }
  const from = byPath ? `${d.pathsTable} p JOIN entries e ON e.id = p.entry_id` : "entries e";
  const words = q.words?.length ? q.words : null;
  const match = () => d.match(bind(d.matchValue(words!)));
  if (words && plan.ids) where.push(`e.id = ANY(${bind(plan.ids)}::bigint[])`);
  else if (words && !plan.newest) where.push(match());
  const order = entryOrder("DESC", o);
  if (words && plan.newest && !plan.ids) {
    const newest = `SELECT e.* FROM ${from} WHERE ${where.join(" AND ")} ORDER BY ${order} LIMIT ${bind(plan.newest)}`;
    return { sql: `SELECT ${columns} FROM (${newest}) e WHERE ${match()} ORDER BY ${entryOrder("DESC")} LIMIT ${bind(q.limit)}`, params };
  }
  return { sql: `SELECT ${columns} FROM ${from} WHERE ${where.join(" AND ")} ORDER BY ${order} LIMIT ${bind(q.limit)}`, params };
}

/** The ids of the entries holding every word, from the full-text index alone, up to `max` (PostgreSQL). */
export function searchIdsSql(d: Dialect, projectId: string, words: string[], max: number): { sql: string; params: unknown[] } {
  return { sql: `SELECT e.id FROM entries e WHERE e.project_id = ${d.placeholder(1)} AND ${d.match(d.placeholder(2))} LIMIT ${d.placeholder(3)}`, params: [projectId, d.matchValue(words), max] };
}

/** Entries that touch `path` or anything under it ("" = every entry with files). */
export function fileCondition(d: Dialect, bind: (v: unknown) => string, projectId: string, path: string): string {
  // every entry with files: a look at each entry's own files (by the key), as the walk in the one order goes
  if (path === "") return `EXISTS (SELECT 1 FROM entry_files f WHERE f.entry_id = e.id)`;
  const files = () => `SELECT f.entry_id FROM entry_files f WHERE f.project_id = ${bind(projectId)}`;
  // two index searches, the file itself and the range under it (an OR of both would scan the project's files)
  return `e.id IN (${files()} AND f.path = ${bind(path)} UNION ALL ${files()} AND ${d.under(bind, path)})`;
}
