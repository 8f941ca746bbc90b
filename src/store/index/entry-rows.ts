import * as v from "valibot";
import { conversationLines } from "../../util/jsonl.ts";
import { streamBlobs } from "../../util/git.ts";
import { entrySchema, entryTimes, UNTAGGED } from "../entry.ts";
import { ObjectStore } from "../objects.ts";

/**
 * Up to this many objects, a refresh reads them in this process: after a commit or two, starting git costs more than
 * the reads themselves, and the hooks that find the index behind (session start, recall) wait for it.
 */
export const INLINE_OBJECTS = 256;

/** Longest user prompt kept for list rendering (the full text stays in the full-text index). */
const PROMPT_KEEP = 400;

/** What the index stores of one entry: its row, its files and its searchable text, in plain values. */
export interface EntryRow {
  /** the `entries` columns, in the order of INSERT_ENTRY */
  cols: [
    hash: string,
    oid: string,
    session: string,
    groupRoot: string | null,
    tag: string,
    agent: string,
    branch: string,
    title: string,
    capturedAt: string,
    ms: number,
    recordedMs: number,
    prompts: string,
    summaryStatus: string | null,
    author: string | null,
  ];
  files: string[];
  /** the commit's renames as `[new path, old path]` (recall follows a file through them) */
  renames: [to: string, from: string][];
  /** title, intent, alternatives, diff summary, conversation: the `entries_fts` columns */
  fts: [FtsText, FtsText, FtsText, FtsText, FtsText];
}

/**
 * Searchable text: a string, or its UTF-8 bytes as the reading thread hands them over (rows-thread.ts). SQLite
 * reads a blob bound there as the text it encodes, so both are indexed alike.
 */
export type FtsText = string | Uint8Array;

export const INSERT_ENTRY = `INSERT INTO entries (commit_hash, blob_oid, session_id, group_root, tag, agent_type, branch, title, captured_at, captured_ms, recorded_ms, prompts, summary_status, author)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** The row of the entry file `text` (blob `oid`) at the path of commit `hash`, or null when it is not a valid entry of it. */
export function entryRow(text: string, hash: string, oid: string): EntryRow | null {
  let entry;
  try {
    const parsed = v.safeParse(entrySchema(), JSON.parse(text));
    if (!parsed.success || parsed.output.commitHash !== hash) return null;
    entry = parsed.output;
  } catch {
    return null;
  }
  const lines = conversationLines(entry.conversationSnippet);
  const prompts: string[] = [];
  const conversation: string[] = [];
  for (const l of lines) {
    if (l.role === "user") prompts.push(l.content.slice(0, PROMPT_KEEP));
    conversation.push(l.content);
  }
  const { ms, recordedMs } = entryTimes(entry);
  return {
    cols: [
      hash,
      oid,
      entry.claudeSessionId,
      entry.groupRootId,
      entry.tag ?? UNTAGGED,
      entry.agentType,
      entry.branch,
      entry.title,
      entry.capturedAt,
      ms,
      recordedMs,
      JSON.stringify(prompts),
      entry.summaryStatus ?? null,
      entry.author ?? null,
    ],
    files: [...new Set(entry.changedFiles)],
    renames: (entry.renames ?? []).filter((r) => r.from !== r.to).map((r) => [r.to, r.from] as [string, string]),
    fts: [entry.title, entry.intent, entry.alternatives, entry.diffSummary, conversation.join("\n")],
  };
}

/** Each blob of `oids` (missing ones skipped): a few read in this process, many streamed from one git process. */
async function eachBlob(commonDir: string, oids: string[], onBlob: (oid: string, bytes: Uint8Array) => void | Promise<void>): Promise<void> {
  if (oids.length > INLINE_OBJECTS) return streamBlobs(commonDir, oids, onBlob);
  const store = new ObjectStore(commonDir);
  for (const oid of oids) {
    const obj = store.tryRead(oid);
    if (obj?.type === "blob") await onBlob(oid, obj.content);
  }
}

/**
 * Reads the blobs of `wanted` (blob → the commit hashes whose paths hold it) out of git and hands over the row of
 * each valid entry (reading waits while `onRow`'s promise is pending); returns how many were left out (missing or
 * invalid).
 */
export async function readEntryRows(
  commonDir: string,
  wanted: Map<string, string[]>,
  onRow: (row: EntryRow) => void | Promise<void>,
): Promise<number> {
  let made = 0;
  let asked = 0;
  for (const hashes of wanted.values()) asked += hashes.length;
  const decoder = new TextDecoder();
  await eachBlob(commonDir, [...wanted.keys()], async (oid, bytes) => {
    const text = decoder.decode(bytes);
    for (const hash of wanted.get(oid) ?? []) {
      const row = entryRow(text, hash, oid);
      if (!row) continue;
      // parsing leaves garbage the size of the data: collect it as it is made, or a first import's memory grows
      // with the number of entries
      if (++made % 4000 === 0) Bun.gc(true);
      await onRow(row);
    }
  });
  return asked - made;
}
