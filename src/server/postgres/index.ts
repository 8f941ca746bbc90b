/** The PostgreSQL storage (for teams, and for several server processes on one database), through Bun.SQL. */
import { SQL as BunSQL } from "bun";
import { DAY_MS } from "../../core/dashboard/stats.ts";
import { regroup, type GroupMember } from "../grouping.ts";
import { entryOrder, likePrefix, searchIdsSql, timelineSql, type Dialect, type SearchPlan } from "../query.ts";
import type { EntryRow, KeyInfo, KeyOwner, Project, PutResult, Storage, StoredEntry } from "../storage.ts";
import { BLOCK_DAYS, MIGRATIONS, SQL } from "./schema.ts";

const dialect: Dialect = {
  placeholder: (n) => `$${n}`,
  match: (param) => `e.search @@ to_tsquery('simple', ${param})`,
  // each word as a quoted prefix lexeme, all required: the same meaning as the SQLite adapter's FTS5 query
  matchValue: (words) => words.map((w) => `'${w.replace(/['\\]/g, "")}':*`).join(" & "),
  // LIKE with a fixed prefix uses the text_pattern_ops index
  under: (bind, dir) => `f.path LIKE ${bind(likePrefix(`${dir}/`))} ESCAPE '\\'`,
  pathsTable: "entry_paths",
};

/** A search looks for a page among this many newest entries first … */
const SEARCH_NEWEST = 200;
/** … then among the entries the full-text index finds, when they are at most this many. */
const SEARCH_IDS = 20_000;

/** A migration lock id shared by every server process on the database. */
const MIGRATION_LOCK = 4180_2026;

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : v === null || v === undefined ? null : String(v));

/** Retries a transaction that PostgreSQL aborted to break a deadlock or a serialization conflict. */
async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const code = (err as { errno?: string; code?: string }).errno ?? (err as { code?: string }).code;
      if (attempt >= 5 || (code !== "40P01" && code !== "40001")) throw err;
      await Bun.sleep(10 * attempt);
    }
  }
}

type Tx = Pick<BunSQL, "unsafe">;
type SessionMember = GroupMember & { sessionId: string; sortMs: number; recordedMs: number };

/**
 * Locks the batch's sessions to group (those with server-grouped entries in the batch, `autoSessions`, or stored)
 * and groups their stored members together with the batch's rows, in the one order: the roots of the batch's rows,
 * and the stored entries whose group changes (an entry arriving late, before them).
 */
async function groupBeforeWrite(tx: Tx, projectId: string, sessions: string[], autoSessions: string[], batch: EntryRow[]) {
  const locked = (await tx.unsafe<{ id: string }[]>(SQL.lockSessions, [projectId, sessions, autoSessions])).map((r) => r.id);
  const inBatch = new Set(batch.map((r) => r.commitHash));
  const stored = (await tx.unsafe<SessionMember[]>(SQL.sessionMembers, [projectId, locked])).filter((m) => !inBatch.has(m.commitHash));
  const grouping = new Set(locked);
  const sent: SessionMember[] = batch
    .filter((r) => grouping.has(r.sessionId))
    .map((r) => ({
      sessionId: r.sessionId, commitHash: r.commitHash, groupRootId: r.groupRootId ?? null, auto: r.groupRootId === undefined,
      hasUser: r.hasUser, continuation: r.continuation, sortMs: r.sortMs, recordedMs: r.recordedMs,
    }));
  const members = [...stored, ...sent].sort(
    (a, b) => a.sortMs - b.sortMs || a.recordedMs - b.recordedMs || (a.commitHash < b.commitHash ? -1 : a.commitHash > b.commitHash ? 1 : 0),
  );
  const changed = [...Map.groupBy(members, (m) => m.sessionId).values()].flatMap((list) => regroup(list));
  return {
    roots: new Map(sent.map((m) => [m.commitHash, m.groupRootId])),
    changed: changed.filter((c) => !inBatch.has(c.commitHash)),
  };
}

