/** Reads entries and sessions out of the index for the history views. */
import type { Database } from "bun:sqlite";
import { AiflareError } from "../../errors.ts";
import type { Entry } from "../../store/entry.ts";
import type { HistoryFilter } from "./filters.ts";

/** What the list view needs of one entry. */
export interface EntryRow {
  commitHash: string;
  sessionId: string;
  groupRoot: string | null;
  tag: string;
  agentType: string;
  title: string;
  capturedMs: number;
  prompts: string[];
  /** the agent's summary is still missing (`summaryStatus: "pending"`) */
  pending?: boolean;
}

/** What a session heading shows. */
export interface SessionInfo {
  sessionId: string;
  firstRequest: string | null;
  fromMs: number;
  toMs: number;
  entryCount: number;
}

interface Where {
  sql: string;
  params: (string | number)[];
}

function whereClause(filter: HistoryFilter): Where {
  const parts: string[] = [];
  const params: (string | number)[] = [];
  if (filter.session) {
    parts.push("substr(e.session_id, 1, ?) = ?");
    params.push(filter.session.length, filter.session);
  }
  if (filter.tags?.length) {
    parts.push(`e.tag IN (${filter.tags.map(() => "?").join(", ")})`);
    params.push(...filter.tags);
  }
  if (filter.branch) {
    parts.push("e.branch = ?");
    params.push(filter.branch);
  }
  if (filter.sinceMs !== undefined) {
    parts.push("e.captured_ms >= ?");
    params.push(filter.sinceMs);
  }
  if (filter.untilMs !== undefined) {
    parts.push("e.captured_ms < ?");
    params.push(filter.untilMs);
  }
  if (filter.file) {
    // The file itself, or anything below it when it names a directory ('0' sorts right after '/').
    parts.push("e.id IN (SELECT entry_id FROM entry_files WHERE path = ? OR (path >= ? AND path < ?))");
    params.push(filter.file, `${filter.file}/`, `${filter.file}0`);
  }
  if (filter.match) {
    parts.push("e.id IN (SELECT rowid FROM entries_fts WHERE entries_fts MATCH ?)");
    params.push(filter.match);
  }
  return { sql: parts.length ? `WHERE ${parts.join(" AND ")}` : "", params };
}

function runFiltered<T>(db: Database, select: string, filter: HistoryFilter): T[] {
  const where = whereClause(filter);
  const limit = filter.limit > 0 ? ` LIMIT ${filter.limit}` : "";
  try {
    return db.query(`${select} ${where.sql} ORDER BY e.captured_ms DESC, e.id DESC${limit}`).all(...where.params) as T[];
  } catch (err) {
    if (filter.match && /fts5|syntax/i.test(String((err as Error).message))) {
      throw new AiflareError("INVALID_ARGUMENT", `--grep could not be searched: ${(err as Error).message}`, { cause: err });
    }
    throw err;
  }
}

/** Entries matching `filter`, newest first. */
export function listEntries(db: Database, filter: HistoryFilter): EntryRow[] {
  type Row = { h: string; s: string; g: string | null; t: string; a: string; ti: string; ms: number; p: string; st: string | null };
  const rows = runFiltered<Row>(
    db,
    `SELECT e.commit_hash AS h, e.session_id AS s, e.group_root AS g, e.tag AS t, e.agent_type AS a, e.title AS ti,
            e.captured_ms AS ms, e.prompts AS p,
            (SELECT json_extract(d.json, '$.summaryStatus') FROM entry_docs d WHERE d.entry_id = e.id) AS st
       FROM entries e`,
    filter,
  );
  return rows.map((r) => ({
    commitHash: r.h,
    sessionId: r.s,
    groupRoot: r.g,
    tag: r.t,
    agentType: r.a,
    title: r.ti,
    capturedMs: r.ms,
    prompts: r.p === "[]" ? [] : (JSON.parse(r.p) as string[]),
    pending: r.st === "pending",
  }));
}

/** How many entries match `filter` (its limit ignored). */
export function countMatching(db: Database, filter: HistoryFilter): number {
  const where = whereClause(filter);
  return (db.query(`SELECT count(*) AS n FROM entries e ${where.sql}`).get(...where.params) as { n: number }).n;
}

