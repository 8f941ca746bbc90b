/**
 * A thread that reads and parses entries for a first import (see rows-thread.ts): the main thread meanwhile
 * writes the rows it has into SQLite. Receives `{ commonDir, wanted }`, posts batches (each answered "written"),
 * then `{ done: true, skipped }` or `{ done: true, error }`.
 */
import { readEntryRows, type EntryRow } from "./entry-rows.ts";
import { packBatch } from "./rows-batch.ts";

declare const self: Worker;

/** Rows per message: large enough that posting costs little, small enough that both threads stay busy. */
const BATCH = 200;

/** Batches posted and not yet written: reading waits beyond this, so rows never pile up in memory. */
const IN_FLIGHT = 4;

let inFlight = 0;
let resume: (() => void) | null = null;

/** Posts a batch, its searchable text handed over rather than copied (see packBatch). */
function post(rows: EntryRow[]): void {
  const batch = packBatch(rows);
  self.postMessage(batch, [batch.text, batch.ends.buffer]);
}

self.onmessage = async (e: MessageEvent<"written" | { commonDir: string; wanted: [string, string[]][] }>) => {
  if (e.data === "written") {
    inFlight--;
    resume?.();
    resume = null;
    return;
  }
  let batch: EntryRow[] = [];
  try {
    const skipped = await readEntryRows(e.data.commonDir, new Map(e.data.wanted), (row) => {
      batch.push(row);
      if (batch.length < BATCH) return;
      post(batch);
      batch = [];
      if (++inFlight < IN_FLIGHT) return;
      return new Promise<void>((r) => (resume = r));
    });
    if (batch.length) post(batch);
    self.postMessage({ done: true, skipped });
  } catch (err) {
    self.postMessage({ done: true, error: err instanceof Error ? err.message : String(err) });
  }
};
