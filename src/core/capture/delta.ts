import { rmSync } from "node:fs";
import { atomicWrite, readOwnFile } from "../fsutil.ts";
import { parseJsonl } from "../../util/jsonl.ts";
import type { SessionFiles } from "../session.ts";

/*
 * The delta: conversation lines recorded since the previous capture. The offset file holds how many lines of the
 * live log were already cut; each cut writes the new lines to the delta file and moves the offset.
 */

export interface Delta {
  /** JSONL text of the new lines ("" when none) */
  text: string;
  /** at least one line has role "user" */
  hasUser: boolean;
  /** number of new lines */
  lines: number;
}

function readText(path: string): string | null {
  try {
    return readOwnFile(path);
  } catch (err) {
    // a symlink in place of a session file is refused loudly; anything else reads as absent
    if ((err as { code?: string }).code === "UNSAFE_PATH") throw err;
    return null;
  }
}

/** True when some JSONL record of `text` is a `user` line (broken lines say nothing about who spoke). */
export function deltaHasUser(text: string): boolean {
  return parseJsonl(text).some((r) => typeof r === "object" && r !== null && (r as { role?: unknown }).role === "user");
}

/** The number stored in the offset file (0 when absent or unreadable). */
export function readOffset(files: Pick<SessionFiles, "offset">): number {
  const n = Number.parseInt(readText(files.offset)?.trim() ?? "", 10);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/**
 * Cuts the delta: complete lines of the live log after the offset go to the delta file and the offset moves past
 * them. A log shorter than the offset (restarted) is cut from its start.
 */
export function cutDelta(files: Pick<SessionFiles, "prompts" | "offset" | "delta">): Delta {
  const log = readText(files.prompts) ?? "";
  // only complete lines: a writer may be appending right now
  const complete = log.slice(0, log.lastIndexOf("\n") + 1);
  const all = complete ? complete.slice(0, -1).split("\n") : [];
  let offset = readOffset(files);
  if (offset > all.length) offset = 0;
  const lines = all.slice(offset).filter((l) => l.trim() !== "");
  const text = lines.length ? `${lines.join("\n")}\n` : "";
  atomicWrite(files.delta, text, 0o600);
  atomicWrite(files.offset, `${all.length}\n`, 0o600);
  return { text, hasUser: deltaHasUser(text), lines: lines.length };
}

/** Reads the delta file and deletes it (for `capture` creating an entry the hook did not write). */
export function takeDeltaFile(files: Pick<SessionFiles, "delta">): string {
  const text = readText(files.delta) ?? "";
  rmSync(files.delta, { force: true });
  return text;
}