/** Full entries matching `filter`, newest first (for `--json`). */
export function listFullEntries(db: Database, filter: HistoryFilter): Entry[] {
  return runFiltered<{ j: string }>(db, "SELECT d.json AS j FROM entries e JOIN entry_docs d ON d.entry_id = e.id", filter).map((r) => JSON.parse(r.j) as Entry);
}

/** Heading facts for each of `sessionIds`: first request and the time span of all its entries. */
export function sessionInfo(db: Database, sessionIds: string[]): Map<string, SessionInfo> {
  const out = new Map<string, SessionInfo>();
  const wanted = new Set(sessionIds);
  type Span = { id: string; f: number; t: number; n: number; r: string | null };
  const spans: Span[] = [];
  const spanSql = `SELECT e.session_id AS id, min(e.captured_ms) AS f, max(e.captured_ms) AS t, count(*) AS n,
    (SELECT first_request FROM sessions s WHERE s.session_id = e.session_id) AS r FROM entries e`;
  if (wanted.size > 50) {
    // One pass over the session index beats hundreds of lookups.
    for (const row of db.query(`${spanSql} GROUP BY e.session_id`).all() as Span[]) if (wanted.has(row.id)) spans.push(row);
  } else {
    const one = db.query(`${spanSql} WHERE e.session_id = ? GROUP BY e.session_id`);
    for (const id of wanted) {
      const row = one.get(id) as Span | null;
      if (row) spans.push(row);
    }
  }
  const firstPrompt = db.query(
    "SELECT prompts AS p FROM entries WHERE session_id = ? AND prompts != '[]' ORDER BY captured_ms, id LIMIT 1",
  );
  for (const s of spans) {
    let first = s.r;
    if (!first) {
      const p = firstPrompt.get(s.id) as { p: string } | null;
      first = p ? ((JSON.parse(p.p) as string[])[0] ?? null) : null;
    }
    out.set(s.id, { sessionId: s.id, firstRequest: first, fromMs: s.f, toMs: s.t, entryCount: s.n });
  }
  return out;
}

/** Number of entries in the index. */
export function countEntries(db: Database): number {
  return (db.query("SELECT count(*) AS n FROM entries").get() as { n: number }).n;
}

/** Full hashes of indexed entries whose hash starts with `prefix`. */
export function entriesByPrefix(db: Database, prefix: string): string[] {
  const p = prefix.toLowerCase();
  return (
    db
      .query("SELECT commit_hash AS h FROM entries WHERE commit_hash >= ? AND commit_hash < ? LIMIT 10")
      .all(p, `${p}g`) as { h: string }[]
  ).map((r) => r.h);
}

/** The stored entry of `commitHash`, or null. */
export function getEntry(db: Database, commitHash: string): Entry | null {
  const row = db.query("SELECT d.json AS j FROM entries e JOIN entry_docs d ON d.entry_id = e.id WHERE e.commit_hash = ?").get(commitHash) as { j: string } | null;
  return row ? (JSON.parse(row.j) as Entry) : null;
}

/** Entries of the given commits that the index holds (hash → entry). */
export function getEntries(db: Database, hashes: string[]): Map<string, Entry> {
  const out = new Map<string, Entry>();
  const q = db.query("SELECT d.json AS j FROM entries e JOIN entry_docs d ON d.entry_id = e.id WHERE e.commit_hash = ?");
  for (const h of hashes) {
    const row = q.get(h) as { j: string } | null;
    if (row) out.set(h, JSON.parse(row.j) as Entry);
  }
  return out;
}

/** The members of the group `rootHash` leads (root first, then in capture order). */
export function groupMembers(db: Database, rootHash: string): { commitHash: string; title: string; capturedMs: number }[] {
  return (
    db
      .query(
        `SELECT commit_hash AS h, title AS t, captured_ms AS ms FROM entries
         WHERE commit_hash = ?1 OR group_root = ?1 ORDER BY (commit_hash = ?1) DESC, captured_ms, id`,
      )
      .all(rootHash) as { h: string; t: string; ms: number }[]
  ).map((r) => ({ commitHash: r.h, title: r.t, capturedMs: r.ms }));
}

/** The conversation delta of an entry, line by line. */
export function conversationOf(db: Database, commitHash: string): { role: string; content: string }[] {
  return db
    .query(
      `SELECT c.role AS role, c.content AS content FROM conversation c JOIN entries e ON e.id = c.entry_id
       WHERE e.commit_hash = ? ORDER BY c.seq`,
    )
    .all(commitHash) as { role: string; content: string }[];
}
