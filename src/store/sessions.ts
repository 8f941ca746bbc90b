import { AiflareError } from "../errors.ts";
import { assertPlainIdentifier, redactForWrite } from "../redact/index.ts";
import { commitPlan, snapshot, snapshotAt, type Edits, type Snapshot, type StoreRepo } from "./branch.ts";
import { MODE_TREE, ObjectStore } from "./objects.ts";
import { legacySessionPath, readRef, SESSIONS_REF, segmentName, segmentPath, sessionDir } from "./refs.ts";
import type { WriteOptions } from "./timeline.ts";
import { isValidSessionId } from "../util/ids.ts";

/*
 * The sessions branch (`refs/heads/aiflare/sessions/v1`). A session's transcript is a directory of append-only
 * segments, `sessions/<2 hex of sha1(S)>/<S>/<000001>.jsonl`, each holding the redacted conversation lines that
 * were new when it was written; their concatenation in name order is the whole session, across any number of
 * resumes. An append writes one small blob and rewrites three small trees, whatever the number of sessions.
 * Transcripts of the first layout (`sessions/<S>.jsonl`, rewritten whole) are read as the part before segment 1.
 */

function assertSessionId(sessionId: string, opts: WriteOptions): void {
  if (!isValidSessionId(sessionId)) {
    throw new AiflareError("INVALID_SESSION_ID", "session ids may only hold letters, digits, '.', '_' and '-' (1-128 characters)");
  }
  // the id becomes a tree path and a trailer, which are not redacted text
  assertPlainIdentifier(sessionId, opts.redact);
}

const SEGMENT_NAME_RE = /^(\d+)\.jsonl$/;

/** The segments of a session in a snapshot, in order. */
function segmentsAt(snap: Snapshot, sessionId: string): { seq: number; hash: string }[] {
  const out: { seq: number; hash: string }[] = [];
  for (const e of snap.treeAt(sessionDir(sessionId))) {
    const m = SEGMENT_NAME_RE.exec(e.name);
    if (m && e.mode !== MODE_TREE) out.push({ seq: Number(m[1]), hash: e.hash });
  }
  return out.sort((a, b) => a.seq - b.seq);
}

export interface AppendSegmentOptions extends WriteOptions {
  /** the lines carry the whole session so far: drop the first-layout transcript they supersede */
  replaceLegacy?: boolean;
}

/**
 * Appends conversation lines (JSONL, redacted here) to a session's transcript as its next segment, in one commit on
 * the sessions branch. Returns the segment number written, or null when there was nothing to write.
 */
export async function appendSessionSegment(
  repo: StoreRepo,
  sessionId: string,
  lines: string,
  opts: AppendSegmentOptions = {},
): Promise<number | null> {
  assertSessionId(sessionId, opts);
  if (!lines.trim()) return null;
  const text = lines.endsWith("\n") ? lines : `${lines}\n`;
  const redacted = redactForWrite(text, { ...opts.redact, jsonl: true });
  let written: number | null = null;
  const commit = await commitPlan(
    repo,
    SESSIONS_REF,
    (snap) => {
      // numbered from the tip being written on, so concurrent appends each get their own segment
      const last = segmentsAt(snap, sessionId).at(-1)?.seq ?? 0;
      written = last + 1;
      const edits: Edits = new Map([[segmentPath(sessionId, written), redacted]]);
      if (opts.replaceLegacy && snap.blobHashAt(legacySessionPath(sessionId))) edits.set(legacySessionPath(sessionId), null);
      return {
        edits,
        message: `aiflare: session ${sessionId} segment ${written}\n\nSession: ${sessionId}\nSegment: ${segmentName(written)}\n`,
      };
    },
    opts.lock,
  );
  return commit === null ? null : written;
}

/** A session's stored transcript, whole. */
export interface SessionTranscript {
  /** the JSONL text: every segment in order */
  text: string;
  /** changes whenever the transcript does (the hash of the session's tree, or of its first-layout blob) */
  version: string;
  segments: number;
}

/** The whole transcript of a session in a snapshot, or null when none is stored. */
export function sessionTranscriptAt(snap: Snapshot, sessionId: string): SessionTranscript | null {
  if (!isValidSessionId(sessionId)) return null;
  const legacy = snap.blobHashAt(legacySessionPath(sessionId));
  const segments = segmentsAt(snap, sessionId);
  if (!legacy && segments.length === 0) return null;
  const parts: string[] = [];
  const versions: string[] = [];
  for (const hash of [...(legacy ? [legacy] : []), ...segments.map((s) => s.hash)]) {
    const text = snap.store.read(hash, "blob").content.toString("utf8");
    parts.push(text && !text.endsWith("\n") ? `${text}\n` : text);
  }
  if (legacy) versions.push(legacy);
  if (segments.length) {
    const dir = sessionDir(sessionId);
    const slash = dir.lastIndexOf("/");
    versions.push(snap.treeAt(dir.slice(0, slash)).find((e) => e.name === dir.slice(slash + 1))!.hash);
  }
  return { text: parts.join(""), version: versions.join("+"), segments: segments.length };
}

/**
 * The whole stored transcript of a session (every segment, in order), at the sessions branch's tip or at `tip`.
 * Null when the session has none. The one reader of transcripts: the index, sync and tests go through it.
 */
export function readSessionTranscript(
  repo: StoreRepo,
  sessionId: string,
  opts: { tip?: string | null; store?: ObjectStore } = {},
): SessionTranscript | null {
  if (!isValidSessionId(sessionId)) return null;
  const store = opts.store ?? new ObjectStore(repo.commonDir);
  try {
    const snap = opts.tip === undefined ? snapshot(store, SESSIONS_REF) : snapshotAt(store, opts.tip);
    return sessionTranscriptAt(snap, sessionId);
  } finally {
    if (!opts.store) store.close();
  }
}

/** Reads a stored session transcript as text, or null. */
export async function readSession(repo: StoreRepo, sessionId: string): Promise<string | null> {
  return readSessionTranscript(repo, sessionId)?.text ?? null;
}

/** Ids of every session with a stored transcript at the sessions branch's tip (or at `tip`). */
export function listSessionIds(repo: StoreRepo, opts: { tip?: string | null; store?: ObjectStore } = {}): string[] {
  const store = opts.store ?? new ObjectStore(repo.commonDir);
  try {
    const tip = opts.tip === undefined ? readRef(repo.commonDir, SESSIONS_REF) : opts.tip;
    const snap = snapshotAt(store, tip);
    const ids = new Set<string>();
    for (const e of snap.treeAt("sessions")) {
      if (e.mode === MODE_TREE && /^[0-9a-f]{2}$/.test(e.name)) {
        for (const s of snap.treeAt(`sessions/${e.name}`)) if (s.mode === MODE_TREE && isValidSessionId(s.name)) ids.add(s.name);
      } else {
        const m = /^(.+)\.jsonl$/.exec(e.name);
        if (m && isValidSessionId(m[1])) ids.add(m[1]!);
      }
    }
    return [...ids];
  } finally {
    if (!opts.store) store.close();
  }
}
