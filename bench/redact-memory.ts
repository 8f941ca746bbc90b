/**
 * Child process of redact.bench.ts: reads a transcript file whole and prints the process's peak resident memory
 * and time. `whole` also redacts it for writing at once, as one string (as the commit hook does with a
 * conversation's new part, and `aiflare import` with a session); `read` only reads it.
 * (`aiflare redact <file>`, which streams, is measured as the compiled binary.)
 * Usage: bun bench/redact-memory.ts <file> <whole|read>
 */
import { readFileSync } from "node:fs";
import { redactForWrite } from "../src/redact/index.ts";

const [file, mode] = process.argv.slice(2);
const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync("/proc/self/status", "utf8"))![1]) * 1024;
let outLength = 0;
const t0 = performance.now();
const text = readFileSync(file!, "utf8");
if (mode === "whole") outLength = redactForWrite(text, { jsonl: true }).length;
const ms = performance.now() - t0;
console.log(JSON.stringify({ peak: kb("VmHWM"), ms, outLength }));
