import type { Database } from "bun:sqlite";
import * as v from "valibot";
import { isValidSessionId } from "../../util/ids.ts";
import { conversationLines } from "../../util/jsonl.ts";
import { EntrySchema, type Entry } from "../entry.ts";
import { execGit, readBlobs } from "../../util/git.ts";
import { ObjectStore } from "../objects.ts";
import { LEGACY_SESSION_PATH_RE, readRef, SEGMENT_PATH_RE, SESSIONS_REF, TIMELINE_REF } from "../refs.ts";
import { listSessionIds, readSessionTranscript, type SessionTranscript } from "../sessions.ts";

/** Longest user prompt kept for list rendering (the full text stays in `conversation`). */
const PROMPT_KEEP = 400;

const ENTRY_PATH_RE = /^entries\/([0-9a-f]{2})\/([0-9a-f]{38})\.json$/;
const SESSION_PATH_RE = /^sessions\/(?:[0-9a-f]{2}\/[^/]+\/\d+|[^/]+)\.jsonl$/;
const ZERO_OID = /^0+$/;

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
    const blobs = await readBlobs(
      commonDir,
      entryChanges.changes.flatMap((c) => (c.oid ? [c.oid] : [])),
    );
    const transcripts = readTranscripts(commonDir, sessionChanges.ids, sessionsTip);
    const applied = db
      .transaction(() => {
        if (getMeta(db, "timeline_tip") !== fromTimeline || getMeta(db, "sessions_tip") !== fromSessions) return false;
        result.skipped += applyEntryChanges(db, entryChanges.changes, blobs);
        applySessionChanges(db, transcripts);
        setMeta(db, "timeline_tip", timelineTip);
        setMeta(db, "sessions_tip", sessionsTip);
        return true;
      })
      .immediate();
    if (applied) {
      result.entriesChanged = entryChanges.changes.length;
      result.sessionsChanged = sessionChanges.ids.length;
      return result;
    }
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
 * The time history orders and dates an entry by: its commit's committer date, else when it was written. Commit
 * dates have whole seconds; the milliseconds of the entry's first write break ties between commits of one second
 * (they were recorded in commit order), so the index's time order keeps serving every query.
 */
function orderMs(entry: Entry): number {
  const written = Date.parse(entry.recordedAt ?? entry.capturedAt);
  const committed = entry.committedAt ? Date.parse(entry.committedAt) : Number.NaN;
  if (!Number.isFinite(committed)) return written;
  // the first write follows the commit within moments: its distance from the commit, capped below a second
  return Number.isFinite(written) ? committed + Math.min(999, Math.max(0, written - committed)) : committed;
}

function parseEntry(bytes: Uint8Array, expectedHash: string): Entry | null {
  try {
    const parsed = v.safeParse(EntrySchema, JSON.parse(new TextDecoder().decode(bytes)));
    if (!parsed.success || parsed.output.commitHash !== expectedHash) return null;
    return parsed.output;
  } catch {
    return null;
  }
}

