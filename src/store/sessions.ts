import { AiflareError } from "../errors.ts";
import { assertPlainIdentifier, redactForWrite } from "../redact/index.ts";
import { commitPlan, type Edits, type StoreRepo } from "./branch.ts";
import { legacySessionPath, SESSIONS_REF, segmentName, segmentPath } from "./refs.ts";
import { segmentsAt } from "./session-read.ts";
import type { WriteOptions } from "./timeline.ts";
import { isValidSessionId } from "../util/ids.ts";

/*
 * The sessions branch (`refs/heads/aiflare/sessions/v1`). A session's transcript is a directory of append-only
 * segments, `sessions/<2 hex of sha1(S)>/<S>/<000001>.jsonl`, each holding the redacted conversation lines that
 * were new when it was written; their concatenation in name order is the whole session, across any number of
 * resumes. An append writes one small blob and rewrites three small trees, whatever the number of sessions.
 * Transcripts of the first layout (`sessions/<S>.jsonl`, rewritten whole) are read as the part before segment 1.
 * The readers live in session-read.ts (re-exported here), which loads no redactor.
 */

export * from "./session-read.ts";

function assertSessionId(sessionId: string, opts: WriteOptions): void {
  if (!isValidSessionId(sessionId)) {
    throw new AiflareError("INVALID_SESSION_ID", "session ids may only hold letters, digits, '.', '_' and '-' (1-128 characters)");
  }
  // the id becomes a tree path and a trailer, which are not redacted text
  assertPlainIdentifier(sessionId, opts.redact);
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

