import type { Database } from "bun:sqlite";
import { isValidSessionId } from "../../util/ids.ts";
import { blobSizes, execGit } from "../../util/git.ts";
import { snapshotAt } from "../branch.ts";
import { diffTreeBlobs, ObjectStore, parseCommit, type BlobChange } from "../objects.ts";
import {
  LEGACY_SESSION_PATH_RE,
  legacySessionPath,
  readRef,
  SEGMENT_PATH_RE,
  sessionDir,
  SESSIONS_REF,
  TIMELINE_REF,
} from "../refs.ts";
import { sessionPartsAt } from "../session-read.ts";
import { INLINE_OBJECTS, INSERT_ENTRY, readEntryRows, type EntryRow } from "./entry-rows.ts";
import { readEntryRowsInThread, THREAD_MIN_ENTRIES } from "./rows-thread.ts";

const ENTRY_PATH_RE = /^entries\/([0-9a-f]{2})\/([0-9a-f]{38})\.json$/;
const SESSION_PATH_RE = /^sessions\/(?:[0-9a-f]{2}\/[^/]+\/\d+|[^/]+)\.jsonl$/;
const ZERO_OID = /^0+$/;
/** A loose blob up to this size on disk is read to learn its size; a larger one is asked of git. */
const INLINE_LOOSE_BYTES = 64 * 1024;

/** One changed path on a branch: the new blob, or null when the path was deleted. */
interface Change {
  path: string;
  oid: string | null;
}

/** What a refresh did (for tests, benchmarks and `doctor`). */
export interface RefreshResult {
  /** nothing moved: no git process was started */
  upToDate: boolean;
  /** "full" when a branch was re-listed from scratch, "incremental" when only its changes were read */
  mode: "none" | "incremental" | "full";
  entriesChanged: number;
  sessionsChanged: number;
  /** entry files that failed validation and were left out */
  skipped: number;
}

