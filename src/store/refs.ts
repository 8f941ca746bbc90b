import { readFileSync } from "node:fs";
import { join } from "node:path";
import { isFullHash } from "../util/ids.ts";

/** The two local-only branches (SPEC §3). */
export const TIMELINE_REF = "refs/heads/aiflare/timeline/v1";
export const SESSIONS_REF = "refs/heads/aiflare/sessions/v1";

/** Path of an entry inside the timeline tree: a two-level fan-out keeps appends cheap at any size. */
export function entryPath(commitHash: string): string {
  return `entries/${commitHash.slice(0, 2)}/${commitHash.slice(2)}.json`;
}

/** Path of a session transcript inside the sessions tree. */
export function sessionPath(sessionId: string): string {
  return `sessions/${sessionId}.jsonl`;
}

/**
 * Reads a ref's commit hash straight from the common git dir (loose file, then packed-refs),
 * without spawning git or loading isomorphic-git. Returns null when the ref does not exist.
 */
export function readRef(commonDir: string, ref: string): string | null {
  try {
    const loose = readFileSync(join(commonDir, ref), "utf8").trim();
    if (isFullHash(loose)) return loose;
  } catch {
    // not a loose ref
  }
  try {
    const packed = readFileSync(join(commonDir, "packed-refs"), "utf8");
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
