/**
 * Child process of redact.bench.ts: reads a transcript file, redacts it for writing (both stages, as the commit
 * hook does) and prints the process's peak resident memory. `read` only reads; `tiny` redacts one line.
 * Usage: bun bench/redact-memory.ts <file> <redact|read|tiny>
 */
import { readFileSync } from "node:fs";
import { redactForWrite } from "../src/redact/index.ts";

const [file, mode] = process.argv.slice(2);
const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync("/proc/self/status", "utf8"))![1]) * 1024;
const text = mode === "tiny" ? `${JSON.stringify({ type: "user", message: { role: "user", content: "hello /home/alice/x" } })}\n` : readFileSync(file!, "utf8");
const afterRead = kb("VmRSS");
let outLength = 0;
if (mode !== "read") outLength = redactForWrite(text, { jsonl: true }).length;
console.log(JSON.stringify({ peak: kb("VmHWM"), afterRead, chars: text.length, outLength }));