function getMeta(db: Database, key: string): string {
  const row = db.query("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | null;
  return row?.value ?? "";
}

function setMeta(db: Database, key: string, value: string): void {
  db.query("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(key, value);
}

/**
 * Brings the index up to the current tips of the timeline and sessions branches. When neither tip moved
 * this reads two small files and returns; otherwise it reads only the changed paths (`git diff-tree`),
 * falling back to a full listing when the old tip is gone (history rewritten, fresh index).
 */
export async function refreshIndex(db: Database, commonDir: string): Promise<RefreshResult> {
  const result: RefreshResult = { upToDate: true, mode: "none", entriesChanged: 0, sessionsChanged: 0, skipped: 0 };
  const timelineTip = readRef(commonDir, TIMELINE_REF) ?? "";
  const sessionsTip = readRef(commonDir, SESSIONS_REF) ?? "";
  if (getMeta(db, "timeline_tip") === timelineTip && getMeta(db, "sessions_tip") === sessionsTip) return result;
  result.upToDate = false;

  // Compute the changes outside the write lock (git may take a while on a first import), then apply them
  // only if no other process moved the index meanwhile; otherwise start over from what it stored.
  for (let attempt = 0; attempt < 5; attempt++) {
    const fromTimeline = getMeta(db, "timeline_tip");
    const fromSessions = getMeta(db, "sessions_tip");
    if (fromTimeline === timelineTip && fromSessions === sessionsTip) return result;
    const [entryChanges, sessionChanges] = await Promise.all([
      changedPaths(db, commonDir, "entries", fromTimeline, timelineTip, ENTRY_PATH_RE),
      changedSessions(db, commonDir, fromSessions, sessionsTip),
    ]);
    if (entryChanges.full || sessionChanges.full) result.mode = "full";
    else result.mode = "incremental";
    // One write transaction for the whole change; blobs stream out of git into it, so memory stays flat.
    // Readers (WAL) are not blocked meanwhile; a second writer waits and then finds the work done.
    // A first import writes many pages: a larger cache (16 MB) spills fewer of them to the WAL before the commit.
    if (result.mode === "full") db.run("PRAGMA cache_size = -16384");
    db.run("BEGIN IMMEDIATE");
    try {
      if (getMeta(db, "timeline_tip") !== fromTimeline || getMeta(db, "sessions_tip") !== fromSessions) {
        db.run("ROLLBACK");
        continue;
      }
      result.skipped += await applyEntryChanges(db, commonDir, entryChanges.changes);
      await applySessionChanges(db, commonDir, sessionChanges.ids, sessionsTip, sessionChanges.listed);
      setMeta(db, "timeline_tip", timelineTip);
      setMeta(db, "sessions_tip", sessionsTip);
      db.run("COMMIT");
    } catch (err) {
      try {
        db.run("ROLLBACK");
      } catch {
        // the transaction is already gone
      }
      throw err;
    }
    result.entriesChanged = entryChanges.changes.length;
    result.sessionsChanged = sessionChanges.ids.length;
    return result;
  }
  return result;
}

/**
 * The paths matching `re` that differ between two tips of a branch. `from` empty (or unreadable) means
 * "compare with what the index holds": the new tree is listed and compared blob by blob.
 */
async function changedPaths(
  db: Database,
  commonDir: string,
  table: "entries",
  from: string,
  to: string,
  re: RegExp,
): Promise<{ changes: Change[]; full: boolean }> {
  if (from === to) return { changes: [], full: false };
  if (from && to) {
    const inline = changedBlobs(commonDir, from, to, table);
    if (inline) {
      const changes: Change[] = [];
      for (const c of inline) if (re.test(c.path)) changes.push({ path: c.path, oid: c.to });
      return { changes, full: false };
    }
    const r = await execGit(["--git-dir", commonDir, "diff-tree", "-r", "-z", "--no-renames", from, to]);
    if (r.code === 0) {
      // Records: ":<mode> <mode> <oid> <oid> <status>\0<path>\0"
      const parts = new TextDecoder().decode(r.stdout).split("\0");
      const changes: Change[] = [];
      for (let i = 0; i + 1 < parts.length; i += 2) {
        const meta = parts[i]!.split(" ");
        const path = parts[i + 1]!;
        if (!re.test(path)) continue;
        const newOid = meta[3] ?? "";
        changes.push({ path, oid: ZERO_OID.test(newOid) || meta[4] === "D" ? null : newOid });
      }
      return { changes, full: false };
    }
  }
  // Full listing, still reading only blobs the index does not already hold.
  const listed = new Map<string, string>();
  if (to) {
    const r = await execGit(["--git-dir", commonDir, "ls-tree", "-r", "-z", "--full-tree", to, "--", table]);
    if (r.code !== 0) throw new Error(`git ls-tree ${to} failed: ${r.stderr.trim()}`);
    for (const rec of new TextDecoder().decode(r.stdout).split("\0")) {
      const tab = rec.indexOf("\t");
      if (tab < 0) continue;
      const path = rec.slice(tab + 1);
      const [, type, oid] = rec.slice(0, tab).split(" ");
      if (type === "blob" && oid && re.test(path)) listed.set(path, oid);
    }
  }
  const known = new Map<string, string>();
  for (const row of db.query("SELECT commit_hash AS h, blob_oid AS o FROM entries").all() as { h: string; o: string }[]) {
    known.set(`entries/${row.h.slice(0, 2)}/${row.h.slice(2)}.json`, row.o);
  }
  const changes: Change[] = [];
  for (const [path, oid] of listed) if (known.get(path) !== oid) changes.push({ path, oid });
  for (const path of known.keys()) if (!listed.has(path)) changes.push({ path, oid: null });
  return { changes, full: true };
}

/**
 * The blobs under the top-level directory `dir` that differ between two commits of a branch, read without git; null
 * when the change is large or an object cannot be read here (git is asked then).
 */
function changedBlobs(commonDir: string, from: string, to: string, dir: string): BlobChange[] | null {
  try {
    const store = new ObjectStore(commonDir);
    const subtree = (commit: string) => {
      for (const e of store.readTree(parseCommit(store.read(commit, "commit").content).tree)) if (e.name === dir) return e.hash;
      return null;
    };
    const out = diffTreeBlobs(store, subtree(from), subtree(to), `${dir}/`);
    return out.length <= INLINE_OBJECTS ? out : null;
  } catch {
    return null;
  }
}

/**
 * The sizes of blobs: small loose ones (the segments a commit hook just wrote) read here, the rest (packed, large
 * or many) from one `git cat-file --batch-check`. Missing ones are left out.
 */
async function sizesOf(commonDir: string, oids: string[]): Promise<Map<string, number>> {
  if (oids.length > INLINE_OBJECTS) return blobSizes(commonDir, oids);
  const store = new ObjectStore(commonDir);
  const sizes = new Map<string, number>();
  const rest: string[] = [];
  for (const oid of oids) {
    const stored = store.looseFileSize(oid);
    const obj = stored !== null && stored <= INLINE_LOOSE_BYTES ? store.tryRead(oid) : null;
    if (obj) sizes.set(oid, obj.content.length);
    else rest.push(oid);
  }
  if (rest.length) for (const [oid, size] of await blobSizes(commonDir, rest)) sizes.set(oid, size);
  return sizes;
}

/** The blobs of `changes` (each once), with the commit hashes whose paths want each blob. */
function wanted(changes: Change[]): Map<string, string[]> {
  const byOid = new Map<string, string[]>();
  for (const c of changes) {
    const m = ENTRY_PATH_RE.exec(c.path);
    if (!c.oid || !m) continue;
    const list = byOid.get(c.oid);
    if (list) list.push(m[1]! + m[2]!);
    else byOid.set(c.oid, [m[1]! + m[2]!]);
  }
  return byOid;
}

/** Applies entry changes; returns how many entry files were invalid and left out. */
async function applyEntryChanges(db: Database, commonDir: string, changes: Change[]): Promise<number> {
  if (changes.length === 0) return 0;
  const hasRows = db.query("SELECT 1 FROM entries LIMIT 1").get() !== null;
  if (hasRows) {
    const findId = db.query("SELECT id FROM entries WHERE commit_hash = ?");
    const dels = [
      db.query("DELETE FROM entry_files WHERE entry_id = ?"),
      db.query("DELETE FROM renames WHERE entry_id = ?"),
      db.query("DELETE FROM entries_fts WHERE rowid = ?"),
      db.query("DELETE FROM entries WHERE id = ?"),
    ];
    for (const change of changes) {
      const m = ENTRY_PATH_RE.exec(change.path);
      if (!m) continue;
      const existing = findId.get(m[1]! + m[2]!) as { id: number } | null;
      if (existing) for (const del of dels) del.run(existing.id);
    }
  }
  const insEntry = db.query(INSERT_ENTRY);
  const insFile = db.query("INSERT OR IGNORE INTO entry_files (path, entry_id) VALUES (?, ?)");
  const insRename = db.query("INSERT OR IGNORE INTO renames (path, old_path, entry_id) VALUES (?, ?, ?)");
  const insFts = db.query(
    "INSERT INTO entries_fts (rowid, title, intent, alternatives, diff_summary, conversation) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const insert = (row: EntryRow) => {
    const id = insEntry.run(...row.cols).lastInsertRowid;
    for (const file of row.files) insFile.run(file, id);
    for (const [to, from] of row.renames) insRename.run(to, from, id);
    insFts.run(id, ...row.fts);
  };
  const byOid = wanted(changes);
  // Many entries (a first import): read and parsed on another thread while this one writes them.
  if (byOid.size >= THREAD_MIN_ENTRIES) {
    const skipped = await readEntryRowsInThread(commonDir, byOid, insert);
    if (skipped !== null) return skipped;
  }
  // Entry files that are missing or invalid are left out and counted.
  return readEntryRows(commonDir, byOid, insert);
}

/** The id of the session a sessions-branch path belongs to (a segment or a first-layout transcript). */
function sessionOfPath(path: string): string | undefined {
  return SEGMENT_PATH_RE.exec(path)?.[1] ?? LEGACY_SESSION_PATH_RE.exec(path)?.[1];
}

/**
 * The sessions whose transcript differs between two tips of the sessions branch. Without a usable old tip, every
 * session at the new tip and every session the index holds is looked at again.
 */
async function changedSessions(
  db: Database,
  commonDir: string,
  from: string,
  to: string,
): Promise<{ ids: string[]; full: boolean; listed?: Map<string, SessionVersion> }> {
  if (from === to) return { ids: [], full: false };
  if (from && to) {
    const inline = changedBlobs(commonDir, from, to, "sessions");
    if (inline) {
      const ids = new Set<string>();
      for (const { path } of inline) {
        const id = SESSION_PATH_RE.test(path) ? sessionOfPath(path) : undefined;
        if (id && isValidSessionId(id)) ids.add(id);
      }
      return { ids: [...ids], full: false };
    }
    const r = await execGit(["--git-dir", commonDir, "diff-tree", "-r", "-z", "--no-renames", "--name-only", from, to]);
    if (r.code === 0) {
      const ids = new Set<string>();
      for (const path of new TextDecoder().decode(r.stdout).split("\0")) {
        const id = SESSION_PATH_RE.test(path) ? sessionOfPath(path) : undefined;
        if (id && isValidSessionId(id)) ids.add(id);
      }
      return { ids: [...ids], full: false };
    }
  }
  const listed = to ? await listedSessions(commonDir, to) : new Map<string, SessionVersion>();
  const ids = new Set(listed.keys());
  for (const row of db.query("SELECT session_id AS s FROM sessions").all() as { s: string }[]) ids.add(row.s);
  return { ids: [...ids], full: true, listed };
}

/** What the index keeps of a stored transcript: its version (see sessionPartsAt) and its size in bytes. */
interface SessionVersion {
  version: string;
  bytes: number;
}

const SEGMENT_NAME_RE = /^\d+\.jsonl$/;

/**
 * Every session stored at `tip` (listSessionIds), each with what sessionPartsAt and the blobs' sizes say of it,
 * from one `git ls-tree` of the sessions tree: a full refresh lists them all, and git lists the trees faster than
 * they are read one by one here.
 */
async function listedSessions(commonDir: string, tip: string): Promise<Map<string, SessionVersion>> {
  const r = await execGit(["--git-dir", commonDir, "ls-tree", "-r", "-t", "-l", "-z", "--full-tree", tip, "--", "sessions"]);
  if (r.code !== 0) throw new Error(`git ls-tree ${tip} failed: ${r.stderr.trim()}`);
  const trees = new Map<string, string>();
  const blobs = new Map<string, { oid: string; size: number }>();
  // the sizes of the segments in each directory (a segment is a non-tree entry named <digits>.jsonl)
  const segments = new Map<string, number[]>();
  const ids = new Set<string>();
  // Records: "<mode> <type> <oid> <size, padded>\t<path>\0"
  for (const rec of new TextDecoder().decode(r.stdout).split("\0")) {
    const tab = rec.indexOf("\t");
    if (tab < 0) continue;
    const [, type, oid, size] = rec.slice(0, tab).split(/ +/);
    const path = rec.slice(tab + 1);
    const slash = path.lastIndexOf("/");
    const dir = path.slice(0, slash);
    const name = path.slice(slash + 1);
    if (type === "tree") {
      trees.set(path, oid!);
      // a session's directory under its fan-out: sessions/<2 hex>/<id>
      if (/^sessions\/[0-9a-f]{2}$/.test(dir) && isValidSessionId(name)) ids.add(name);
    } else {
      const bytes = Number(size) || 0;
      blobs.set(path, { oid: oid!, size: bytes });
      if (SEGMENT_NAME_RE.test(name)) {
        const list = segments.get(dir);
        if (list) list.push(bytes);
        else segments.set(dir, [bytes]);
      }
    }
    // a transcript of the first layout: sessions/<id>.jsonl
    const legacy = dir === "sessions" ? /^(.+)\.jsonl$/.exec(name) : null;
    if (legacy && isValidSessionId(legacy[1]) && !(type === "tree" && /^[0-9a-f]{2}$/.test(name))) ids.add(legacy[1]!);
  }
  const out = new Map<string, SessionVersion>();
  for (const id of ids) {
    const legacy = blobs.get(legacySessionPath(id));
    const dir = sessionDir(id);
    const sizes = trees.has(dir) ? (segments.get(dir) ?? []) : [];
    if (!legacy && sizes.length === 0) continue;
    const version = [...(legacy ? [legacy.oid] : []), ...(sizes.length ? [trees.get(dir)!] : [])].join("+");
    out.set(id, { version, bytes: (legacy?.size ?? 0) + sizes.reduce((n, b) => n + b, 0) });
  }
  return out;
}

/**
 * Applies session changes. The index keeps each transcript's version and size, not its text: nothing is read but
 * the session trees and the blobs' sizes (`git cat-file --batch-check`); the first request is read from the
 * transcript when a view needs it (see `sessionFirstRequest`), the text when sync sends it.
 */
async function applySessionChanges(
  db: Database,
  commonDir: string,
  ids: string[],
  tip: string,
  listed?: Map<string, SessionVersion>,
): Promise<void> {
  if (ids.length === 0) return;
  const del = db.query("DELETE FROM sessions WHERE session_id = ?");
  const ins = db.query(
    "INSERT OR REPLACE INTO sessions (session_id, blob_oid, first_request, line_count, bytes) VALUES (?, ?, NULL, 0, ?)",
  );
  if (listed) {
    for (const id of ids) {
      del.run(id);
      const v = listed.get(id);
      if (v) ins.run(id, v.version, v.bytes);
    }
    return;
  }
  const snap = tip ? snapshotAt(new ObjectStore(commonDir), tip) : null;
  const parts = new Map(ids.map((id) => [id, snap ? sessionPartsAt(snap, id) : null]));
  const sizes = await sizesOf(commonDir, [...new Set([...parts.values()].flatMap((p) => p?.blobs ?? []))]);
  for (const [id, p] of parts) {
    del.run(id);
    if (p) ins.run(id, p.version, p.blobs.reduce((n, b) => n + (sizes.get(b) ?? 0), 0));
  }
}