async function setGroups(tx: Tx, projectId: string, changed: { commitHash: string; groupRootId: string | null }[]) {
  if (changed.length) await tx.unsafe(SQL.setGroups, [projectId, changed.map((c) => c.commitHash), changed.map((c) => c.groupRootId)]);
}

/** By commit hash: the one order in which every writer takes the entries' row locks. */
const byCommitHash = (rows: EntryRow[]) => [...rows].sort((a, b) => (a.commitHash < b.commitHash ? -1 : a.commitHash > b.commitHash ? 1 : 0));

type Upserted = { id: string; commitHash: string; inserted: boolean };

/**
 * The upsert of rows sorted by commit hash (`roots`: the groups found before the write, for rows the server groups);
 * a query not sent yet (Bun.SQL sends it when awaited or executed).
 */
function upsert(tx: Tx, projectId: string, sorted: EntryRow[], trustUntilMs: number, roots?: Map<string, string | null>) {
  const col = <K extends keyof EntryRow>(k: K) => sorted.map((r) => r[k]);
  return tx.unsafe<Upserted[]>(SQL.upsertEntries, [
    projectId, col("commitHash"), col("sessionId"), col("branch"), col("tag"), col("capturedMs"), col("sortMs"),
    sorted.map((r) => (roots?.has(r.commitHash) ? roots.get(r.commitHash)! : (r.groupRootId ?? null))),
    sorted.map((r) => r.groupRootId === undefined), col("hasUser"),
    col("continuation"), col("request"), col("summary"), col("conversation"), col("searchText"), col("author"),
    col("keyOwner"), col("recordedMs"), trustUntilMs,
  ]);
}

/** Of `sorted`, the rows the upsert skipped: older captures of entries the server holds in a newer version. */
async function conflictsOf(tx: Tx, projectId: string, sorted: EntryRow[], stored: Upserted[]): Promise<PutResult["conflicts"]> {
  if (stored.length === sorted.length) return [];
  const done = new Set(stored.map((x) => x.commitHash));
  const skipped = sorted.filter((r) => !done.has(r.commitHash)).map((r) => r.commitHash);
  const held = await tx.unsafe<{ commitHash: string; capturedMs: number }[]>(SQL.capturedAt, [projectId, skipped]);
  return held.map((h) => ({ commitHash: h.commitHash, storedCapturedMs: Number(h.capturedMs) }));
}

/** The stored rows' files (an updated row's replaced), as `[projectId, entry ids, paths]`. */
async function filesOf(tx: Tx, projectId: string, rows: EntryRow[], stored: Upserted[]): Promise<[string, string[], string[]]> {
  const byHash = new Map(rows.map((r) => [r.commitHash, r]));
  // a row just inserted has no files yet: only an updated one's are replaced
  const updated = stored.filter((x) => !x.inserted).map((x) => x.id);
  if (updated.length) await tx.unsafe(SQL.deleteFiles, [updated]);
  const files = stored.flatMap((x) => byHash.get(x.commitHash)!.files.map((path) => [x.id, path] as const));
  return [projectId, files.map((f) => f[0]), files.map((f) => f[1])];
}

/** Writes the stored rows' files and groups their sessions from what is stored now. */
async function filesAndGroups(tx: Tx, projectId: string, rows: EntryRow[], stored: Upserted[]): Promise<void> {
  const sessions = [...new Set(rows.map((r) => r.sessionId))].sort();
  const grouped = await tx.unsafe<{ id: string }[]>(SQL.insertFilesLockSessions, [...(await filesOf(tx, projectId, rows, stored)), sessions]);
  if (grouped.length === 0) return;
  const members = await tx.unsafe<SessionMember[]>(SQL.sessionMembers, [projectId, grouped.map((g) => g.id)]);
  await setGroups(tx, projectId, [...Map.groupBy(members, (m) => m.sessionId).values()].flatMap((list) => regroup(list)));
}

