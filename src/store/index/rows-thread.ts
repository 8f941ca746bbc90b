import { AiflareError } from "../../errors.ts";
import type { EntryRow } from "./entry-rows.ts";
import { unpackBatch, type PackedBatch } from "./rows-batch.ts";

/**
 * The thread's code, bundled by scripts/build.ts into the executable as base64 (as plain text the literal slowed every
 * start of the executable, hooks included, by about 4 ms); from source, rows-worker.ts is loaded.
 */
declare const AIFLARE_ROWS_WORKER_JS: string | undefined;

/** From this many entries on, a refresh reads them on a thread of its own: below, starting it costs more than it saves. */
export const THREAD_MIN_ENTRIES = 2000;

function startWorker(): Worker {
  if (typeof AIFLARE_ROWS_WORKER_JS === "string") {
    const code = Buffer.from(AIFLARE_ROWS_WORKER_JS, "base64");
    return new Worker(URL.createObjectURL(new Blob([code], { type: "application/javascript" })));
  }
  return new Worker(new URL("./rows-worker.ts", import.meta.url).href);
}

/**
 * `readEntryRows` on a thread of its own (rows-worker.ts), handing over each row on this thread as it arrives, so
 * that reading and parsing the entries overlap with writing them. Resolves to how many entries were left out, or
 * to null when the thread could not start (nothing was handed over: the caller reads them itself).
 */
export function readEntryRowsInThread(
  commonDir: string,
  wanted: Map<string, string[]>,
  onRow: (row: EntryRow) => void,
): Promise<number | null> {
  let worker: Worker;
  try {
    worker = startWorker();
  } catch {
    return Promise.resolve(null);
  }
  return new Promise((resolve, reject) => {
    let started = false;
    let received = 0;
    const fail = (err: unknown) => {
      worker.terminate();
      reject(err);
    };
    worker.onmessage = (e: MessageEvent<Partial<PackedBatch> & { done?: true; skipped?: number; error?: string }>) => {
      started = true;
      const { error, skipped } = e.data;
      if (e.data.rows) {
        const rows = unpackBatch(e.data as PackedBatch);
        try {
          for (const row of rows) onRow(row);
        } catch (err) {
          fail(err);
        }
        // the copies made for this thread are garbage once written: collect them as they come (see readEntryRows)
        if (Math.floor(received / 4000) !== Math.floor((received += rows.length) / 4000)) Bun.gc(true);
        worker.postMessage("written");
        return;
      }
      worker.terminate();
      if (error !== undefined) reject(new AiflareError("GIT", error));
      else resolve(skipped ?? 0);
    };
    worker.onerror = (e) => {
      if (started) fail(new Error(`reading entries: ${e.message}`));
      else {
        worker.terminate();
        resolve(null);
      }
    };
    worker.postMessage({ commonDir, wanted: [...wanted] });
  });
}
