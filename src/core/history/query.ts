/** Reads entries and sessions out of the index for the history views. */
import type { Database } from "bun:sqlite";
import { AiflareError } from "../../errors.ts";
import type { Entry } from "../../store/entry.ts";
import { entryJson, entryOrder, sessionFirstRequest } from "../../store/index-db.ts";
import { conversationLines, type ConversationLine } from "../../util/jsonl.ts";
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
  /** who ran the session (`Name <email>`), when recorded */
  author?: string;
  /** no one wrote its why: pending, or imported from a past session */
  lacksWhy?: boolean;
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

function whereClause(filter: PageFilter): Where {
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
  if (filter.author) {
    parts.push("instr(lower(e.author), lower(?)) > 0");
    params.push(filter.author);
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
  if (filter.before) {
    // a page after the one that ended at this entry (newest first)
    parts.push("(e.captured_ms, e.recorded_ms, e.commit_hash) < (?, ?, ?)");
    params.push(filter.before.ms, filter.before.recordedMs, filter.before.commitHash);
  }
  return { sql: parts.length ? `WHERE ${parts.join(" AND ")}` : "", params };
}

/** A filter with the position a timeline page continues from. */
export type PageFilter = HistoryFilter & { before?: PagePosition };

/** An entry's place in the one order of entries (SPEC §4). */
export interface PagePosition {
  ms: number;
  recordedMs: number;
  commitHash: string;
}

function filteredQuery(db: Database, select: string, filter: PageFilter) {
  const where = whereClause(filter);
  const limit = filter.limit > 0 ? ` LIMIT ${filter.limit}` : "";
  try {
    return { query: db.query(`${select} ${where.sql} ORDER BY ${entryOrder("DESC", "e")}${limit}`), params: where.params };
  } catch (err) {
    throw grepError(err, filter);
  }
}

function grepError(err: unknown, filter: HistoryFilter): unknown {
  if (filter.match && /fts5|syntax/i.test(String((err as Error).message))) {
    return new AiflareError("INVALID_ARGUMENT", `--grep could not be searched: ${(err as Error).message}`, { cause: err });
  }
  return err;
}

function runFiltered<T>(db: Database, select: string, filter: PageFilter): T[] {
  const { query, params } = filteredQuery(db, select, filter);
  try {
    return query.all(...params) as T[];
  } catch (err) {
    throw grepError(err, filter);
  }
}

/** Entries matching `filter`, newest first. */
export function listEntries(db: Database, filter: HistoryFilter): EntryRow[] {
  type Row = { h: string; s: string; g: string | null; t: string; a: string; ti: string; ms: number; p: string; st: string | null; au: string | null };
  const rows = runFiltered<Row>(
    db,
    `SELECT e.commit_hash AS h, e.session_id AS s, e.group_root AS g, e.tag AS t, e.agent_type AS a, e.title AS ti,
            e.captured_ms AS ms, e.prompts AS p,
            e.summary_status AS st, e.author AS au
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
    ...(r.au ? { author: r.au } : {}),
    lacksWhy: r.st === "pending" || r.st === "imported",
  }));
}

/** How many entries match `filter` (its limit ignored). */
export function countMatching(db: Database, filter: HistoryFilter): number {
  const where = whereClause(filter);
  return (db.query(`SELECT count(*) AS n FROM entries e ${where.sql}`).get(...where.params) as { n: number }).n;
}

const DOC_SELECT = "SELECT e.blob_oid AS o FROM entries e";

/** An entry read from its blob (the index keeps its version, not its text). */
function entryOf(db: Database, oid: string): Entry | null {
  const json = entryJson(db, oid);
  return json === null ? null : (JSON.parse(json) as Entry);
}

/** Full entries matching `filter`, newest first (for `--json`). */
export function listFullEntries(db: Database, filter: HistoryFilter): Entry[] {
  return runFiltered<{ o: string }>(db, DOC_SELECT, filter).flatMap((r) => entryOf(db, r.o) ?? []);
}

/** The versions (blob ids) of the entries matching `filter`, newest first: read them with `streamEntryJson`. */
export function entryBlobs(db: Database, filter: HistoryFilter): string[] {
  return runFiltered<{ o: string }>(db, DOC_SELECT, filter).map((r) => r.o);
}

/** An opaque timeline cursor for the entry a page ended with. */
export function pageCursor(at: PagePosition): string {
  return Buffer.from(`${at.ms}:${at.recordedMs}:${at.commitHash}`).toString("base64url");
}

/** Reads a cursor made by `pageCursor`; null when it is not one. */
export function readPageCursor(cursor: string): PagePosition | null {
  const m = /^(-?\d+):(-?\d+):([0-9a-f]{40})$/.exec(Buffer.from(cursor, "base64url").toString());
  return m ? { ms: Number(m[1]), recordedMs: Number(m[2]), commitHash: m[3]! } : null;
}

/**
 * One page of the timeline (newest first) for `filter` (session, tags, file or directory, text, dates),
 * continuing after `cursor` when given; `nextCursor` is null on the last page.
 */
export function timelinePage(
  db: Database,
  filter: HistoryFilter,
  cursor?: string | null,
): { entries: Entry[]; nextCursor: string | null } {
  const before = cursor ? readPageCursor(cursor) : null;
  if (cursor && !before) throw new AiflareError("INVALID_ARGUMENT", "That page cursor is not valid; start from the first page.");
  const limit = filter.limit > 0 ? filter.limit : 50;
  const rows = runFiltered<{ o: string } & PagePosition>(
    db,
    "SELECT e.blob_oid AS o, e.captured_ms AS ms, e.recorded_ms AS recordedMs, e.commit_hash AS commitHash FROM entries e",
    { ...filter, limit: limit + 1, ...(before ? { before } : {}) },
  );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    entries: page.flatMap((r) => entryOf(db, r.o) ?? []),
    nextCursor: rows.length > limit && last ? pageCursor(last) : null,
  };
}

/** Entries that changed `path` (a file, or anything under it when it is a directory), newest first. */
export function entriesForPath(db: Database, path: string, limit = 0): Entry[] {
  return listFullEntries(db, { file: path.replace(/\/+$/, ""), limit });
}

/** The commits whose entries changed `path` (or anything under it), newest first, with their time (ms). */
export function entryCommitsForPath(db: Database, path: string): { commitHash: string; ms: number }[] {
  return runFiltered<{ h: string; ms: number }>(db, "SELECT e.commit_hash AS h, e.captured_ms AS ms FROM entries e", {
    file: path.replace(/\/+$/, ""),
    limit: 0,
  }).map((r) => ({ commitHash: r.h, ms: r.ms }));
}

/** Entries of one session (full id or its first characters), in commit order. */
export function entriesOfSession(db: Database, session: string): Entry[] {
  return listFullEntries(db, { session, limit: 0 }).reverse();
}

/** Entries whose text matches `match` (an FTS5 query, see `ftsQuery`), newest first. */
export function entriesMatching(db: Database, match: string, limit = 0): Entry[] {
  return listFullEntries(db, { match, limit });
}

/** Heading facts for each of `sessionIds`: first request and the time span of all its entries. */
export function sessionInfo(db: Database, sessionIds: string[]): Map<string, SessionInfo> {
  const out = new Map<string, SessionInfo>();
  const wanted = new Set(sessionIds);
  type Span = { id: string; f: number; t: number; n: number };
  const spans: Span[] = [];
  const spanSql = `SELECT e.session_id AS id, min(e.captured_ms) AS f, max(e.captured_ms) AS t, count(*) AS n FROM entries e`;
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
    `SELECT prompts AS p FROM entries WHERE session_id = ? AND prompts != '[]' ORDER BY ${entryOrder("ASC")} LIMIT 1`,
  );
  for (const s of spans) {
    let first = sessionFirstRequest(db, s.id);
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
  return getEntries(db, [commitHash]).get(commitHash) ?? null;
}

/** Entries of the given commits that the index holds (hash → entry). */
export function getEntries(db: Database, hashes: string[]): Map<string, Entry> {
  const out = new Map<string, Entry>();
  const q = db.query(`${DOC_SELECT} WHERE e.commit_hash = ?`);
  for (const h of hashes) {
    const row = q.get(h) as { o: string } | null;
    const entry = row ? entryOf(db, row.o) : null;
    if (entry) out.set(h, entry);
  }
  return out;
}

/** The members of the group `rootHash` leads (root first, then in capture order). */
export function groupMembers(db: Database, rootHash: string): { commitHash: string; title: string; capturedMs: number }[] {
  return (
    db
      .query(
        `SELECT commit_hash AS h, title AS t, captured_ms AS ms FROM entries
         WHERE commit_hash = ?1 OR group_root = ?1 ORDER BY (commit_hash = ?1) DESC, ${entryOrder("ASC")}`,
      )
      .all(rootHash) as { h: string; t: string; ms: number }[]
  ).map((r) => ({ commitHash: r.h, title: r.t, capturedMs: r.ms }));
}

/** The conversation delta of an entry, line by line (read from the entry itself). */
export function conversationOf(db: Database, commitHash: string): ConversationLine[] {
  const entry = getEntry(db, commitHash);
  return entry ? conversationLines(entry.conversationSnippet) : [];
}
