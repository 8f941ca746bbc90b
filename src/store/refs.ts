import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isFullHash } from "../util/ids.ts";

/** The two local-only branches (SPEC §3). */
export const TIMELINE_REF = "refs/heads/aiflare/timeline/v1";
export const SESSIONS_REF = "refs/heads/aiflare/sessions/v1";

/** Path of an entry inside the timeline tree: a two-level fan-out keeps appends cheap at any size. */
export function entryPath(commitHash: string): string {
  return `entries/${commitHash.slice(0, 2)}/${commitHash.slice(2)}.json`;
}

/** Digits of a segment number in its file name: names sort in segment order. */
const SEGMENT_DIGITS = 6;

/** The fan-out directory of a session: the first two hex digits of the SHA-1 of its id. */
export function sessionFanout(sessionId: string): string {
  return new Bun.CryptoHasher("sha1").update(sessionId).digest("hex").slice(0, 2);
}

/**
 * The directory of a session's transcript inside the sessions tree: `sessions/<2 hex>/<S>`. It holds the
 * append-only segments `000001.jsonl`, `000002.jsonl`, … whose concatenation in name order is the transcript.
 */
export function sessionDir(sessionId: string): string {
  return `sessions/${sessionFanout(sessionId)}/${sessionId}`;
}

/** The file name of segment `seq` of a session. */
export function segmentName(seq: number): string {
  return `${String(seq).padStart(SEGMENT_DIGITS, "0")}.jsonl`;
}

/** Path of one segment of a session transcript. */
export function segmentPath(sessionId: string, seq: number): string {
  return `${sessionDir(sessionId)}/${segmentName(seq)}`;
}

/** Path of a whole transcript in the first layout (`sessions/<S>.jsonl`), still read before any segment. */
export function legacySessionPath(sessionId: string): string {
  return `sessions/${sessionId}.jsonl`;
}

/** Matches a segment path: session id in group 1, segment number in group 2. */
export const SEGMENT_PATH_RE = /^sessions\/[0-9a-f]{2}\/([^/]+)\/(\d+)\.jsonl$/;
/** Matches a first-layout transcript path: session id in group 1. */
export const LEGACY_SESSION_PATH_RE = /^sessions\/([^/]+)\.jsonl$/;

/** What HEAD holds (`ref: refs/heads/main` or a commit hash), read from the git dir without git; "" when unreadable. */
export function readHead(gitDir: string): string {
  try {
    return readFileSync(join(gitDir, "HEAD"), "utf8").trim();
  } catch {
    return "";
  }
}

/**
 * Reads a ref's commit hash straight from the common git dir (loose file, then packed-refs),
 * without spawning git. Returns null when the ref does not exist.
 */
export function readRef(commonDir: string, ref: string): string | null {
  // Each file is looked for before it is read: hooks ask for refs that do not exist yet, and a thrown ENOENT
  // costs them more than the lookup.
  const loosePath = join(commonDir, ref);
  try {
    const loose = existsSync(loosePath) ? readFileSync(loosePath, "utf8").trim() : "";
    if (isFullHash(loose)) return loose;
  } catch {
    // not a loose ref
  }
  const packedPath = join(commonDir, "packed-refs");
  try {
    if (!existsSync(packedPath)) return null;
    const packed = readFileSync(packedPath, "utf8");
    for (const line of packed.split("\n")) {
      if (line.length > 41 && line.charCodeAt(40) === 32 && line.slice(41) === ref) {
        const hash = line.slice(0, 40);
        if (isFullHash(hash)) return hash;
      }
    }
  } catch {
    // no packed-refs
  }
  return null;
}
