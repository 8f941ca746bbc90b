/**
 * Redaction figures: recall on the labelled positives, false positives per MB of the negatives, and throughput
 * in MB/s against a baseline (one plain `String.prototype.replace` pass over the same text, in this process).
 * Targets: recall ≥ 99%, ≤ 1 false positive per MB, ≥ 20 MB/s.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { redactJsonl, redactText } from "../src/redact/index.ts";
import { median, percentile, sample } from "./lib.ts";

const DIR = join(import.meta.dir, "..", "test", "fixtures", "secrets");

interface Positive {
  kind: string;
  format: string;
  text: string;
  needle: string;
}
const positives = readFileSync(join(DIR, "positives.jsonl"), "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Positive);

let removed = 0;
let named = 0;
const missed: string[] = [];
for (const p of positives) {
  const out = p.format === "jsonl" ? redactJsonl(p.text) : redactText(p.text);
  const gone = !out.text.includes(p.needle);
  if (gone) removed++;
  else missed.push(`${p.kind} (${p.format})`);
  if (gone && out.findings.some((f) => f.kind === p.kind)) named++;
}
const kinds = new Set(positives.map((p) => p.kind)).size;
console.log(`recall (secret removed)        ${((100 * removed) / positives.length).toFixed(2)}%  ${removed}/${positives.length} samples, ${kinds} kinds  (target ≥ 99%)`);
console.log(`recall (removed, right kind)   ${((100 * named) / positives.length).toFixed(2)}%`);
if (missed.length) console.log(`  missed: ${missed.slice(0, 10).join(", ")}`);

const negatives = readdirSync(join(DIR, "negatives"))
  .sort()
  .map((f) => ({ name: f, text: readFileSync(join(DIR, "negatives", f), "utf8") }));
const negBytes = negatives.reduce((a, n) => a + Buffer.byteLength(n.text), 0);
const redact = (n: { name: string; text: string }) => (n.name.endsWith(".jsonl") ? redactJsonl(n.text) : redactText(n.text));
let fps = 0;
for (const n of negatives) {
  const f = redact(n).findings;
  fps += f.length;
  if (f.length) console.log(`  false positives in ${n.name}: ${f.map((x) => `${x.kind}@${x.line}`).join(", ")}`);
}
const mb = negBytes / 1e6;
console.log(`false positives                ${fps} in ${mb.toFixed(2)} MB = ${(fps / mb).toFixed(2)} per MB  (target ≤ 1)`);

// throughput over the whole negative corpus plus the positives, warm
const all = [...negatives, { name: "positives.txt", text: positives.map((p) => p.text).join("\n") }];
const allMb = all.reduce((a, n) => a + Buffer.byteLength(n.text), 0) / 1e6;
const HOME = /\/home\/[^/\s]+/g;
const base = sample(9, () => {
  const t0 = performance.now();
  for (const n of all) n.text.replace(HOME, "~");
  return performance.now() - t0;
});
const ours = sample(9, () => {
  const t0 = performance.now();
  for (const n of all) redact(n);
  return performance.now() - t0;
});
const rate = (ms: number) => (allMb / (ms / 1000)).toFixed(1);
console.log(`baseline: one String.replace   ${rate(median(base))} MB/s  (median ${median(base).toFixed(1)} ms over ${allMb.toFixed(2)} MB)`);
console.log(`redactor                       ${rate(median(ours))} MB/s  (median ${median(ours).toFixed(1)} ms, p95 ${percentile(ours, 95).toFixed(1)} ms)  ratio ${(median(ours) / median(base)).toFixed(1)}x baseline time  (target ≥ 20 MB/s)`);