/** Applies entry changes; returns how many entry files were invalid and left out. */
function applyEntryChanges(db: Database, changes: Change[], blobs: Map<string, Uint8Array>): number {
  if (changes.length === 0) return 0;
  const findId = db.query("SELECT id FROM entries WHERE commit_hash = ?");
  const delEntry = db.query("DELETE FROM entries WHERE id = ?");
  const delFiles = db.query("DELETE FROM entry_files WHERE entry_id = ?");
  const delConv = db.query("DELETE FROM conversation WHERE entry_id = ?");
  const delFts = db.query("DELETE FROM entries_fts WHERE rowid = ?");
  const delDoc = db.query("DELETE FROM entry_docs WHERE entry_id = ?");
  const insDoc = db.query("INSERT INTO entry_docs (entry_id, json) VALUES (?, ?)");
  const insEntry = db.query(
    `INSERT INTO entries (commit_hash, blob_oid, session_id, group_root, tag, agent_type, branch, title, captured_at, captured_ms, prompts)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
  );
  const insFile = db.query("INSERT OR IGNORE INTO entry_files (path, entry_id) VALUES (?, ?)");
  const insConv = db.query("INSERT INTO conversation (entry_id, seq, role, content) VALUES (?, ?, ?, ?)");
  const insFts = db.query(
    "INSERT INTO entries_fts (rowid, title, intent, alternatives, diff_summary, conversation) VALUES (?, ?, ?, ?, ?, ?)",
  );
  let skipped = 0;
  for (const change of changes) {
    const m = ENTRY_PATH_RE.exec(change.path);
    if (!m) continue;
    const hash = m[1]! + m[2]!;
    const existing = findId.get(hash) as { id: number } | null;
    if (existing) {
      delFiles.run(existing.id);
      delConv.run(existing.id);
      delFts.run(existing.id);
      delDoc.run(existing.id);
      delEntry.run(existing.id);
    }
    if (!change.oid) continue;
    const bytes = blobs.get(change.oid);
    const entry = bytes ? parseEntry(bytes, hash) : null;
    if (!entry) {
      skipped++;
      continue;
    }
    const lines = conversationLines(entry.conversationSnippet);
    const prompts = lines.filter((l) => l.role === "user").map((l) => l.content.slice(0, PROMPT_KEEP));
    const ms = orderMs(entry);
    const { id } = insEntry.get(
      hash,
      change.oid,
      entry.claudeSessionId,
      entry.groupRootId,
      entry.tag,
      entry.agentType,
      entry.branch,
      entry.title,
      entry.capturedAt,
      Number.isFinite(ms) ? ms : 0,
      JSON.stringify(prompts),
    ) as { id: number };
    insDoc.run(id, JSON.stringify(entry));
    for (const file of new Set(entry.changedFiles)) insFile.run(file, id);
    lines.forEach((l, i) => insConv.run(id, i, l.role, l.content));
    insFts.run(id, entry.title, entry.intent, entry.alternatives, entry.diffSummary, lines.map((l) => l.content).join("\n"));
  }
  return skipped;
}

/** The id of the session a sessions-branch path belongs to (a segment or a first-layout transcript). */
function sessionOfPath(path: string): string | undefined {
  return SEGMENT_PATH_RE.exec(path)?.[1] ?? LEGACY_SESSION_PATH_RE.exec(path)?.[1];
}

/**
 * The sessions whose transcript differs between two tips of the sessions branch. Without a usable old tip, every
 * session at the new tip and every session the index holds is looked at again.
 */
async function changedSessions(db: Database, commonDir: string, from: string, to: string): Promise<{ ids: string[]; full: boolean }> {
  if (from === to) return { ids: [], full: false };
  if (from && to) {
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
  const ids = new Set(to ? listSessionIds({ commonDir }, { tip: to }) : []);
  for (const row of db.query("SELECT session_id AS s FROM sessions").all() as { s: string }[]) ids.add(row.s);
  return { ids: [...ids], full: true };
}

/** Each session's whole transcript at `tip` (null: no longer stored). */
function readTranscripts(commonDir: string, ids: string[], tip: string): Map<string, SessionTranscript | null> {
  const out = new Map<string, SessionTranscript | null>();
  if (ids.length === 0) return out;
  const store = new ObjectStore(commonDir);
  try {
    for (const id of ids) out.set(id, tip ? readSessionTranscript({ commonDir }, id, { tip, store }) : null);
  } finally {
    store.close();
  }
  return out;
}

function applySessionChanges(db: Database, transcripts: Map<string, SessionTranscript | null>): void {
  const del = db.query("DELETE FROM sessions WHERE session_id = ?");
  const ins = db.query(
    "INSERT INTO sessions (session_id, blob_oid, first_request, line_count, content) VALUES (?, ?, ?, ?, ?)",
  );
  for (const [id, transcript] of transcripts) {
    del.run(id);
    if (!transcript) continue;
    const lines = conversationLines(transcript.text);
    const first = lines.find((l) => l.role === "user")?.content.slice(0, PROMPT_KEEP) ?? null;
    ins.run(id, transcript.version, first, lines.length, transcript.text);
  }
}
