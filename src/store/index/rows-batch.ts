/**
 * How the reading thread's rows cross to the writing one (rows-worker.ts → rows-thread.ts). Posting strings copies
 * them twice (written out on one thread, read back on the other), which for a first import's searchable text cost
 * the writing thread about a tenth of its time: that text goes UTF-8 encoded in one buffer per batch, handed over
 * without a copy, and each column is bound to SQLite as a view of it.
 */
import type { EntryRow, FtsText } from "./entry-rows.ts";

/** A batch as posted: the rows without their searchable text, that text, and where each column of it ends. */
export interface PackedBatch {
  rows: Omit<EntryRow, "fts">[];
  /** every row's `fts` columns, one after another, UTF-8 encoded */
  text: ArrayBuffer;
  /** the byte offset in `text` where each column ends (five per row) */
  ends: Uint32Array<ArrayBuffer>;
}

const COLUMNS = 5;
const encoder = new TextEncoder();
/** Reused between batches; grown when a batch needs more. */
let scratch = new Uint8Array(0);

export function packBatch(rows: EntryRow[]): PackedBatch {
  let units = 0;
  for (const row of rows) for (const t of row.fts) units += t.length;
  // UTF-8 takes at most three bytes per UTF-16 code unit
  if (scratch.length < units * 3) scratch = new Uint8Array(units * 3);
  const ends = new Uint32Array(rows.length * COLUMNS);
  const out: Omit<EntryRow, "fts">[] = new Array(rows.length);
  let at = 0;
  let k = 0;
  for (let i = 0; i < rows.length; i++) {
    const { fts, ...rest } = rows[i]!;
    for (const t of fts) {
      at += typeof t === "string" ? encoder.encodeInto(t, scratch.subarray(at)).written : (scratch.set(t, at), t.length);
      ends[k++] = at;
    }
    out[i] = rest;
  }
  return { rows: out, text: scratch.slice(0, at).buffer, ends };
}

/** The rows of a posted batch, each column of their searchable text a view of the batch's buffer. */
export function unpackBatch(batch: PackedBatch): EntryRow[] {
  const rows: EntryRow[] = new Array(batch.rows.length);
  let start = 0;
  let k = 0;
  for (let i = 0; i < batch.rows.length; i++) {
    const fts: FtsText[] = [];
    for (let c = 0; c < COLUMNS; c++) {
      const end = batch.ends[k++]!;
      // the constructor rather than subarray, which looks up the species first (twice the time before the JIT)
      fts.push(new Uint8Array(batch.text, start, end - start));
      start = end;
    }
    rows[i] = { ...batch.rows[i]!, fts: fts as EntryRow["fts"] };
  }
  return rows;
}
