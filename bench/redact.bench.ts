/**
 * Redaction figures, each with its goal and whether it is met:
 * - recall on the labelled positives (test/fixtures/secrets/positives.jsonl), goal 100%;
 * - the evasion corpus (test/fixtures/secrets/evasion.ts) fully redacted as text and as JSONL, goal all cases;
 * - false positives per MB on the negatives and on real code (test/fixtures/secrets/code), goal ≤ 0.2 per MB on code;
 * - throughput of both stages (`redactForWrite`, as the commit hook runs it) on ~20 MB of real Claude Code
 *   transcripts (test/fixtures/claude-code repeated), goal ≥ 20 MB/s, against one String.replace pass as baseline;
 * - `aiflare redact <file>` (the compiled binary, which reads in chunks and writes as it goes) on those 20 MB: its
 *   throughput, whole process, goal ≥ 20 MB/s; and its peak memory on them and on a quarter of them: what grows
 *   with the input (the slope through the two) must be ≤ 2 × input, what does not (the runtime, compiled code) is
 *   the constant; redacting them whole, as one string, is shown for comparison.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { redactForWrite, redactJsonl, redactText } from "../src/redact/index.ts";
import { evasionCases } from "../test/fixtures/secrets/evasion.ts";
import { median, peakRss, percentile, sample } from "./lib.ts";

const ROOT = join(import.meta.dir, "..");
const DIR = join(ROOT, "test", "fixtures", "secrets");
const verdict = (ok: boolean) => (ok ? "met" : "NOT MET");
const row = (name: string, value: string, goal: string, ok: boolean) =>
  console.log(`${name.padEnd(40)} ${value.padEnd(44)} goal ${goal.padEnd(22)} ${verdict(ok)}`);

// --- recall on the labelled positives ---
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
row("recall, labelled positives", `${removed}/${positives.length} (${kinds} kinds), ${named} named right`, "100%", removed === positives.length);
if (missed.length) console.log(`  missed: ${missed.slice(0, 10).join(", ")}`);

// --- evasion corpus ---
const cases = evasionCases();
let evaded = 0;
for (const c of cases) {
  const asText = redactText(c.text).text;
  const asJsonl = JSON.parse(redactJsonl(JSON.stringify({ content: c.text })).text).content as string;
  if (c.needles.some((n) => asText.includes(n) || asJsonl.includes(n))) {
    evaded++;
    console.log(`  not redacted: ${c.form}: ${c.name}`);
  }
}
const forms = [...new Set(cases.map((c) => c.form))].join(", ");
row("evasion cases redacted", `${cases.length - evaded}/${cases.length} (${forms})`, "all", evaded === 0);

// --- false positives ---
function fpRate(name: string, text: string, jsonl: boolean, goal?: number): void {
  const mb = Buffer.byteLength(text) / 1e6;
  const f = (jsonl ? redactJsonl(text) : redactText(text)).findings;
  const rate = f.length / mb;
  const value = `${f.length} in ${mb.toFixed(2)} MB = ${rate.toFixed(2)}/MB`;
  if (goal === undefined) console.log(`${name.padEnd(40)} ${value}`);
  else row(name, value, `≤ ${goal}/MB`, rate <= goal);
  if (f.length) console.log(`  ${f.slice(0, 8).map((x) => `${x.kind}@${x.line}`).join(", ")}`);
}
const negatives = readdirSync(join(DIR, "negatives")).sort();
const negText = negatives.filter((f) => !f.endsWith(".jsonl")).map((f) => readFileSync(join(DIR, "negatives", f), "utf8")).join("\n");
fpRate("false positives, negatives (text)", negText, false, 0.2);
fpRate("false positives, negatives (transcript)", readFileSync(join(DIR, "negatives", "transcript.jsonl"), "utf8"), true, 0.2);
for (const f of ["typescript.txt", "python.txt", "npm.txt"]) fpRate(`false positives, code: ${f}`, readFileSync(join(DIR, "code", f), "utf8"), false, 0.2);
// the whole TypeScript lib folder as installed (not a fixture; for a wider figure)
const tsLib = join(ROOT, "node_modules", "typescript", "lib");
const tsFiles = readdirSync(tsLib).filter((f) => f.endsWith(".d.ts") || f === "typescript.js");
fpRate("  (info) node_modules/typescript/lib", tsFiles.map((f) => readFileSync(join(tsLib, f), "utf8")).join("\n"), false);

// --- throughput on ~20 MB of real transcripts ---
function transcripts(target: number): string {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (n.endsWith(".jsonl")) files.push(p);
    }
  };
  walk(join(ROOT, "test", "fixtures", "claude-code"));
  const parts = files.map((f) => readFileSync(f, "utf8").trimEnd());
  const out: string[] = [];
  let size = 0;
  while (size < target) {
    for (const p of parts) {
      out.push(p);
      size += Buffer.byteLength(p) + 1;
      if (size >= target) break;
    }
  }
  return `${out.join("\n")}\n`;
}
const big = transcripts(20e6);
const bigMb = Buffer.byteLength(big) / 1e6;
const HOME = /\/home\/[^/\s]+/g;
const base = sample(5, () => {
  const t0 = performance.now();
  big.replace(HOME, "~");
  return performance.now() - t0;
}, 1);
const cpu: number[] = [];
const wall = sample(5, () => {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  redactForWrite(big, { jsonl: true });
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  cpu.push((c.user + c.system) / 1000);
  return ms;
}, 1);
const rate = (ms: number) => bigMb / (ms / 1000);
console.log(`baseline: one String.replace pass        ${rate(median(base)).toFixed(1)} MB/s over ${bigMb.toFixed(1)} MB`);
row(
  "throughput, both stages, wall clock",
  `${rate(median(wall)).toFixed(1)} MB/s (median ${median(wall).toFixed(0)} ms, p95 ${percentile(wall, 95).toFixed(0)} ms)`,
  "≥ 20 MB/s",
  rate(median(wall)) >= 20,
);
row("throughput, both stages, CPU time", `${rate(median(cpu)).toFixed(1)} MB/s (median ${median(cpu).toFixed(0)} ms CPU)`, "≥ 20 MB/s", rate(median(cpu)) >= 20);

// --- peak memory, in a fresh process per measurement ---
const tmp = mkdtempSync(join(tmpdir(), "aiflare-redact-mem-"));
try {
  const file = join(tmp, "transcripts.jsonl");
  writeFileSync(file, big);
  // a quarter of it, cut after a line: the peak at two sizes tells what grows with the input from what does not
  const quarter = big.slice(0, big.lastIndexOf("\n", big.length / 4) + 1);
  const quarterFile = join(tmp, "quarter.jsonl");
  writeFileSync(quarterFile, quarter);
  const peak = (mode: string, path = file) => {
    const r = Bun.spawnSync(["bun", join(import.meta.dir, "redact-memory.ts"), path, mode], { stdout: "pipe", stderr: "inherit" });
    if (r.exitCode !== 0) throw new Error(`redact-memory ${mode} failed`);
    return JSON.parse(r.stdout.toString()) as { peak: number; ms: number };
  };
  // `aiflare redact <file>` itself: the compiled binary in a fresh process, output to /dev/null
  const BIN = join(ROOT, "dist", "aiflare");
  if (!existsSync(BIN)) throw new Error("dist/aiflare is missing: run bun run build first");
  const MB = 1024 * 1024;
  const aiflare = (path: string) => {
    const r = peakRss([BIN, "redact", path], { cwd: tmp, stdout: "ignore" });
    return { ms: r.ms, peak: r.mb * MB };
  };
  const oneLine = join(tmp, "one-line.jsonl");
  writeFileSync(oneLine, `${JSON.stringify({ type: "user", message: { role: "user", content: "hello /home/alice/x" } })}\n`);
  const tiny = aiflare(oneLine).peak;
  const read = peak("read").peak;
  const wholeRun = peak("whole");
  const whole = wholeRun.peak;
  const runs = [1, 2, 3, 4, 5].map(() => aiflare(file));
  const streamed = Math.max(...runs.map((r) => r.peak));
  const ms = median(runs.map((r) => r.ms));
  const input = Buffer.byteLength(big);
  const quarterPeak = Math.max(...[1, 2, 3].map(() => aiflare(quarterFile).peak));
  const quarterInput = Buffer.byteLength(quarter);
  // peak = slope × input + constant, through the two sizes
  const slope = (streamed - quarterPeak) / (input - quarterInput);
  const constant = streamed - slope * input;
  const inMemory = big.length * (/[^\x00-\xff]/.test(big) ? 2 : 1);
  const times = (p: number) => `${(p / MB).toFixed(0)} MB = ${((p - tiny) / input).toFixed(1)} × input + ${(tiny / MB).toFixed(0)} MB`;
  console.log(
    `peak memory: aiflare redact of one line ${(tiny / MB).toFixed(0)} MB; reading the ${(input / MB).toFixed(0)} MB file whole ${(read / MB).toFixed(0)} MB ` +
      `(the text is ${(inMemory / MB).toFixed(0)} MB in memory, ${inMemory > big.length ? "UTF-16" : "Latin-1"})`,
  );
  console.log(`  (info) redacting it whole for writing (commit hook), fresh process: ${times(whole)}, ${rate(wholeRun.ms).toFixed(1)} MB/s`);
  row("throughput, aiflare redact <file>", `${rate(ms).toFixed(1)} MB/s (median ${ms.toFixed(0)} ms, whole process)`, "≥ 20 MB/s", rate(ms) >= 20);
  console.log(`  (info) peak of aiflare redact <file> over the one-line run: ${times(streamed)}`);
  row(
    "peak memory, aiflare redact <file>",
    `${(quarterPeak / MB).toFixed(0)} MB for ${(quarterInput / MB).toFixed(0)} MB, ${(streamed / MB).toFixed(0)} MB for ${(input / MB).toFixed(0)} MB: ` +
      `${slope.toFixed(2)} × input + ${(constant / MB).toFixed(0)} MB`,
    "≤ 2 × input + const",
    slope <= 2,
  );
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
