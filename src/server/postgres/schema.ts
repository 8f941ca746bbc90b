import { KEY_OWNER } from "../query.ts";

/** The PostgreSQL schema, as numbered migrations; each runs once, in order, under an advisory lock. */
export const MIGRATIONS: string[] = [
  /* 1 */ `
  CREATE TABLE projects (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  );
  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    revoked_at TIMESTAMPTZ
  );
  CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE entries (
    id BIGSERIAL PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    commit_hash TEXT NOT NULL,
    session_id TEXT NOT NULL,
    branch TEXT NOT NULL,
    tag TEXT NOT NULL,
    captured_ms BIGINT NOT NULL,
    sort_ms BIGINT NOT NULL,
    group_root_id TEXT,
    group_id TEXT NOT NULL,
    group_auto BOOLEAN NOT NULL,
    has_user BOOLEAN NOT NULL,
    continuation BOOLEAN NOT NULL,
    request TEXT,
    summary TEXT NOT NULL,
    conversation TEXT NOT NULL,
    search TSVECTOR NOT NULL,
    UNIQUE (project_id, commit_hash)
  );
  CREATE INDEX entries_by_time ON entries (project_id, sort_ms DESC, commit_hash DESC);
  CREATE INDEX entries_by_session ON entries (project_id, session_id, sort_ms);
  CREATE INDEX entries_by_group ON entries (project_id, group_id);
  CREATE INDEX entries_search ON entries USING GIN (search);
  CREATE INDEX entries_grouped_here ON entries (project_id, session_id) WHERE group_auto;
  CREATE TABLE entry_files (
    entry_id BIGINT NOT NULL REFERENCES entries(id) ON DELETE CASCADE,
    project_id TEXT NOT NULL,
    path TEXT NOT NULL,
    PRIMARY KEY (entry_id, path)
  );
  CREATE INDEX entry_files_by_path ON entry_files (project_id, path text_pattern_ops);
  CREATE TABLE sessions (
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    content TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, session_id)
  );
  `,
  /* 2: sign-ins live on the server, so that logout and key revocation end them on every server process */ `
  CREATE TABLE sign_ins (
    id TEXT PRIMARY KEY,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL
  );
  CREATE INDEX sign_ins_by_expiry ON sign_ins (expires_ms);
  CREATE TABLE sign_in_keys (
    sign_in_id TEXT NOT NULL REFERENCES sign_ins(id) ON DELETE CASCADE,
    key_id TEXT NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
    PRIMARY KEY (sign_in_id, key_id)
  );
  CREATE INDEX sign_in_keys_by_key ON sign_in_keys (key_id);
  DELETE FROM settings WHERE name = 'cookie_secret';
  `,
  /* 3: who: the person a key was issued to; per entry the author the client claims and the owner of the key that sent it */ `
  ALTER TABLE api_keys ADD COLUMN owner TEXT NOT NULL DEFAULT '';
  ALTER TABLE entries ADD COLUMN author TEXT;
  ALTER TABLE entries ADD COLUMN key_owner TEXT;
  UPDATE entries SET author = summary::jsonb ->> 'author' WHERE summary LIKE '%"author":%';
  `,
  /* 4 */ `
  -- the one order (SPEC §4): commit time, then when the entry was recorded, then the commit hash
  ALTER TABLE entries ADD COLUMN recorded_ms BIGINT NOT NULL DEFAULT 0;
  UPDATE entries SET recorded_ms = COALESCE(
    CASE WHEN summary::jsonb->>'recordedAt' ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$'
      THEN round(extract(epoch FROM (summary::jsonb->>'recordedAt')::timestamptz) * 1000)::bigint END, captured_ms);
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
  );
  `,
  /* 6: reads that stay fast at a million entries */ `
  -- the indexes this rebuilds and builds are built in memory rather than in many passes over temp files
  SET LOCAL maintenance_work_mem = '512MB';
  -- the search vector without positions (the search asks for words and word prefixes, never for phrases): smaller
  -- rows and index checks; the table is rewritten once, compactly
  ALTER TABLE entries ALTER COLUMN search TYPE TSVECTOR USING strip(search);

  -- each entry's files and every folder above them, in the one order: a file filter walks its path newest first
  CREATE FUNCTION aiflare_path_and_folders(p TEXT) RETURNS SETOF TEXT LANGUAGE sql IMMUTABLE AS $$
    SELECT p UNION SELECT array_to_string((string_to_array(p, '/'))[1:k], '/')
    FROM generate_series(1, cardinality(string_to_array(p, '/')) - 1) AS k
  $$;
  CREATE TABLE entry_paths (
    project_id TEXT NOT NULL,
    path TEXT NOT NULL,
    sort_ms BIGINT NOT NULL,
    recorded_ms BIGINT NOT NULL,
    commit_hash TEXT NOT NULL,
    entry_id BIGINT NOT NULL REFERENCES entries(id) ON DELETE CASCADE,
    PRIMARY KEY (project_id, path, sort_ms, recorded_ms, commit_hash)
  );
  CREATE INDEX entry_paths_by_entry ON entry_paths (entry_id);
  INSERT INTO entry_paths (project_id, path, sort_ms, recorded_ms, commit_hash, entry_id)
  SELECT DISTINCT e.project_id, d.path, e.sort_ms, e.recorded_ms, e.commit_hash, e.id
  FROM entry_files f JOIN entries e ON e.id = f.entry_id CROSS JOIN LATERAL aiflare_path_and_folders(f.path) AS d(path);

  -- counts per UTC day, kept in the writing transaction (under the rows' locks, so exactly once with any number of
  -- writers): what the stats read instead of every entry of the window. Entries leave only with their project.
  CREATE TABLE stats_days (
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    day INTEGER NOT NULL,
    tag TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (project_id, day, tag)
  );
  CREATE TABLE stats_sessions (
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    day INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (project_id, day, session_id)
  );
  CREATE TABLE stats_files (
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    day INTEGER NOT NULL,
    path TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (project_id, day, path)
  );
  CREATE FUNCTION aiflare_day(ms BIGINT) RETURNS INTEGER LANGUAGE sql IMMUTABLE AS $$ SELECT floor(ms / 86400000.0)::int $$;
  INSERT INTO stats_days SELECT project_id, aiflare_day(sort_ms), tag, count(*) FROM entries GROUP BY 1, 2, 3;
  INSERT INTO stats_sessions SELECT project_id, aiflare_day(sort_ms), session_id, count(*) FROM entries GROUP BY 1, 2, 3;
  INSERT INTO stats_files SELECT e.project_id, aiflare_day(e.sort_ms), f.path, count(*)
    FROM entry_files f JOIN entries e ON e.id = f.entry_id GROUP BY 1, 2, 3;

  -- each statement's changes, summed, applied in key order (one lock order for every writer)
  CREATE FUNCTION aiflare_entries_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM new_rows) THEN RETURN NULL; END IF;
    INSERT INTO stats_days SELECT project_id, aiflare_day(sort_ms), tag, count(*) FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
      ON CONFLICT (project_id, day, tag) DO UPDATE SET n = stats_days.n + excluded.n;
    INSERT INTO stats_sessions SELECT project_id, aiflare_day(sort_ms), session_id, count(*) FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
      ON CONFLICT (project_id, day, session_id) DO UPDATE SET n = stats_sessions.n + excluded.n;
    RETURN NULL;
  END $$;
  CREATE FUNCTION aiflare_entries_updated() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM new_rows) THEN RETURN NULL; END IF;
    INSERT INTO stats_days SELECT project_id, day, tag, sum(d) FROM (
        SELECT project_id, aiflare_day(sort_ms) AS day, tag, 1 AS d FROM new_rows
        UNION ALL SELECT project_id, aiflare_day(sort_ms), tag, -1 FROM old_rows) x
      GROUP BY 1, 2, 3 HAVING sum(d) <> 0 ORDER BY 1, 2, 3
      ON CONFLICT (project_id, day, tag) DO UPDATE SET n = stats_days.n + excluded.n;
    INSERT INTO stats_sessions SELECT project_id, day, session_id, sum(d) FROM (
        SELECT project_id, aiflare_day(sort_ms) AS day, session_id, 1 AS d FROM new_rows
        UNION ALL SELECT project_id, aiflare_day(sort_ms), session_id, -1 FROM old_rows) x
      GROUP BY 1, 2, 3 HAVING sum(d) <> 0 ORDER BY 1, 2, 3
      ON CONFLICT (project_id, day, session_id) DO UPDATE SET n = stats_sessions.n + excluded.n;
    -- an entry that moved to another day takes its files' counts along, and its paths their place in the order
    INSERT INTO stats_files SELECT project_id, day, path, sum(d) FROM (
        SELECT n.project_id, aiflare_day(n.sort_ms) AS day, f.path, 1 AS d
        FROM new_rows n JOIN old_rows o ON o.id = n.id JOIN entry_files f ON f.entry_id = n.id
        WHERE aiflare_day(n.sort_ms) <> aiflare_day(o.sort_ms)
        UNION ALL SELECT o.project_id, aiflare_day(o.sort_ms), f.path, -1
        FROM new_rows n JOIN old_rows o ON o.id = n.id JOIN entry_files f ON f.entry_id = n.id
        WHERE aiflare_day(n.sort_ms) <> aiflare_day(o.sort_ms)) x
      GROUP BY 1, 2, 3 HAVING sum(d) <> 0 ORDER BY 1, 2, 3
      ON CONFLICT (project_id, day, path) DO UPDATE SET n = stats_files.n + excluded.n;
    UPDATE entry_paths p SET sort_ms = n.sort_ms, recorded_ms = n.recorded_ms
      FROM new_rows n JOIN old_rows o ON o.id = n.id
      WHERE p.entry_id = n.id AND (n.sort_ms <> o.sort_ms OR n.recorded_ms <> o.recorded_ms);
    RETURN NULL;
  END $$;
  CREATE FUNCTION aiflare_files_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM new_rows) THEN RETURN NULL; END IF;
    INSERT INTO stats_files SELECT e.project_id, aiflare_day(e.sort_ms), f.path, count(*)
      FROM new_rows f JOIN entries e ON e.id = f.entry_id GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
      ON CONFLICT (project_id, day, path) DO UPDATE SET n = stats_files.n + excluded.n;
    INSERT INTO entry_paths (project_id, path, sort_ms, recorded_ms, commit_hash, entry_id)
      SELECT DISTINCT e.project_id, d.path, e.sort_ms, e.recorded_ms, e.commit_hash, e.id
      FROM new_rows f JOIN entries e ON e.id = f.entry_id CROSS JOIN LATERAL aiflare_path_and_folders(f.path) AS d(path)
      ON CONFLICT DO NOTHING;
    RETURN NULL;
  END $$;
  CREATE FUNCTION aiflare_files_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM old_rows) THEN RETURN NULL; END IF;
    INSERT INTO stats_files SELECT e.project_id, aiflare_day(e.sort_ms), f.path, -count(*)
      FROM old_rows f JOIN entries e ON e.id = f.entry_id GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
      ON CONFLICT (project_id, day, path) DO UPDATE SET n = stats_files.n + excluded.n;
    DELETE FROM entry_paths p USING (SELECT DISTINCT entry_id FROM old_rows) o WHERE p.entry_id = o.entry_id;
    INSERT INTO entry_paths (project_id, path, sort_ms, recorded_ms, commit_hash, entry_id)
      SELECT DISTINCT e.project_id, d.path, e.sort_ms, e.recorded_ms, e.commit_hash, e.id
      FROM entry_files f JOIN entries e ON e.id = f.entry_id CROSS JOIN LATERAL aiflare_path_and_folders(f.path) AS d(path)
      WHERE f.entry_id IN (SELECT entry_id FROM old_rows)
      ON CONFLICT DO NOTHING;
    RETURN NULL;
  END $$;
  CREATE TRIGGER entries_inserted AFTER INSERT ON entries REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION aiflare_entries_inserted();
  CREATE TRIGGER entries_updated AFTER UPDATE ON entries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION aiflare_entries_updated();
  CREATE TRIGGER files_inserted AFTER INSERT ON entry_files REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION aiflare_files_inserted();
  CREATE TRIGGER files_deleted AFTER DELETE ON entry_files REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION aiflare_files_deleted();
  `,
  /* 7: a long stats window's top files from blocks of 32 days; the file filter has entry_paths */ `
  -- a year's top files summed ~45 rows per file (the days up to the first whole block, then the blocks) instead of
  -- 365; the blocks follow the day counts through triggers on stats_files, in key order like the day counts
  CREATE TABLE stats_file_blocks (
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    block INTEGER NOT NULL,
    path TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (project_id, block, path)
  );
  INSERT INTO stats_file_blocks SELECT project_id, day >> 5, path, sum(n) FROM stats_files GROUP BY 1, 2, 3;
  CREATE FUNCTION aiflare_file_days_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO stats_file_blocks SELECT project_id, day >> 5, path, sum(n) FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
      ON CONFLICT (project_id, block, path) DO UPDATE SET n = stats_file_blocks.n + excluded.n;
    RETURN NULL;
  END $$;
  CREATE FUNCTION aiflare_file_days_updated() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO stats_file_blocks SELECT project_id, block, path, sum(d) FROM (
        SELECT project_id, day >> 5 AS block, path, n AS d FROM new_rows
        UNION ALL SELECT project_id, day >> 5, path, -n FROM old_rows) x
      GROUP BY 1, 2, 3 HAVING sum(d) <> 0 ORDER BY 1, 2, 3
      ON CONFLICT (project_id, block, path) DO UPDATE SET n = stats_file_blocks.n + excluded.n;
    RETURN NULL;
  END $$;
  CREATE TRIGGER file_days_inserted AFTER INSERT ON stats_files REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION aiflare_file_days_inserted();
  CREATE TRIGGER file_days_updated AFTER UPDATE ON stats_files REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION aiflare_file_days_updated();
  -- entry_paths serves the file filter (the path index of entry_files was used by nothing else)
  DROP INDEX entry_files_by_path;
  -- the search vector compressed with lz4 where the server has it: pglz leaves it whole (its lexemes are too varied to
  -- save the quarter pglz asks for), lz4 takes a tenth off (on 10,000 entries, heap and TOAST 5.0% smaller; lz4 on
  -- the text columns too saved less, 4.6%: it compresses text worse); for rows written from now on
  DO $$ BEGIN
    EXECUTE 'ALTER TABLE entries ALTER COLUMN search SET COMPRESSION lz4';
  EXCEPTION WHEN feature_not_supported OR syntax_error THEN NULL;
  END $$;
  `,
];

