import { KEY_OWNER } from "../query.ts";

/** The SQLite schema, as numbered migrations; each runs once, in order, in one transaction. */
export const MIGRATIONS: string[] = [
  /* 1 */ `
  CREATE TABLE projects (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
  );
  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    revoked_at TEXT
  );
  CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE entries (
    id INTEGER PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    commit_hash TEXT NOT NULL,
    session_id TEXT NOT NULL,
    branch TEXT NOT NULL,
    tag TEXT NOT NULL,
    captured_ms INTEGER NOT NULL,
    sort_ms INTEGER NOT NULL,
    group_root_id TEXT,
    group_id TEXT NOT NULL,
    group_auto INTEGER NOT NULL,
    has_user INTEGER NOT NULL,
    continuation INTEGER NOT NULL,
    request TEXT,
    summary TEXT NOT NULL,
    conversation TEXT NOT NULL,
    UNIQUE (project_id, commit_hash)
  );
  CREATE INDEX entries_by_time ON entries (project_id, sort_ms DESC, commit_hash DESC);
  CREATE INDEX entries_by_session ON entries (project_id, session_id, sort_ms);
  CREATE INDEX entries_by_group ON entries (project_id, group_id);
  CREATE INDEX entries_grouped_here ON entries (project_id, session_id) WHERE group_auto = 1;
  CREATE TABLE entry_files (
    entry_id INTEGER NOT NULL REFERENCES entries(id) ON DELETE CASCADE,
    project_id TEXT NOT NULL,
    path TEXT NOT NULL,
    PRIMARY KEY (entry_id, path)
  ) WITHOUT ROWID;
  CREATE INDEX entry_files_by_path ON entry_files (project_id, path);
  CREATE VIRTUAL TABLE entries_fts USING fts5 (text, tokenize = 'unicode61 remove_diacritics 2', detail = none);
  CREATE TABLE sessions (
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    content TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (project_id, session_id)
  );
  `,
  /* 2: sign-ins live on the server, so that logout and key revocation end them */ `
  CREATE TABLE sign_ins (
    id TEXT PRIMARY KEY,
    created_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL
  );
  CREATE INDEX sign_ins_by_expiry ON sign_ins (expires_ms);
  CREATE TABLE sign_in_keys (
    sign_in_id TEXT NOT NULL REFERENCES sign_ins(id) ON DELETE CASCADE,
    key_id TEXT NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
    PRIMARY KEY (sign_in_id, key_id)
  ) WITHOUT ROWID;
  CREATE INDEX sign_in_keys_by_key ON sign_in_keys (key_id);
  DELETE FROM settings WHERE name = 'cookie_secret';
  `,
  /* 3: who: the person a key was issued to; per entry the author the client claims and the owner of the key that sent it */ `
  ALTER TABLE api_keys ADD COLUMN owner TEXT NOT NULL DEFAULT '';
  ALTER TABLE entries ADD COLUMN author TEXT;
  ALTER TABLE entries ADD COLUMN key_owner TEXT;
  UPDATE entries SET author = json_extract(summary, '$.author') WHERE summary LIKE '%"author":%';
  `,
  /* 4 */ `
  -- the one order (SPEC §4): commit time, then when the entry was recorded, then the commit hash
  ALTER TABLE entries ADD COLUMN recorded_ms INTEGER NOT NULL DEFAULT 0;
  UPDATE entries SET recorded_ms = COALESCE(
    CAST(round((julianday(json_extract(summary, '$.recordedAt')) - 2440587.5) * 86400000) AS INTEGER), captured_ms);
  DROP INDEX entries_by_time;
  CREATE INDEX entries_by_time ON entries (project_id, sort_ms DESC, recorded_ms DESC, commit_hash DESC);
  DROP INDEX entries_by_session;
  CREATE INDEX entries_by_session ON entries (project_id, session_id, sort_ms, recorded_ms, commit_hash);
  `,
  /* 5: links from squash and rebase-merge commits to the entries they contain */ `
  CREATE TABLE links (
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    commit_hash TEXT NOT NULL,
    link TEXT NOT NULL,
    PRIMARY KEY (project_id, commit_hash)
  ) WITHOUT ROWID;
  `,
];

/** The one order of a session's or a group's entries, oldest first. */
const OLDEST_FIRST = "sort_ms, recorded_ms, commit_hash";

