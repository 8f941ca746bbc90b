/**
 * Key checks under a flood of wrong keys: the compiled binary on SQLite, 8 senders of well-formed wrong keys from
 * rotating addresses (--trust-proxy), so each one costs a hash and a database lookup. Prints the flood's rate and a
 * valid key's latency with and without it.
 */
import { join } from "node:path";
import { binary, testEnv } from "../test/helpers.ts";
import { fmt, median, percentile, startServe, tempDir } from "./lib.ts";

const BIN = binary();
const SENDERS = 8;
const PER_SENDER = 500;

const home = tempDir();
const database = join(home, "bench.sqlite");
const key = JSON.parse(Bun.spawnSync([BIN, "serve", "project", "create", "bench", "--json", "--database", database], { env: testEnv(home) }).stdout.toString()).key;
const server = await startServe(BIN, database, home, ["--trust-proxy"]);

async function valid(n: number): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await fetch(`${server.url}/api/v1/auth/me`, { headers: { "x-api-key": key, "x-forwarded-for": "192.0.2.1" } });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`a valid key answered ${r.status}`);
    ms.push(performance.now() - t0);
  }
  return ms;
}

const quiet = await valid(200);
const statuses = new Map<number, number>();
let flooding = true;
const t0 = performance.now();
const flood = Promise.all(
  Array.from({ length: SENDERS }, async (_, s) => {
    for (let i = 0; i < PER_SENDER; i++) {
      const wrong = `afk_${`${s}x${i}`.padEnd(43, "q")}`;
      const r = await fetch(`${server.url}/api/v1/auth/me`, { headers: { "x-api-key": wrong, "x-forwarded-for": `2001:db8:${s}:${i.toString(16)}::1` } });
      await r.arrayBuffer();
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    }
  }),
).then(() => {
  flooding = false;
  return performance.now() - t0;
});
const during: number[] = [];
while (flooding) during.push(...(await valid(10)));
const floodMs = await flood;
await server.stop();

const total = SENDERS * PER_SENDER;
console.log(`wrong keys: ${total} in ${(floodMs / 1000).toFixed(2)} s = ${Math.round(total / (floodMs / 1000))}/s; answers ${JSON.stringify(Object.fromEntries(statuses))}`);
console.log(`valid key, quiet:        p50 ${fmt(median(quiet))}, p95 ${fmt(percentile(quiet, 95))} (${quiet.length} requests, all 200)`);
console.log(`valid key, during flood: p50 ${fmt(median(during))}, p95 ${fmt(percentile(during, 95))} (${during.length} requests, all 200)`);
