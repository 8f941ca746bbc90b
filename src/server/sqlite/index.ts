/** The SQLite storage (default): one file, WAL, bun:sqlite's synchronous statements inside short transactions. */
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { ftsQuery } from "../../core/history/filters.ts";
import { regroup, type GroupMember } from "../grouping.ts";
import { timelineSql, type Dialect } from "../query.ts";
import type { KeyInfo, KeyOwner, PutResult, Storage, StoredEntry } from "../storage.ts";
import { MIGRATIONS, SQL } from "./schema.ts";

const dialect: Dialect = {
  placeholder: (n) => `?${n}`,
  match: (param) => `e.id IN (SELECT rowid FROM entries_fts WHERE entries_fts MATCH ${param})`,
  matchValue: (words) => ftsQuery(words.join(" ")) ?? '""',
  // a range on the path index ("dir/" ≤ path < "dir0", as "0" follows "/"); SQLite's LIKE would scan instead
  under: (bind, dir) => `(f.path >= ${bind(`${dir}/`)} AND f.path < ${bind(`${dir}0`)})`,
};

const now = () => new Date().toISOString();

/** Opens (creating when needed) the database file at `path`. */
export function openSqlite(path: string): Storage {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  // WAL + NORMAL: a committed transaction survives the process being killed (only a power cut may lose the last ones)
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA busy_timeout = 5000");
  // the default 2 MB page cache makes every insert into the hash-keyed indexes a read once the table outgrows it
  db.exec("PRAGMA cache_size = -65536");
  db.exec("PRAGMA foreign_keys = ON");

  const q = <T>(sql: string) => db.query<T, any[]>(sql);
  const entryCols = SQL.entryColumns;

  const storage: Storage = {
    kind: "sqlite",
    writesAside: false,
    async migrate() {
      db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
      db.transaction(() => {
        const done = new Set(q<{ version: number }>("SELECT version FROM schema_migrations").all().map((r) => r.version));
        MIGRATIONS.forEach((sql, i) => {
          if (done.has(i + 1)) return;
          db.exec(sql);
          q("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)").run(i + 1, now());
        });
      }).immediate();
    },
    async close() {
      db.close();
    },

    async createProject(id, name) {
      const createdAt = now();
      q(SQL.createProject).run(id, name, createdAt);
      return { id, name, createdAt };
    },
    async projects() {
      return q<any>(SQL.projects)
        .all()
        .map((r) => ({ id: r.id, name: r.name, createdAt: r.createdAt, keys: r.keys, entries: r.entries, lastEntryAt: r.lastMs === null ? null : new Date(r.lastMs).toISOString() }));
    },
    async project(idOrName) {
      return q<any>(SQL.project).get(idOrName) ?? null;
    },
    async projectSetting(projectId, name) {
      return q<{ value: string }>(SQL.setting).get(`project:${projectId}:${name}`)?.value ?? null;
    },
    async setProjectSetting(projectId, name, value) {
      if (value === null) q(SQL.deleteSetting).run(`project:${projectId}:${name}`);
      else q(SQL.putSetting).run(`project:${projectId}:${name}`, value);
    },
    async createKey(k) {
      q(SQL.createKey).run(k.id, k.projectId, k.hash, k.prefix, k.label, k.owner, now());
    },
    async keys(projectId) {
      return q<KeyInfo>(SQL.keys).all(projectId ?? null);
    },
    async revokeKey(idOrPrefix) {
      const row = db.transaction(() => {
        const r = q<{ id: string }>(SQL.revokeKey).get(idOrPrefix, now());
        if (r) q(SQL.endSignInsOfKey).run(r.id);
        return r;
      }).immediate();
      if (!row) return null;
      return q<KeyInfo>(SQL.keys).all(null).find((k) => k.id === row.id) ?? null;
    },
    async keyByHash(hash) {
      return q<KeyOwner>(SQL.keyByHash).get(hash) ?? null;
    },
    async signIn(s, replaces) {
      db.transaction(() => {
        q(SQL.endExpiredSignIns).run(s.createdMs);
        if (replaces) q(SQL.endSignIn).run(replaces);
        q(SQL.insertSignIn).run(s.id, s.createdMs, s.expiresMs);
        const key = q(SQL.insertSignInKey);
        for (const k of s.keyIds) key.run(s.id, k);
      }).immediate();
    },
    async signInKeys(id, nowMs) {
      return q<KeyOwner>(SQL.signInKeys).all(id, nowMs);
    },
    async signOut(id) {
      q(SQL.endSignIn).run(id);
    },

    async putEntries(projectId, rows, trustUntilMs) {
      const upsert = q<{ id: number }>(SQL.upsertEntry);
      const capturedOf = q<{ capturedMs: number }>(SQL.capturedAt);
      const delFts = q(SQL.deleteFts);
      const addFts = q(SQL.insertFts);
      const delFiles = q(SQL.deleteFiles);
      const addFile = q(SQL.insertFile);
      const result: PutResult = { stored: [], conflicts: [] };
      db.transaction(() => {
        const sessions = new Set<string>();
        for (const r of rows) {
          sessions.add(r.sessionId);
          const stored = upsert.get(
            projectId, r.commitHash, r.sessionId, r.branch, r.tag, r.capturedMs, r.sortMs, r.groupRootId ?? null,
            r.groupRootId === undefined ? 1 : 0, r.hasUser ? 1 : 0, r.continuation ? 1 : 0, r.request, r.summary, r.conversation,
            r.author, r.keyOwner, r.recordedMs, trustUntilMs,
          );
          if (!stored) {
            // an older capture of an entry the server has in a newer version
            result.conflicts.push({ commitHash: r.commitHash, storedCapturedMs: capturedOf.get(projectId, r.commitHash)!.capturedMs });
            continue;
          }
          result.stored.push(r.commitHash);
          delFts.run(stored.id);
          addFts.run(stored.id, r.searchText);
          delFiles.run(stored.id);
          for (const f of r.files) addFile.run(stored.id, projectId, f);
        }
        for (const s of sessions) regroupSession(projectId, s);
      }).immediate();
      return result;
    },
    async putSession(projectId, sessionId, content) {
      q(SQL.upsertSession).run(projectId, sessionId, content, now());
    },

    async timeline(projectId, query) {
      // a search shows where it hit, which may be in the conversation
      const columns = `e.${entryCols.replace(/, /g, ", e.")}${query.words?.length ? ", e.conversation" : ""}`;
      const { sql, params } = timelineSql(dialect, columns, projectId, query);
      return q<StoredEntry>(sql).all(...params);
    },
    async sessionFacts(projectId, ids) {
      // a few indexed lookups per session: cheaper than one grouped query over every entry of busy sessions
      const span = q<{ startMs: number | null; endMs: number; commits: number }>(SQL.sessionSpan);
      const first = q<{ request: string }>(SQL.sessionFirstRequest);
      const last = q<{ summary: string }>(SQL.sessionLast);
      return ids.flatMap((id) => {
        const s = span.get(projectId, id);
        if (!s || s.startMs === null) return [];
        const latest = JSON.parse(last.get(projectId, id)!.summary) as { agentType?: string; branch?: string };
        return [
          {
            sessionId: id,
            firstRequest: first.get(projectId, id)?.request ?? null,
            agentType: latest.agentType ?? "OTHER",
            branch: latest.branch ?? "",
            startMs: s.startMs,
            endMs: s.endMs,
            commits: s.commits,
          },
        ];
      });
    },
    async entriesByPrefix(projectId, prefix) {
      return q<StoredEntry>(
        `SELECT ${entryCols}, conversation FROM entries WHERE project_id = ? AND commit_hash >= ? AND commit_hash < ? ORDER BY commit_hash LIMIT 2`,
      ).all(projectId, prefix, `${prefix}g`);
    },
    async entriesByHashes(projectId, hashes) {
      if (hashes.length === 0) return [];
      return q<StoredEntry>(
        `SELECT ${entryCols}, conversation FROM entries WHERE project_id = ? AND commit_hash IN (${hashes.map(() => "?").join(", ")})`,
      ).all(projectId, ...hashes);
    },
    async group(projectId, groupId) {
      return q<StoredEntry>(`SELECT ${entryCols} FROM entries WHERE project_id = ? AND group_id = ? ORDER BY ${SQL.oldestFirst}`).all(projectId, groupId);
    },
    async sessionEntries(projectId, sessionId) {
      return q<StoredEntry>(`SELECT ${entryCols}, conversation FROM entries WHERE project_id = ? AND session_id = ? ORDER BY ${SQL.oldestFirst}`).all(
        projectId,
        sessionId,
      );
    },
    async transcript(projectId, sessionId) {
      return q<{ content: string }>(SQL.transcript).get(projectId, sessionId)?.content ?? null;
    },
    async putLinks(projectId, links) {
      const put = q("INSERT INTO links (project_id, commit_hash, link) VALUES (?, ?, ?) ON CONFLICT (project_id, commit_hash) DO UPDATE SET link = excluded.link");
      for (const l of links) put.run(projectId, l.commitHash, l.json);
    },
    async linksByPrefix(projectId, prefix) {
      return q<{ commitHash: string; json: string }>(
        "SELECT commit_hash AS commitHash, link AS json FROM links WHERE project_id = ? AND commit_hash >= ? AND commit_hash < ? ORDER BY commit_hash LIMIT 2",
      ).all(projectId, prefix, `${prefix}g`);
    },
    async stats(projectId, sinceMs) {
      const totals = q<{ entries: number; sessions: number }>(
        "SELECT count(*) AS entries, count(DISTINCT session_id) AS sessions FROM entries WHERE project_id = ? AND sort_ms >= ?",
      ).get(projectId, sinceMs)!;
      const perTag = Object.fromEntries(
        q<{ tag: string; n: number }>("SELECT tag, count(*) AS n FROM entries WHERE project_id = ? AND sort_ms >= ? GROUP BY tag")
          .all(projectId, sinceMs).map((r) => [r.tag, r.n]),
      );
      const perDay = q<{ day: string; count: number }>(
        `SELECT strftime('%Y-%m-%d', sort_ms / 1000, 'unixepoch') AS day, count(*) AS count FROM entries
         WHERE project_id = ? AND sort_ms >= ? GROUP BY day ORDER BY day`,
      ).all(projectId, sinceMs);
      const topFiles = q<{ path: string; count: number }>(
        `SELECT f.path, count(*) AS count FROM entry_files f JOIN entries e ON e.id = f.entry_id
         WHERE f.project_id = ? AND e.sort_ms >= ? GROUP BY f.path ORDER BY count DESC, f.path LIMIT 10`,
      ).all(projectId, sinceMs);
      return { entries: totals.entries, sessions: totals.sessions, perTag, perDay, topFiles };
    },
  };

  /** Regroups a session's server-grouped entries; a session whose client grouped every entry is left alone. */
  function regroupSession(projectId: string, sessionId: string): void {
    if (!q(SQL.sessionHasAuto).get(projectId, sessionId)) return;
    const members = q<GroupMember>(SQL.sessionMembers)
      .all(projectId, sessionId)
      .map((m) => ({ ...m, auto: Boolean(m.auto), hasUser: Boolean(m.hasUser), continuation: Boolean(m.continuation) }));
    const set = q(SQL.setGroup);
    for (const c of regroup(members)) set.run(projectId, c.commitHash, c.groupRootId);
  }

  return storage;
}
