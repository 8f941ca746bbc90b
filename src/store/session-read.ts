import { snapshot, snapshotAt, type Snapshot, type StoreRepo } from "./branch.ts";
import { MODE_TREE, ObjectStore } from "./objects.ts";
import { legacySessionPath, readRef, SESSIONS_REF, sessionDir } from "./refs.ts";
import { isValidSessionId } from "../util/ids.ts";

/*
 * Reading session transcripts (see sessions.ts for the layout). Apart from the writer so that readers (the index,
 * history, sync) load no redactor.
 */

const SEGMENT_NAME_RE = /^(\d+)\.jsonl$/;

/** The segments of a session in a snapshot, in order. */
export function segmentsAt(snap: Snapshot, sessionId: string): { seq: number; hash: string }[] {
  const out: { seq: number; hash: string }[] = [];
  for (const e of snap.treeAt(sessionDir(sessionId))) {
    const m = SEGMENT_NAME_RE.exec(e.name);
    if (m && e.mode !== MODE_TREE) out.push({ seq: Number(m[1]), hash: e.hash });
  }
  return out.sort((a, b) => a.seq - b.seq);
}

/** A session's stored transcript, whole. */
export interface SessionTranscript {
  /** the JSONL text: every segment in order */
  text: string;
  /** changes whenever the transcript does (the hash of the session's tree, or of its first-layout blob) */
  version: string;
  segments: number;
}

/**
 * What a session's transcript is made of in a snapshot, without reading it: its version and its blobs in order
 * (the first-layout transcript, then the segments). Null when none is stored.
 */
export function sessionPartsAt(snap: Snapshot, sessionId: string): { version: string; blobs: string[]; segments: number } | null {
  if (!isValidSessionId(sessionId)) return null;
  const legacy = snap.blobHashAt(legacySessionPath(sessionId));
  const segments = segmentsAt(snap, sessionId);
  if (!legacy && segments.length === 0) return null;
  const versions: string[] = [];
  if (legacy) versions.push(legacy);
  if (segments.length) {
    const dir = sessionDir(sessionId);
    const slash = dir.lastIndexOf("/");
    versions.push(snap.treeAt(dir.slice(0, slash)).find((e) => e.name === dir.slice(slash + 1))!.hash);
  }
  return { version: versions.join("+"), blobs: [...(legacy ? [legacy] : []), ...segments.map((s) => s.hash)], segments: segments.length };
}

/** The whole transcript of a session in a snapshot, or null when none is stored. */
export function sessionTranscriptAt(snap: Snapshot, sessionId: string): SessionTranscript | null {
  const p = sessionPartsAt(snap, sessionId);
  if (!p) return null;
  const parts = p.blobs.map((hash) => {
    const text = snap.store.read(hash, "blob").content.toString("utf8");
    return text && !text.endsWith("\n") ? `${text}\n` : text;
  });
  return { text: parts.join(""), version: p.version, segments: p.segments };
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
