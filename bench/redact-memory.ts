/**
 * Child process of redact.bench.ts: redacts a transcript file and prints the process's peak resident memory.
 * `stream` is the path `aiflare redact <file>` takes: the file read in chunks and redacted piece by piece
 * (both stages), the output written to /dev/null as it goes. `whole` reads the whole file into one string and
 * redacts it for writing at once (as the commit hook does); `read` only reads it whole; `tiny` streams one line.
 * Usage: bun bench/redact-memory.ts <file> <stream|whole|read|tiny>
 */
import { closeSync, openSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readTextChunks, redactForDisplay } from "../src/core/redact.ts";
import { redactForWrite } from "../src/redact/index.ts";

const [file, mode] = process.argv.slice(2);
const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync("/proc/self/status", "utf8"))![1]) * 1024;
let outLength = 0;
const t0 = performance.now();
if (mode === "stream" || mode === "tiny") {
  let path = file!;
  if (mode === "tiny") {
    path = join(tmpdir(), `aiflare-redact-tiny-${process.pid}.jsonl`);
    writeFileSync(path, `${JSON.stringify({ type: "user", message: { role: "user", content: "hello /home/alice/x" } })}\n`);
  }
  const out = openSync("/dev/null", "w");
  for await (const piece of redactForDisplay(readTextChunks(path), tmpdir())) {
    if (piece.refused) throw new Error("refused");
    outLength += writeSync(out, `${piece.text}\n`);
  }
  closeSync(out);
} else {
  const text = readFileSync(file!, "utf8");
  if (mode === "whole") outLength = redactForWrite(text, { jsonl: true }).length;
}
const ms = performance.now() - t0;
console.log(JSON.stringify({ peak: kb("VmHWM"), ms, outLength }));