/** Days in a block of stats_file_blocks (block = day >> 5). */
export const BLOCK_DAYS = 32;

/**
 * The rows the triggers keep beside the entries of project $1, made in one pass each from its entries and files:
 * what a bulk load (triggers off, indexes built after) writes instead, the same rows as the triggers'.
 */
export const DERIVED: string[] = [
  `INSERT INTO entry_paths (project_id, path, sort_ms, recorded_ms, commit_hash, entry_id)
   SELECT DISTINCT e.project_id, d.path, e.sort_ms, e.recorded_ms, e.commit_hash, e.id
   FROM entry_files f JOIN entries e ON e.id = f.entry_id CROSS JOIN LATERAL aiflare_path_and_folders(f.path) AS d(path)
   WHERE e.project_id = $1`,
  `INSERT INTO stats_days SELECT project_id, aiflare_day(sort_ms), tag, count(*) FROM entries WHERE project_id = $1 GROUP BY 1, 2, 3`,
  `INSERT INTO stats_sessions SELECT project_id, aiflare_day(sort_ms), session_id, count(*) FROM entries WHERE project_id = $1 GROUP BY 1, 2, 3`,
  `INSERT INTO stats_files SELECT e.project_id, aiflare_day(e.sort_ms), f.path, count(*)
   FROM entry_files f JOIN entries e ON e.id = f.entry_id WHERE e.project_id = $1 GROUP BY 1, 2, 3`,
  `INSERT INTO stats_file_blocks SELECT project_id, day >> 5, path, sum(n) FROM stats_files WHERE project_id = $1 GROUP BY 1, 2, 3`,
];

