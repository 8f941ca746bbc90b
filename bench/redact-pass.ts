/**
 * The team server's redaction pass alone, in CPU µs per entry: `checkEntry` (everything the write API does to an
 * entry before the database) with the redactor less the same without it, over the ingest benchmark's entries
 * (bench/ingest-data.ts); and the two scans the pass is made of, over each entry's strings joined as it joins them.
 * Run alone (`bun run bench/redact-pass.ts [entries]`) or from ingest.bench.ts.
 */
import { keywordHits } from "../src/redact/engine.ts";
import { hiddenSpans } from "../src/redact/hidden.ts";
import { defaultRuleSet } from "../src/redact/options.ts";
import { checkEntry } from "../src/server/ingest.ts";
import type { Entry } from "../src/store/entry.ts";
import { benchEntry } from "./ingest-data.ts";
import { median } from "./lib.ts";

/**
 * CPU µs per item of `fn` over `n` items: the median of `rounds` passes after one to warm up. This process's CPU
 * time, which other work on a shared machine disturbs far less than the wall clock.
 */
async function perItem(n: number, fn: (i: number) => unknown, rounds: number): Promise<number> {
  const times: number[] = [];
  for (let r = 0; r <= rounds; r++) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < n; i++) await fn(i);
    const t = process.cpuUsage(t0);
    if (r > 0) times.push((t.user + t.system) / n);
  }
  return median(times);
}

const noPause = async () => {};

/** CPU µs per entry of the write API's checks with and without the redactor, and their difference. */
export async function redactionPassCost(entries: readonly Entry[], rounds = 7): Promise<{ with: number; without: number; pass: number }> {
  const check = (redact: boolean) => async (i: number) => {
    const r = await checkEntry(entries[i], { nowMs: Date.parse("2030-01-01T00:00:00Z"), redact }, noPause);
    if (!("row" in r)) throw new Error(r.reason);
  };
  // alternated, so that a busy spell weighs on both alike
  const withs: number[] = [];
  const withouts: number[] = [];
  for (let r = 0; r < rounds; r++) {
    withs.push(await perItem(entries.length, check(true), 1));
    withouts.push(await perItem(entries.length, check(false), 1));
  }
  const w = median(withs);
  const wo = median(withouts);
  return { with: w, without: wo, pass: w - wo };
}

/** The strings of a value, in the order the pass collects them. */
function strings(x: unknown, out: string[] = []): string[] {
  if (typeof x === "string") out.push(x);
  else if (x && typeof x === "object") for (const v of Object.values(x)) strings(v, out);
  return out;
}

/** CPU µs per entry of the keyword scan and of the hidden-text scan over each entry's strings joined. */
export async function scanCosts(entries: readonly Entry[], rounds = 7): Promise<{ keywords: number; hidden: number }> {
  const set = defaultRuleSet();
  const joined = entries.map(({ conversationSnippet, ...fields }) => {
    const lines = conversationSnippet.split("\n").map((l) => {
      try {
        return JSON.parse(l) as unknown;
      } catch {
        return l;
      }
    });
    return `${strings(fields).join("\0")}\0${strings(lines).join("\0")}`;
  });
  return {
    keywords: await perItem(joined.length, (i) => keywordHits(joined[i]!, set), rounds),
    hidden: await perItem(joined.length, (i) => hiddenSpans(joined[i]!, set, undefined), rounds),
  };
}

if (import.meta.main) {
  const n = Number(process.argv[2] ?? 400);
  const entries = Array.from({ length: n }, (_, i) => benchEntry(i, { secretEvery: 50 }));
  const cost = await redactionPassCost(entries);
  console.log(`write API checks, CPU µs per entry: ${cost.with.toFixed(0)} with the redactor, ${cost.without.toFixed(0)} without`);
  console.log(`redaction pass µs per entry: ${cost.pass.toFixed(0)}`);
  const scans = await scanCosts(entries);
  console.log(`  keyword scan µs per entry: ${scans.keywords.toFixed(1)}; hidden-text scan: ${scans.hidden.toFixed(1)}`);
}
