import { Database } from "bun:sqlite";
import { existsSync, linkSync, mkdirSync, readdirSync, statSync, unlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { lockFileSync, tryLockFile, type HeldLock, type LockFileOptions } from "../../util/lockfile.ts";

/** Bumped whenever the cache tables change shape; an index with another version is rebuilt. */
export const SCHEMA_VERSION = 10;

/**
 * The one order of entries (SPEC §4): commit time, then when each was recorded, then the commit hash. `e` is
 * the alias of the entries table in the query ("" for none).
 */
export function entryOrder(dir: "ASC" | "DESC", e = ""): string {
  const p = e ? `${e}.` : "";
  return `${p}captured_ms ${dir}, ${p}recorded_ms ${dir}, ${p}commit_hash ${dir}`;
}

/** A writer may hold the lock for a whole first-time import; readers and writers wait this long. */
const BUSY_TIMEOUT_MS = 30_000;

/** A recovery lock older than this was left by a killed process. */
const STALE_LOCK_MS = 30_000;

/** What the index's lock files share (util/lockfile.ts): by age only, owner-only. */
const INDEX_LOCK = { waitMs: 0, maxPollMs: 20, mode: 0o600, busy: () => new Error("index lock held") } satisfies LockFileOptions;

/** The common git dir each open index belongs to: session transcripts are read from its sessions branch. */
export const indexRepos = new WeakMap<Database, string>();

/** Where the index of a repository lives: `<common dir>/aiflare/index.sqlite`. */
export function indexPath(commonDir: string): string {
  return join(commonDir, "aiflare", "index.sqlite");
}

// Cache tables: everything here can be rebuilt from the two branches. The index keeps what lists, filters
// and searches need, and each entry's version (its blob): whole entries and session transcripts are read from
// the branches' objects when shown or sent. Full-text search is contentless (its text lives in the entries) and
// keeps no positions (`detail=none`): `--grep` looks for words, not phrases, which keeps it a fraction of the
// size and build time.
const CACHE_SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE entries (
  id INTEGER PRIMARY KEY,
  commit_hash TEXT NOT NULL UNIQUE,
  blob_oid TEXT NOT NULL,
  session_id TEXT NOT NULL,
  group_root TEXT,
  tag TEXT NOT NULL,
  agent_type TEXT NOT NULL,
  branch TEXT NOT NULL,
  title TEXT NOT NULL,
  captured_at TEXT NOT NULL,
  -- committedAt, else capturedAt: what history orders and filters by
  captured_ms INTEGER NOT NULL,
  -- recordedAt, else capturedAt: orders commits of the same second
  recorded_ms INTEGER NOT NULL,
  prompts TEXT NOT NULL,
  -- "pending" until the agent's summary is written (see Entry.summaryStatus)
  summary_status TEXT,
  -- who ran the session (Entry.author), for --author
  author TEXT
);
CREATE INDEX entries_time ON entries (captured_ms, recorded_ms, commit_hash);
CREATE INDEX entries_session ON entries (session_id, captured_ms);
CREATE INDEX entries_group ON entries (group_root);
CREATE TABLE entry_files (path TEXT NOT NULL, entry_id INTEGER NOT NULL, PRIMARY KEY (path, entry_id)) WITHOUT ROWID;
CREATE INDEX entry_files_entry ON entry_files (entry_id);
-- the renames entries recorded (Entry.renames): recall follows a file to its earlier names without git
CREATE TABLE renames (path TEXT NOT NULL, old_path TEXT NOT NULL, entry_id INTEGER NOT NULL, PRIMARY KEY (path, old_path, entry_id)) WITHOUT ROWID;
CREATE INDEX renames_entry ON renames (entry_id);
CREATE VIRTUAL TABLE entries_fts USING fts5(
  title, intent, alternatives, diff_summary, conversation,
  content = '', contentless_delete = 1, detail = none,
  tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE sessions (
  session_id TEXT PRIMARY KEY,
  blob_oid TEXT NOT NULL,
  first_request TEXT,
  line_count INTEGER NOT NULL,
  bytes INTEGER NOT NULL
) WITHOUT ROWID;
`;

// Sync state is not derived from the branches. It survives schema changes where it can; losing it only
// makes the next sync resend entries the backend already has (it upserts by commit hash). It is kept per
// backend (`target`: the normalised endpoint and a hash of the key, see core/sync/settings.ts); state from
// before targets existed has the target '' until the first sync claims it for its backend.
const SYNC_SCHEMA = `
CREATE TABLE IF NOT EXISTS sync_entries (
  target TEXT NOT NULL DEFAULT '',
  commit_hash TEXT NOT NULL,
  accepted_at TEXT,
  accepted_hash TEXT,
  last_error TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (target, commit_hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sync_sessions (
  target TEXT NOT NULL DEFAULT '',
  session_id TEXT NOT NULL,
  accepted_at TEXT,
  accepted_hash TEXT,
  last_error TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (target, session_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sync_targets (
  target TEXT PRIMARY KEY,
  endpoint TEXT NOT NULL,
  project TEXT NOT NULL,
  last_success_at TEXT,
  last_error TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sync_kv (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
`;

const SYNC_TABLES = {
  sync_entries: ["target", "commit_hash", "accepted_at", "accepted_hash", "last_error", "attempts"],
  sync_sessions: ["target", "session_id", "accepted_at", "accepted_hash", "last_error", "attempts"],
  sync_targets: ["target", "endpoint", "project", "last_success_at", "last_error"],
  sync_kv: ["key", "value"],
} as const;

/** True for errors that mean the file is not a usable SQLite database (any "malformed" report included). */
export function isCorruptionError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  if (code === "SQLITE_NOTADB" || (typeof code === "string" && code.startsWith("SQLITE_CORRUPT"))) return true;
  return err instanceof Error && /malformed|not a database/i.test(err.message);
}

/** True for errors that mean the index file or its directory cannot be written here (a read-only checkout). */
export function isUnwritableError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== "string") return false;
  return ["EACCES", "EPERM", "EROFS"].includes(code) || code.startsWith("SQLITE_READONLY") || code.startsWith("SQLITE_CANTOPEN");
}

/** The identity of the file at `path` (device and inode), or null when there is none. */
export function fileIdentity(path: string): string | null {
  try {
    const st = statSync(path);
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}

/** True unless `PRAGMA quick_check` reports anything but "ok" (or cannot run at all). */
export function passesQuickCheck(db: Database): boolean {
  try {
    const rows = db.query("PRAGMA quick_check").values();
    return rows.length > 0 && rows.every((r) => r[0] === "ok");
  } catch {
    return false;
  }
}

function configure(db: Database): void {
  db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.run("PRAGMA synchronous = NORMAL");
}

/**
 * Creates the schema in a fresh database (not yet visible to others). `journal`: OFF for a file built whole
 * before anyone can open it (see buildIndexFile).
 */
export function initSchema(db: Database, journal: "WAL" | "OFF" = "WAL"): void {
  db.run(`PRAGMA journal_mode = ${journal}`);
  db.transaction(() => {
    db.run(CACHE_SCHEMA);
    db.run(SYNC_SCHEMA);
    db.run(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  })();
}

/** A private name beside `path` for a database being built (`<path>.tmp-<pid>-<random>`). */
function privateName(path: string): string {
  return `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
}

/** A build left by a process killed meanwhile is older than this; it is removed by the next build. */
const STALE_BUILD_MS = 3600 * 1000;

/** Removes builds under a private name (see privateName) that a killed process left behind. */
function removeStaleBuilds(path: string): void {
  const dir = dirname(path);
  const prefix = `${basename(path)}.tmp-`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    try {
      if (Date.now() - statSync(join(dir, name)).mtimeMs > STALE_BUILD_MS) removeFile(join(dir, name));
    } catch {
      // removed meanwhile
    }
  }
}

/**
 * Hard-links the database built at `tmp` into place at `path`, which fails if another process got there first
 * (its file stays: both were built from the same branches); `tmp` is removed either way.
 */
function publish(tmp: string, path: string): void {
  try {
    linkSync(tmp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  } finally {
    removeFile(tmp);
    removeFile(`${tmp}-wal`);
    removeFile(`${tmp}-shm`);
  }
}

/**
 * Publishes a fully initialised database at `path`: built under a private name, then hard-linked into
 * place. Parallel first-time creation thus never sees a half-made file.
 */
function createAtomically(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = privateName(path);
  const db = new Database(tmp, { create: true, readwrite: true });
  try {
    configure(db);
    initSchema(db);
  } finally {
    db.close();
  }
  publish(tmp, path);
}

/** A build holds `<path>.build` (created exclusively); one older than this was left by a killed process. */
const STALE_BUILD_LOCK_MS = 10 * 60 * 1000;

/**
 * Takes the build lock of the index at `path` (util/lockfile.ts), waiting while another process holds it: the lock
 * when this process is to build. Null when the index appeared meanwhile, or waiting took longer than BUSY_TIMEOUT_MS
 * (the caller then opens the index the ordinary way, which builds it if still missing).
 */
async function takeBuildLock(lock: string, path: string): Promise<HeldLock | null> {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    if (existsSync(path)) return null;
    const held = tryLockFile(lock, { ...INDEX_LOCK, staleMs: STALE_BUILD_LOCK_MS });
    if (held) return held;
    if (Date.now() > deadline) return null;
    await Bun.sleep(50);
  }
}

/**
 * Builds a missing index whole under a private name and then publishes it at `path` (see createAtomically):
 * `fill` writes its rows. Nothing else can see the file meanwhile, so it is written without a journal and
 * without waiting for the disk; a build cut short (a crash, an error) is never published, and `path` stays
 * as it was. One process builds at a time: another one starting meanwhile waits for its file. Returns what
 * `fill` returned, or undefined when another process built the index (or was still building it after the wait).
 */
export async function buildIndexFile<T>(path: string, fill: (db: Database) => Promise<T>): Promise<T | undefined> {
  mkdirSync(dirname(path), { recursive: true });
  removeStaleBuilds(path);
  const lock = await takeBuildLock(`${path}.build`, path);
  if (!lock) return undefined;
  try {
    return await buildPrivately(path, fill);
  } finally {
    lock.release();
  }
}

async function buildPrivately<T>(path: string, fill: (db: Database) => Promise<T>): Promise<T> {
  const tmp = privateName(path);
  let db: Database | undefined;
  let out: T;
  try {
    db = new Database(tmp, { create: true, readwrite: true });
    db.run("PRAGMA synchronous = OFF");
    initSchema(db, "OFF");
    out = await fill(db);
    // just built: the page check (PRAGMA quick_check) is not due for a day
    db.query("INSERT OR REPLACE INTO meta (key, value) VALUES ('checked_ms', ?)").run(String(Date.now()));
    db.run("PRAGMA journal_mode = WAL");
    db.close();
    db = undefined;
  } catch (err) {
    db?.close();
    removeFile(tmp);
    throw err;
  }
  publish(tmp, path);
  return out;
}

function removeFile(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/** Runs `fn` holding `<path>.lock` (util/lockfile.ts), taking over a lock left by a killed process. */
function withFileLock<T>(path: string, fn: () => T): T {
  const lock = `${path}.lock`;
  const held = lockFileSync(lock, {
    ...INDEX_LOCK,
    staleMs: STALE_LOCK_MS,
    waitMs: BUSY_TIMEOUT_MS,
    busy: () => Object.assign(new Error(`${lock} is held by another process`), { code: "EEXIST" }),
  });
  try {
    return fn();
  } finally {
    held.release();
  }
}

/** Opens `path` and touches its schema, so that a non-database file fails here. */
function openExisting(path: string): Database {
  const db = new Database(path, { create: false, readwrite: true });
  try {
    configure(db);
    db.query("SELECT count(*) FROM sqlite_master").get();
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * Deletes a damaged index, unless another process replaced it meanwhile. `seen` is the identity of the file
 * found damaged: a file with another identity is someone's fresh one and stays. Without `seen` the file is
 * checked again (`PRAGMA quick_check`) and kept when it passes. Runs under a lock so two processes never
 * delete each other's fresh file.
 */
export function discardCorruptIndex(path: string, seen?: string | null): void {
  withFileLock(path, () => {
    if (seen !== undefined && seen !== null) {
      if (fileIdentity(path) !== seen) return;
    } else {
      try {
        const db = openExisting(path);
        const ok = passesQuickCheck(db);
        db.close();
        if (ok) return;
      } catch (err) {
        if (!isCorruptionError(err) && (err as { code?: unknown }).code !== "SQLITE_CANTOPEN") throw err;
      }
    }
    removeFile(`${path}-wal`);
    removeFile(`${path}-shm`);
    removeFile(path);
  });
}

/**
 * Opens (creating or repairing as needed) the index database at `path`, with WAL, a busy timeout and the
 * current schema. Never asks the user anything: a missing, corrupt or outdated file is rebuilt.
 */
export function openIndexDb(path: string): Database {
  for (let attempt = 0; ; attempt++) {
    let db: Database;
    try {
      db = openExisting(path);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (attempt > 5) throw err;
      if (code === "SQLITE_CANTOPEN") createAtomically(path);
      else if (isCorruptionError(err)) discardCorruptIndex(path);
      else throw err;
      continue;
    }
    try {
      ensureSchema(db);
    } catch (err) {
      db.close();
      if (attempt > 5 || !isCorruptionError(err)) throw err;
      discardCorruptIndex(path);
      continue;
    }
    if (checkIsDue(db) && !passesQuickCheck(db)) {
      const seen = fileIdentity(path);
      db.close();
      if (attempt > 5) throw new Error("the aiflare index is malformed and could not be rebuilt");
      discardCorruptIndex(path, seen);
      continue;
    }
    return db;
  }
}

/** How often an index is checked page by page (`PRAGMA quick_check`): a damaged page may not raise errors. */
export const CHECK_EVERY_MS = 24 * 3600 * 1000;

/** True when the last `quick_check` is older than CHECK_EVERY_MS; records this one (if the file is writable). */
function checkIsDue(db: Database, now = Date.now()): boolean {
  try {
    const row = db.query("SELECT value FROM meta WHERE key = 'checked_ms'").get() as { value: string } | null;
    if (row && now - Number(row.value) < CHECK_EVERY_MS) return false;
    db.query("INSERT OR REPLACE INTO meta (key, value) VALUES ('checked_ms', ?)").run(String(now));
  } catch {
    // a read-only or damaged file: check it
  }
  return true;
}

/** Rebuilds the tables of an index written by another schema version, keeping the sync state it can. */
function ensureSchema(db: Database): void {
  const version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  if (version === SCHEMA_VERSION) return;
  db.transaction(() => {
    const now = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    if (now === SCHEMA_VERSION) return;
    const saved = saveSyncState(db);
    const objects = db.query("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").all() as {
      type: string;
      name: string;
      sql: string | null;
    }[];
    // Virtual tables first: dropping one drops its shadow tables.
    for (const o of objects.filter((o) => o.type === "table" && /^CREATE VIRTUAL/i.test(o.sql ?? ""))) {
      db.run(`DROP TABLE IF EXISTS "${o.name.replaceAll('"', '""')}"`);
    }
    for (const o of objects.filter((o) => o.type === "view")) db.run(`DROP VIEW IF EXISTS "${o.name.replaceAll('"', '""')}"`);
    for (const o of objects.filter((o) => o.type === "table")) db.run(`DROP TABLE IF EXISTS "${o.name.replaceAll('"', '""')}"`);
    db.run(CACHE_SCHEMA);
    db.run(SYNC_SCHEMA);
    restoreSyncState(db, saved);
    db.run(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  }).immediate();
  if ((db.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode !== "wal") {
    db.run("PRAGMA journal_mode = WAL");
  }
}

type SavedRows = Partial<Record<keyof typeof SYNC_TABLES, Record<string, unknown>[]>>;

function saveSyncState(db: Database): SavedRows {
  const saved: SavedRows = {};
  for (const [table, cols] of Object.entries(SYNC_TABLES) as [keyof typeof SYNC_TABLES, readonly string[]][]) {
    try {
      // every column there is: a table of an older shape keeps what it has (a column added since takes its default)
      saved[table] = (db.query(`SELECT * FROM ${table}`).all() as Record<string, unknown>[]).map((row) =>
        Object.fromEntries(cols.filter((c) => c in row).map((c) => [c, row[c]])),
      );
    } catch {
      // absent or of another shape: that state is lost, which only means a resend
    }
  }
  return saved;
}

function restoreSyncState(db: Database, saved: SavedRows): void {
  for (const [table, rows] of Object.entries(saved) as [keyof typeof SYNC_TABLES, Record<string, unknown>[]][]) {
    for (const row of rows) {
      const cols = SYNC_TABLES[table].filter((c) => c in row);
      if (cols.length === 0) continue;
      db.query(`INSERT OR REPLACE INTO ${table} (${cols.join(", ")}) VALUES (${cols.map((c) => `$${c}`).join(", ")})`).run(
        Object.fromEntries(cols.map((c) => [`$${c}`, (row[c] ?? null) as string | number | null])),
      );
    }
  }
}