export const SQL = {
  /** a project's display settings live in the settings table, named `project:<id>:<setting>` */
  setting: `SELECT value FROM settings WHERE name = ?`,
  putSetting: `INSERT INTO settings (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
  deleteSetting: `DELETE FROM settings WHERE name = ?`,
  upsertEntry: `
    INSERT INTO entries (project_id, commit_hash, session_id, branch, tag, captured_ms, sort_ms, group_root_id, group_id,
      group_auto, has_user, continuation, request, summary, conversation, author, key_owner, recorded_ms)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, COALESCE(?8, ?2), ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
    ON CONFLICT (project_id, commit_hash) DO UPDATE SET
      session_id = excluded.session_id, branch = excluded.branch, tag = excluded.tag,
      captured_ms = excluded.captured_ms, sort_ms = excluded.sort_ms, recorded_ms = excluded.recorded_ms,
      group_root_id = excluded.group_root_id,
      group_id = excluded.group_id, group_auto = excluded.group_auto, has_user = excluded.has_user,
      continuation = excluded.continuation, request = excluded.request, summary = excluded.summary,
      conversation = excluded.conversation, author = excluded.author, key_owner = excluded.key_owner
    WHERE excluded.captured_ms >= entries.captured_ms OR entries.captured_ms > ?18
    RETURNING id`,
  capturedAt: `SELECT captured_ms AS capturedMs FROM entries WHERE project_id = ? AND commit_hash = ?`,
  deleteFts: `DELETE FROM entries_fts WHERE rowid = ?`,
  insertFts: `INSERT INTO entries_fts (rowid, text) VALUES (?, ?)`,
  deleteFiles: `DELETE FROM entry_files WHERE entry_id = ?`,
  insertFile: `INSERT OR IGNORE INTO entry_files (entry_id, project_id, path) VALUES (?, ?, ?)`,
  sessionHasAuto: `SELECT 1 FROM entries INDEXED BY entries_grouped_here WHERE project_id = ? AND session_id = ? AND group_auto = 1 LIMIT 1`,
  sessionMembers: `
    SELECT commit_hash AS commitHash, group_root_id AS groupRootId, group_auto AS auto, has_user AS hasUser,
      continuation FROM entries WHERE project_id = ? AND session_id = ? ORDER BY ${OLDEST_FIRST}`,
  setGroup: `UPDATE entries SET group_root_id = ?3, group_id = COALESCE(?3, commit_hash) WHERE project_id = ?1 AND commit_hash = ?2`,
  upsertSession: `
    INSERT INTO sessions (project_id, session_id, content, updated_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (project_id, session_id) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at`,
  transcript: `SELECT content FROM sessions WHERE project_id = ? AND session_id = ?`,
  createProject: `INSERT INTO projects (id, name, created_at) VALUES (?, ?, ?)`,
  projects: `
    SELECT p.id, p.name, p.created_at AS createdAt,
      (SELECT count(*) FROM api_keys k WHERE k.project_id = p.id AND k.revoked_at IS NULL) AS keys,
      (SELECT count(*) FROM entries e WHERE e.project_id = p.id) AS entries,
      (SELECT max(sort_ms) FROM entries e WHERE e.project_id = p.id) AS lastMs
    FROM projects p ORDER BY p.name`,
  project: `SELECT id, name, created_at AS createdAt FROM projects WHERE id = ?1 OR name = ?1`,
  createKey: `INSERT INTO api_keys (id, project_id, hash, prefix, label, owner, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  keys: `
    SELECT k.id, k.project_id AS projectId, p.name AS projectName, k.label, k.owner, k.prefix, k.created_at AS createdAt,
      k.revoked_at AS revokedAt
    FROM api_keys k JOIN projects p ON p.id = k.project_id
    WHERE ?1 IS NULL OR k.project_id = ?1 ORDER BY p.name, k.created_at`,
  revokeKey: `UPDATE api_keys SET revoked_at = ?2 WHERE (id = ?1 OR prefix = ?1) AND revoked_at IS NULL RETURNING id`,
  endSignInsOfKey: `DELETE FROM sign_ins WHERE id IN (SELECT sign_in_id FROM sign_in_keys WHERE key_id = ?)`,
  insertSignIn: `INSERT INTO sign_ins (id, created_ms, expires_ms) VALUES (?, ?, ?)`,
  insertSignInKey: `INSERT OR IGNORE INTO sign_in_keys (sign_in_id, key_id) VALUES (?, ?)`,
  endSignIn: `DELETE FROM sign_ins WHERE id = ?`,
  endExpiredSignIns: `DELETE FROM sign_ins WHERE expires_ms <= ?`,
  /** a key revoked after the sign-in was made (even while it was being made) ends the whole sign-in */
  signInKeys: `
    SELECT k.id AS keyId, k.project_id AS projectId, p.name AS projectName, ${KEY_OWNER} AS owner
    FROM sign_ins s JOIN sign_in_keys sk ON sk.sign_in_id = s.id JOIN api_keys k ON k.id = sk.key_id JOIN projects p ON p.id = k.project_id
    WHERE s.id = ?1 AND s.expires_ms > ?2 AND NOT EXISTS (
      SELECT 1 FROM sign_in_keys x JOIN api_keys y ON y.id = x.key_id WHERE x.sign_in_id = s.id AND y.revoked_at IS NOT NULL)`,
  keyByHash: `
    SELECT k.id AS keyId, k.project_id AS projectId, p.name AS projectName, ${KEY_OWNER} AS owner
    FROM api_keys k JOIN projects p ON p.id = k.project_id WHERE k.hash = ? AND k.revoked_at IS NULL`,
  sessionSpan: `SELECT min(sort_ms) AS startMs, max(sort_ms) AS endMs, count(*) AS commits FROM entries WHERE project_id = ? AND session_id = ?`,
  sessionFirstRequest: `SELECT request FROM entries WHERE project_id = ? AND session_id = ? AND request IS NOT NULL ORDER BY ${OLDEST_FIRST} LIMIT 1`,
  sessionLast: `SELECT summary FROM entries WHERE project_id = ? AND session_id = ? ORDER BY sort_ms DESC, recorded_ms DESC, commit_hash DESC LIMIT 1`,
  entryColumns: `commit_hash AS commitHash, group_root_id AS groupRootId, summary, sort_ms AS sortMs, recorded_ms AS recordedMs, request`,
  oldestFirst: OLDEST_FIRST,
} as const;