/** Connects to the database at `url` (postgres://…). */
export function openPostgres(url: string, opts: { max?: number } = {}): Storage {
  const sql = new BunSQL(url, { max: opts.max ?? 10, idleTimeout: 30 });
  const run = <T = any>(text: string, params: unknown[] = []) => sql.unsafe<T[]>(text, params as any[]);
  const cols = SQL.entryColumns;
  const keyInfo = (r: any): KeyInfo => ({ ...r, createdAt: iso(r.createdAt)!, revokedAt: iso(r.revokedAt) });
  const project = (r: any): Project => ({ id: r.id, name: r.name, createdAt: iso(r.createdAt)! });

  return {
    kind: "postgres",
    writesAside: true,
    async migrate() {
      await sql.begin(async (tx) => {
        await tx.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
        await tx.unsafe("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())");
        const done = new Set((await tx.unsafe<{ version: number }[]>("SELECT version FROM schema_migrations")).map((r) => r.version));
        for (let i = 0; i < MIGRATIONS.length; i++) {
          if (done.has(i + 1)) continue;
          await tx.unsafe(MIGRATIONS[i]!);
          await tx.unsafe("INSERT INTO schema_migrations (version) VALUES ($1)", [i + 1]);
        }
      });
    },
    async close() {
      await sql.close({ timeout: 5 });
    },

    async createProject(id, name) {
      return project((await run(SQL.createProject, [id, name]))[0]);
    },
    async projects() {
      return (await run(SQL.projects)).map((r) => ({
        ...project(r),
        keys: r.keys,
        entries: r.entries,
        lastEntryAt: r.lastMs === null ? null : new Date(r.lastMs).toISOString(),
      }));
    },
    async project(idOrName) {
      const [r] = await run(SQL.project, [idOrName]);
      return r ? project(r) : null;
    },
    async projectSetting(projectId, name) {
      const [r] = await run<{ value: string }>(SQL.setting, [`project:${projectId}:${name}`]);
      return r?.value ?? null;
    },
    async setProjectSetting(projectId, name, value) {
      if (value === null) await run(SQL.deleteSetting, [`project:${projectId}:${name}`]);
      else await run(SQL.putSetting, [`project:${projectId}:${name}`, value]);
    },
    async createKey(k) {
      await run(SQL.createKey, [k.id, k.projectId, k.hash, k.prefix, k.label, k.owner]);
    },
    async keys(projectId) {
      return (await run(SQL.keys, [projectId ?? null])).map(keyInfo);
    },
    async revokeKey(idOrPrefix) {
      const [row] = await run<{ id: string }>(SQL.revokeKey, [idOrPrefix]);
      if (!row) return null;
      return (await this.keys()).find((k) => k.id === row.id) ?? null;
    },
    async keyByHash(hash) {
      const [r] = await run<KeyOwner>(SQL.keyByHash, [hash]);
      return r ?? null;
    },
    async signIn(s, replaces) {
      await sql.begin(async (tx) => {
        await tx.unsafe(SQL.endExpiredSignIns, [s.createdMs]);
        if (replaces) await tx.unsafe(SQL.endSignIn, [replaces]);
        await tx.unsafe(SQL.insertSignIn, [s.id, s.createdMs, s.expiresMs]);
        await tx.unsafe(SQL.insertSignInKeys, [s.id, s.keyIds]);
      });
    },
    async signInKeys(id, nowMs) {
      return run<KeyOwner>(SQL.signInKeys, [id, nowMs]);
    },
    async signOut(id) {
      await run(SQL.endSignIn, [id]);
    },

    async putEntries(projectId, rows, trustUntilMs) {
      // one lock order for every writer (by commit hash, then by session) so that concurrent batches cannot deadlock
      const sorted = byCommitHash(rows);
      const sessions = [...new Set(rows.map((r) => r.sessionId))].sort();
      const autoSessions = [...new Set(rows.filter((r) => r.groupRootId === undefined).map((r) => r.sessionId))].sort();
      return retrying(() =>
        sql.begin(async (tx) => {
          // a batch with entries the server groups: their groups are found before the write, from the sessions' stored
          // members and the batch, so that each row is written once (an UPDATE after the insert wrote it twice)
          const early = autoSessions.length ? await groupBeforeWrite(tx, projectId, sessions, autoSessions, sorted) : null;
          const stored = await upsert(tx, projectId, sorted, trustUntilMs, early?.roots);
          const result: PutResult = { stored: stored.map((x) => x.commitHash), conflicts: await conflictsOf(tx, projectId, sorted, stored) };
          // grouped before the write and every row written as sent: what is left is the stored entries that changed group
          if (early && stored.length === sorted.length) {
            const fileArgs = await filesOf(tx, projectId, sorted, stored);
            if (fileArgs[1].length) await tx.unsafe(SQL.insertFiles, fileArgs);
            await setGroups(tx, projectId, early.changed);
            return result;
          }
          // else the sessions are grouped from what is stored now
          await filesAndGroups(tx, projectId, sorted, stored);
          return result;
        }),
      );
    },
    async putEntriesStreamed(projectId, chunks, trustUntilMs) {
      // the chunks taken so far: a transaction PostgreSQL aborted (a deadlock) is tried again with them
      const taken: EntryRow[][] = [];
      const source = chunks[Symbol.asyncIterator]();
      let ended = false;
      const chunkAt = async (i: number): Promise<EntryRow[] | undefined> => {
        if (i < taken.length) return taken[i];
        if (ended) return undefined;
        const next = await source.next();
        if (next.done) {
          ended = true;
          return undefined;
        }
        taken.push(byCommitHash(next.value));
        return taken[i];
      };
      // the first chunk is checked while the transaction begins
      const first = chunkAt(0);
      first.catch(() => {}); // awaited in the transaction; a failure is not unhandled meanwhile
      return retrying(() =>
        sql.begin(async (tx) => {
          const rows: EntryRow[] = [];
          const stored: Upserted[] = [];
          const conflicts: PutResult["conflicts"] = [];
          let writing: { chunk: EntryRow[]; query: Promise<Upserted[]> } | undefined;
          const settle = async () => {
            if (!writing) return;
            const { chunk, query } = writing;
            writing = undefined;
            const done = await query;
            stored.push(...done);
            conflicts.push(...(await conflictsOf(tx, projectId, chunk, done)));
          };
          for (let i = 0; ; i++) {
            // taking the next chunk checks it, while PostgreSQL writes the one before
            const chunk = await (i === 0 ? first : chunkAt(i));
            if (!chunk) break;
            if (chunk.length === 0) continue;
            const query = upsert(tx, projectId, chunk, trustUntilMs).execute();
            query.catch(() => {}); // awaited by settle; one failing with the transaction meanwhile is not unhandled
            await settle();
            writing = { chunk, query };
            rows.push(...chunk);
          }
          await settle();
          await filesAndGroups(tx, projectId, rows, stored);
          return { stored: stored.map((x) => x.commitHash), conflicts };
        }),
      );
    },
    async putSession(projectId, sessionId, content) {
      await run(SQL.upsertSession, [projectId, sessionId, content]);
    },

    async timeline(projectId, query) {
      // a search shows where it hit, which may be in the conversation
      const columns = `${cols}${query.words?.length ? ", e.conversation" : ""}`;
      const page = (plan?: SearchPlan) => {
        const { sql: text, params } = timelineSql(dialect, columns, projectId, query, plan);
        return run<StoredEntry>(text, params);
      };
      if (!query.words?.length) return page();
      // PostgreSQL cannot tell a rare word from a common one (a word prefix's estimate is a guess), and picks either
      // a walk in time order (for a rare word: the whole table) or the full-text index (for a common one: every
      // match fetched and sorted). So: first the newest entries, which hold a page of any common word ...
      const newest = await page({ newest: SEARCH_NEWEST });
      if (newest.length >= query.limit) return newest;
      // ... else the full-text index's ids, few for a rare word; a word too common for that walks the whole order
      const found = searchIdsSql(dialect, projectId, query.words, SEARCH_IDS + 1);
      const ids = await run<{ id: string | number }>(found.sql, found.params);
      return ids.length > SEARCH_IDS ? page() : page({ ids: ids.map((r) => Number(r.id)) });
    },
    async sessionFacts(projectId, ids) {
      if (ids.length === 0) return [];
      return (await run(SQL.sessionFacts, [projectId, ids])).map((r) => {
        const last = r.last ? (JSON.parse(r.last) as { agentType?: string; branch?: string }) : {};
        return {
          sessionId: r.sessionId,
          firstRequest: r.firstRequest ?? null,
          agentType: last.agentType ?? "OTHER",
          branch: last.branch ?? "",
          startMs: r.startMs,
          endMs: r.endMs,
          commits: r.commits,
        };
      });
    },
    async entriesByPrefix(projectId, prefix) {
      return run<StoredEntry>(
        `SELECT ${cols}, e.conversation FROM entries e WHERE e.project_id = $1 AND e.commit_hash >= $2 AND e.commit_hash < $3 ORDER BY e.commit_hash LIMIT 2`,
        [projectId, prefix, `${prefix}g`],
      );
    },
    async entriesByHashes(projectId, hashes) {
      if (hashes.length === 0) return [];
      return run<StoredEntry>(`SELECT ${cols}, e.conversation FROM entries e WHERE e.project_id = $1 AND e.commit_hash = ANY($2::text[])`, [projectId, hashes]);
    },
    async group(projectId, groupId) {
      return run<StoredEntry>(`SELECT ${cols} FROM entries e WHERE e.project_id = $1 AND e.group_id = $2 ORDER BY ${entryOrder("ASC")}`, [projectId, groupId]);
    },
    async sessionEntries(projectId, sessionId) {
      return run<StoredEntry>(
        `SELECT ${cols}, e.conversation FROM entries e WHERE e.project_id = $1 AND e.session_id = $2 ORDER BY ${entryOrder("ASC")}`,
        [projectId, sessionId],
      );
    },
    async transcript(projectId, sessionId) {
      const [r] = await run<{ content: string }>(SQL.transcript, [projectId, sessionId]);
      return r?.content ?? null;
    },
    async putLinks(projectId, links) {
      if (links.length === 0) return;
      await run(
        `INSERT INTO links (project_id, commit_hash, link) SELECT $1, r.h, r.l FROM unnest($2::text[], $3::text[]) AS r(h, l)
         ON CONFLICT (project_id, commit_hash) DO UPDATE SET link = excluded.link`,
        [projectId, links.map((l) => l.commitHash), links.map((l) => l.json)],
      );
    },
    async linksByPrefix(projectId, prefix) {
      return run<{ commitHash: string; json: string }>(
        `SELECT commit_hash AS "commitHash", link AS json FROM links WHERE project_id = $1 AND commit_hash >= $2 AND commit_hash < $3 ORDER BY commit_hash LIMIT 2`,
        [projectId, prefix, `${prefix}g`],
      );
    },
    async stats(projectId, sinceMs) {
      // whole days from the rollups, the part of a day before the first whole one entry by entry
      const firstDay = Math.ceil(sinceMs / DAY_MS);
      const args = [projectId, sinceMs, firstDay, firstDay * DAY_MS];
      const [totals] = await run<{ entries: number; sessions: number }>(SQL.stats.totals, args);
      const perTag = Object.fromEntries((await run<{ tag: string; n: number }>(SQL.stats.perTag, args)).map((r) => [r.tag, r.n]));
      const perDay = await run<{ day: string; count: number }>(SQL.stats.perDay, args);
      const topFiles = await run<{ path: string; count: number }>(SQL.stats.topFiles, [...args, Math.ceil(firstDay / BLOCK_DAYS)]);
      return { entries: totals!.entries, sessions: totals!.sessions, perTag, perDay: [...perDay], topFiles: [...topFiles] };
    },
  };
}
