/**
 * `history list`: the entries of the index, filtered, as text grouped by session or as JSON. Kept apart from `history
 * show` and `why` (index.ts), which read git, links and the team's entries: listing loads none of that.
 */
import type { Database } from "bun:sqlite";
import { AiflareError } from "../../errors.ts";
import { streamEntryJson, withIndex } from "../../store/index-db.ts";
import { finishQueued } from "../capture/queue.ts";
import { findRepo, type RepoPaths } from "../repo.ts";
import { buildFilter, type FilterInput } from "./filters.ts";
import { countEntries, countMatching, entryBlobs, listEntries, sessionInfo } from "./query.ts";
import { renderList } from "./render.ts";
import type { Style } from "./style.ts";

export interface ViewContext {
  cwd: string;
  now: Date;
  style: Style;
}

export function repoAt(cwd: string): RepoPaths {
  const repo = findRepo(cwd);
  if (!repo) throw new AiflareError("NOT_A_REPO", `${cwd} is not inside a git repository. Run aiflare from your project.`);
  return repo;
}

/** Text output shows this many entries unless --limit says otherwise (JSON shows all). */
const DEFAULT_LIST_LIMIT = 100;

/** Output is handed to the writer in pieces of about this size. */
const STREAM_CHUNK = 256 * 1024;

/**
 * Writes the entries matching `filter` as a JSON array (as `JSON.stringify(entries, null, 2)` would),
 * one entry at a time, so that any number of entries fits in flat memory.
 */
async function streamJsonArray(db: Database, blobs: string[], write: (text: string) => Promise<void>): Promise<void> {
  let buf = "";
  let first = true;
  let writing = Promise.resolve();
  let chunks = 0;
  await streamEntryJson(db, blobs, async (item) => {
    // JSON text holds no raw newlines in strings, so indenting every line nests the entry one level deeper.
    buf += `${first ? "[\n" : ",\n"}  ${JSON.stringify(JSON.parse(item), null, 2).replaceAll("\n", "\n  ")}`;
    first = false;
    if (buf.length >= STREAM_CHUNK) {
      const out = buf;
      buf = "";
      // each entry is parsed and printed again: collect that garbage as it is made, or the heap grows with the count
      if (++chunks % 16 === 0) Bun.gc(true);
      // writes go out one after another, in order, however the reads are batched
      writing = writing.then(() => write(out));
      await writing;
    }
  });
  await writing;
  await write(first ? "[]\n" : `${buf}\n]\n`);
}

/**
 * `history list`: entries grouped by session, or a JSON array of entries (newest first). Given `write`, JSON
 * is streamed to it as it is read (and "" returned).
 */
export async function historyList(
  input: FilterInput & { json?: boolean },
  ctx: ViewContext,
  write?: (text: string) => Promise<void>,
): Promise<string> {
  const repo = repoAt(ctx.cwd);
  await finishQueued(repo.commonDir);
  const filter = buildFilter(input, { cwd: ctx.cwd, root: repo.root, now: ctx.now });
  return withIndex(repo.commonDir, async (db) => {
    if (input.json) {
      if (write) {
        await streamJsonArray(db, entryBlobs(db, filter), write);
        return "";
      }
      let text = "";
      await streamJsonArray(db, entryBlobs(db, filter), async (t) => void (text += t));
      return text;
    }
    const limit = filter.limitGiven ? filter.limit : DEFAULT_LIST_LIMIT;
    const rows = listEntries(db, { ...filter, limit });
    if (rows.length === 0) {
      const total = countEntries(db);
      return total === 0
        ? "No aiflare entries yet. They are recorded when a coding agent commits in this repository (see `aiflare install`).\n"
        : `No entries match (${total} recorded). Try fewer filters.\n`;
    }
    const sessions = sessionInfo(db, [...new Set(rows.map((r) => r.sessionId))]);
    const text = renderList(rows, sessions, ctx.style);
    if (limit === 0 || rows.length < limit) return text;
    const more = countMatching(db, filter) - rows.length;
    if (more <= 0) return text;
    return `${text}\n… ${more} older ${more === 1 ? "entry" : "entries"} not shown: --limit 0 shows all; --since, --grep or --file narrow them.\n`;
  });
}