/** The tables DERIVED fills. */
export const DERIVED_TABLES = ["entry_paths", "stats_days", "stats_sessions", "stats_files", "stats_file_blocks"];

/**
 * Of the sessions `sessions` (sorted), those with an entry the server groups (or for which `also` holds), each locked
 * in that order: one lock order for every writer.
 */
function lockGrouped(sessions: string, also: string): string {
  return `SELECT s.id FROM unnest(${sessions}::text[]) AS s(id) CROSS JOIN LATERAL (SELECT pg_advisory_xact_lock(hashtext($1 || ':' || s.id))) l
    WHERE ${also} OR EXISTS (SELECT 1 FROM entries WHERE project_id = $1 AND session_id = s.id AND group_auto)`;
}

/** The one order of a session's or a group's entries, oldest first. */
const OLDEST_FIRST = "sort_ms, recorded_ms, commit_hash";

export const SQL = {
  /** a project's display settings live in the settings table, named `project:<id>:<setting>` */
  setting: `SELECT value FROM settings WHERE name = $1`,
  putSetting: `INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
  deleteSetting: `DELETE FROM settings WHERE name = $1`,
  /** the whole batch in one statement: one array per column, unnested into rows */
  upsertEntries: `
    INSERT INTO entries (project_id, commit_hash, session_id, branch, tag, captured_ms, sort_ms, group_root_id, group_id,
      group_auto, has_user, continuation, request, summary, conversation, search, author, key_owner, recorded_ms)
    SELECT $1, r.commit_hash, r.session_id, r.branch, r.tag, r.captured_ms, r.sort_ms, r.group_root_id,
      COALESCE(r.group_root_id, r.commit_hash), r.group_auto, r.has_user, r.continuation, r.request, r.summary,
      r.conversation, strip(to_tsvector('simple', r.search)), r.author, r.key_owner, r.recorded_ms
    FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::text[], $9::boolean[],
      $10::boolean[], $11::boolean[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::bigint[])
      AS r(commit_hash, session_id, branch, tag, captured_ms, sort_ms, group_root_id, group_auto, has_user, continuation,
        request, summary, conversation, search, author, key_owner, recorded_ms)
    ORDER BY r.commit_hash
    ON CONFLICT (project_id, commit_hash) DO UPDATE SET
      session_id = excluded.session_id, branch = excluded.branch, tag = excluded.tag,
      captured_ms = excluded.captured_ms, sort_ms = excluded.sort_ms, recorded_ms = excluded.recorded_ms,
      group_root_id = excluded.group_root_id,
      group_id = excluded.group_id, group_auto = excluded.group_auto, has_user = excluded.has_user,
      continuation = excluded.continuation, request = excluded.request, summary = excluded.summary,
      conversation = excluded.conversation, search = excluded.search, author = excluded.author,
      key_owner = excluded.key_owner
    WHERE excluded.captured_ms >= entries.captured_ms OR entries.captured_ms > $19
    RETURNING id, commit_hash AS "commitHash", (xmax = 0) AS inserted`,
  capturedAt: `SELECT commit_hash AS "commitHash", captured_ms::float8 AS "capturedMs" FROM entries WHERE project_id = $1 AND commit_hash = ANY($2::text[])`,
  deleteFiles: `DELETE FROM entry_files WHERE entry_id = ANY($1::bigint[])`,
  /**
   * A batch's files, and of its sessions ($4, sorted) those with an entry the server groups, each locked in that
   * order (one lock order for every writer): one statement, one round trip. The check sees the entries the batch's
   * upsert wrote, an earlier statement of the transaction; the members are read after, in a statement of its own.
   */
  insertFilesLockSessions: `
    WITH files AS (
      INSERT INTO entry_files (entry_id, project_id, path) SELECT f.id, $1, f.path FROM unnest($2::bigint[], $3::text[]) AS f(id, path)
      ON CONFLICT DO NOTHING
    )
    ${lockGrouped("$4", "false")}`,
  /** before a batch with server-grouped entries ($3) is written: of its sessions ($2), those to group, locked */
  lockSessions: lockGrouped("$2", "s.id = ANY($3::text[])"),
  insertFiles: `INSERT INTO entry_files (entry_id, project_id, path) SELECT f.id, $1, f.path FROM unnest($2::bigint[], $3::text[]) AS f(id, path) ON CONFLICT DO NOTHING`,
  /** the members of the sessions $2, each session's in the one order, oldest first */
  sessionMembers: `
    SELECT session_id AS "sessionId", commit_hash AS "commitHash", group_root_id AS "groupRootId", group_auto AS auto,
      has_user AS "hasUser", continuation, sort_ms::float8 AS "sortMs", recorded_ms::float8 AS "recordedMs"
    FROM entries WHERE project_id = $1 AND session_id = ANY($2::text[]) ORDER BY session_id, ${OLDEST_FIRST}`,
  /** the new groups of the entries $2 ($3: their roots), in one statement */
  setGroups: `
    UPDATE entries e SET group_root_id = c.root, group_id = COALESCE(c.root, e.commit_hash)
    FROM unnest($2::text[], $3::text[]) AS c(hash, root) WHERE e.project_id = $1 AND e.commit_hash = c.hash`,
  upsertSession: `
    INSERT INTO sessions (project_id, session_id, content) VALUES ($1, $2, $3)
    ON CONFLICT (project_id, session_id) DO UPDATE SET content = excluded.content, updated_at = now()`,
  transcript: `SELECT content FROM sessions WHERE project_id = $1 AND session_id = $2`,
  createProject: `INSERT INTO projects (id, name) VALUES ($1, $2) RETURNING id, name, created_at AS "createdAt"`,
  projects: `
    SELECT p.id, p.name, p.created_at AS "createdAt",
      (SELECT count(*)::int FROM api_keys k WHERE k.project_id = p.id AND k.revoked_at IS NULL) AS keys,
      (SELECT count(*)::int FROM entries e WHERE e.project_id = p.id) AS entries,
      (SELECT max(sort_ms)::float8 FROM entries e WHERE e.project_id = p.id) AS "lastMs"
    FROM projects p ORDER BY p.name`,
  project: `SELECT id, name, created_at AS "createdAt" FROM projects WHERE id = $1 OR name = $1`,
  createKey: `INSERT INTO api_keys (id, project_id, hash, prefix, label, owner) VALUES ($1, $2, $3, $4, $5, $6)`,
  keys: `
    SELECT k.id, k.project_id AS "projectId", p.name AS "projectName", k.label, k.owner, k.prefix, k.created_at AS "createdAt",
      k.revoked_at AS "revokedAt"
    FROM api_keys k JOIN projects p ON p.id = k.project_id
    WHERE $1::text IS NULL OR k.project_id = $1 ORDER BY p.name, k.created_at`,
  /** one statement: the key is revoked and its sign-ins end together */
  revokeKey: `
    WITH k AS (UPDATE api_keys SET revoked_at = now() WHERE (id = $1 OR prefix = $1) AND revoked_at IS NULL RETURNING id),
      ended AS (DELETE FROM sign_ins WHERE id IN (SELECT sign_in_id FROM sign_in_keys WHERE key_id IN (SELECT id FROM k)))
    SELECT id FROM k`,
  insertSignIn: `INSERT INTO sign_ins (id, created_ms, expires_ms) VALUES ($1, $2, $3)`,
  insertSignInKeys: `INSERT INTO sign_in_keys (sign_in_id, key_id) SELECT $1, k FROM unnest($2::text[]) AS k ON CONFLICT DO NOTHING`,
  endSignIn: `DELETE FROM sign_ins WHERE id = $1`,
  endExpiredSignIns: `DELETE FROM sign_ins WHERE expires_ms <= $1`,
  /** a key revoked after the sign-in was made (even while it was being made) ends the whole sign-in */
  signInKeys: `
    SELECT k.id AS "keyId", k.project_id AS "projectId", p.name AS "projectName", ${KEY_OWNER} AS owner
    FROM sign_ins s JOIN sign_in_keys sk ON sk.sign_in_id = s.id JOIN api_keys k ON k.id = sk.key_id JOIN projects p ON p.id = k.project_id
    WHERE s.id = $1 AND s.expires_ms > $2 AND NOT EXISTS (
      SELECT 1 FROM sign_in_keys x JOIN api_keys y ON y.id = x.key_id WHERE x.sign_in_id = s.id AND y.revoked_at IS NOT NULL)`,
  keyByHash: `
    SELECT k.id AS "keyId", k.project_id AS "projectId", p.name AS "projectName", ${KEY_OWNER} AS owner
    FROM api_keys k JOIN projects p ON p.id = k.project_id WHERE k.hash = $1 AND k.revoked_at IS NULL`,
  entryColumns: `e.commit_hash AS "commitHash", e.group_root_id AS "groupRootId", e.summary, e.sort_ms::float8 AS "sortMs", e.recorded_ms::float8 AS "recordedMs", e.request`,
  oldestFirst: OLDEST_FIRST,
  sessionFacts: `
    SELECT s.id AS "sessionId", a.start_ms AS "startMs", a.end_ms AS "endMs", a.commits, f.request AS "firstRequest", l.summary AS last
    FROM unnest($2::text[]) AS s(id)
    CROSS JOIN LATERAL (SELECT min(sort_ms)::float8 AS start_ms, max(sort_ms)::float8 AS end_ms, count(*)::int AS commits
                        FROM entries WHERE project_id = $1 AND session_id = s.id) a
    LEFT JOIN LATERAL (SELECT request FROM entries WHERE project_id = $1 AND session_id = s.id AND request IS NOT NULL
                       ORDER BY ${OLDEST_FIRST} LIMIT 1) f ON true
    LEFT JOIN LATERAL (SELECT summary FROM entries WHERE project_id = $1 AND session_id = s.id
                       ORDER BY sort_ms DESC, recorded_ms DESC, commit_hash DESC LIMIT 1) l ON true
    WHERE a.commits > 0`,
  /**
   * Counts from the day rollups (whole UTC days from $3) plus, when the window starts within a day, that day's
   * entries from $2 to $4 (the start of day $3) counted one by one.
   */
  stats: {
    totals: `
      SELECT (SELECT COALESCE(sum(n), 0) FROM stats_days WHERE project_id = $1 AND day >= $3)::int
          + (SELECT count(*) FROM entries WHERE project_id = $1 AND sort_ms >= $2 AND sort_ms < $4)::int AS entries,
        (SELECT count(DISTINCT s) FROM (
          SELECT session_id AS s FROM stats_sessions WHERE project_id = $1 AND day >= $3 AND n > 0
          UNION ALL SELECT session_id FROM entries WHERE project_id = $1 AND sort_ms >= $2 AND sort_ms < $4) x)::int AS sessions`,
    perTag: `
      SELECT tag, sum(n)::int AS n FROM (
        SELECT tag, n FROM stats_days WHERE project_id = $1 AND day >= $3
        UNION ALL SELECT tag, 1 FROM entries WHERE project_id = $1 AND sort_ms >= $2 AND sort_ms < $4) x
      GROUP BY tag HAVING sum(n) > 0`,
    perDay: `
      SELECT to_char(DATE '1970-01-01' + day, 'YYYY-MM-DD') AS day, sum(n)::int AS count FROM (
        SELECT day, n FROM stats_days WHERE project_id = $1 AND day >= $3
        UNION ALL SELECT aiflare_day(sort_ms), 1 FROM entries WHERE project_id = $1 AND sort_ms >= $2 AND sort_ms < $4) x
      GROUP BY x.day HAVING sum(n) > 0 ORDER BY x.day`,
    /** … and from the blocks from $5 on, the days before block $5 one by one */
    topFiles: `
      SELECT path, sum(n)::int AS count FROM (
        SELECT path, n FROM stats_files WHERE project_id = $1 AND day >= $3 AND day < $5 * ${BLOCK_DAYS}
        UNION ALL SELECT path, n FROM stats_file_blocks WHERE project_id = $1 AND block >= $5
        UNION ALL SELECT f.path, 1 FROM entry_files f JOIN entries e ON e.id = f.entry_id
          WHERE e.project_id = $1 AND e.sort_ms >= $2 AND e.sort_ms < $4) x
      GROUP BY path HAVING sum(n) > 0 ORDER BY count DESC, path LIMIT 10`,
  },
} as const;
