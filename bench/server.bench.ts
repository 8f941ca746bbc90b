/**
 * Team server figures, on SQLite and on PostgreSQL (a local cluster with fsync on), with the compiled binary as the
 * server: 8 clients × 50 batches × 100 entries at once (stored exactly once?), ingest entries/s up to 100,000
 * entries, then the p50/p95 of timeline pages at 100,000 entries. Last, bun:sqlite against Bun.SQL's SQLite driver
 * on the same statements (why the SQLite adapter uses bun:sqlite).
 */
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { binary, testEnv } from "../test/helpers.ts";
import { startPostgres } from "../test/server/postgres.ts";
import { makeEntry } from "../test/sync-fixtures.ts";
import { fmt, median, percentile, startServe, tempDir } from "./lib.ts";

const TOTAL = 100_000;
const CLIENTS = 8;
const BATCHES = 50;
const PER_BATCH = 100;
const BIN = binary();
const hash = (s: string) => new Bun.CryptoHasher("sha1").update(s).digest("hex");
const TAGS = ["FEATURE", "BUGFIX", "REFACTORING", "TEST", "DOCS"] as const;

function entry(n: number) {
  return makeEntry(hash(`bench ${n}`), {
    title: `Change number ${n}`,
    intent: `Problem: request ${n} was slow.\nSolution: cache it.\nEffect: fast.`,
    tag: TAGS[n % 5],
    claudeSessionId: `bench-session-${n % 500}`,
    changedFiles: [`src/module${n % 40}/file${n % 400}.ts`, "README.md"],
    committedAt: new Date(Date.UTC(2026, 0, 1) + n * 60_000).toISOString(),
    groupRootId: null,
    conversationSnippet: `${JSON.stringify({ role: "user", content: `please fix request ${n} ${"with some detail ".repeat(20)}` })}\n${JSON.stringify({ role: "assistant", content: "Done: added a cache and a test. ".repeat(10) })}\n`,
  });
}

async function bench(name: string, database: string, home: string) {
  const key = JSON.parse(Bun.spawnSync([BIN, "serve", "project", "create", "bench", "--json", "--database", database], { env: testEnv(home) }).stdout.toString()).key;
  const server = await startServe(BIN, database, home);
  const headers = { "content-type": "application/json", "x-api-key": key };
  const post = async (from: number, count: number) => {
    const body = JSON.stringify({ captures: Array.from({ length: count }, (_, i) => entry(from + i)) });
    const r = await fetch(`${server.url}/api/v1/captures/batch`, { method: "POST", headers, body });
    if (r.status !== 200) throw new Error(`batch answered ${r.status}: ${await r.text()}`);
  };
  const get = async (path: string) => {
    const t0 = performance.now();
    const r = await fetch(`${server.url}${path}`, { headers: { "x-api-key": key } });
    const j = (await r.json()) as any;
    if (r.status !== 200) throw new Error(`${path} answered ${r.status}`);
    return { ms: performance.now() - t0, j };
  };

  // 1. 8 clients × 50 batches × 100 distinct entries at once
  const distinct = CLIENTS * BATCHES * PER_BATCH;
  let t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      for (let b = 0; b < BATCHES; b++) await post(c * BATCHES * PER_BATCH + b * PER_BATCH, PER_BATCH);
    }),
  );
  let ms = performance.now() - t0;
  const stored1 = (await get("/api/v1/stats?days=3660")).j.entries;
  console.log(
    `${name}: ${CLIENTS} clients × ${BATCHES} batches × ${PER_BATCH} at once → ${stored1} stored ${stored1 === distinct ? "exactly once" : "WRONG"}; ${Math.round((CLIENTS * BATCHES * PER_BATCH) / (ms / 1000))} entries/s`,
  );
  // 2. ingest up to 100,000 distinct entries, 8 clients at once
  const rest = TOTAL - distinct;
  let next = distinct;
  t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < TOTAL) {
        const from = next;
        next += PER_BATCH;
        await post(from, PER_BATCH);
      }
    }),
  );
  ms = performance.now() - t0;
  const stored = (await get("/api/v1/stats?days=3660")).j.entries;
  console.log(`${name}: ingest ${rest} entries in ${fmt(ms)}: ${Math.round(rest / (ms / 1000))} entries/s (goal ≥ 2,000); ${stored} stored`);

  // PostgreSQL's autovacuum vacuums and analyzes a table this size within a minute of the load; do it now instead
  // of waiting (its statistics pick the plan for text search, its visibility map makes index-only scans possible)
  if (database.startsWith("postgres")) {
    const sql = new Bun.SQL(database);
    await sql.unsafe("VACUUM ANALYZE");
    await sql.close();
  }

  // 3. timeline pages at 100,000 entries
  const pages: Record<string, number[]> = { "first page": [], "page by cursor": [], "tag filter": [], "text search": [], "file filter": [] };
  let cursor = "";
  for (let i = 0; i < 100; i++) {
    pages["first page"]!.push((await get("/api/v1/timeline?limit=50")).ms);
    const p = await get(`/api/v1/timeline?limit=50${cursor ? `&cursor=${cursor}` : ""}`);
    pages["page by cursor"]!.push(p.ms);
    cursor = p.j.nextCursor ?? "";
    pages["tag filter"]!.push((await get(`/api/v1/timeline?limit=50&tag=${TAGS[i % 5]}`)).ms);
    pages["text search"]!.push((await get(`/api/v1/timeline?limit=50&q=request%20${i * 997}`)).ms);
    pages["file filter"]!.push((await get(`/api/v1/timeline?limit=50&file=src/module${i % 40}`)).ms);
  }
  for (const [what, xs] of Object.entries(pages)) {
    console.log(`${name}: timeline ${what.padEnd(15)} at ${stored}: p50 ${fmt(median(xs)).padStart(9)}  p95 ${fmt(percentile(xs, 95)).padStart(9)}  n=${xs.length}`);
  }
  await server.stop();
}

const dir = tempDir("aiflare-bench-server-");
try {
  await bench("sqlite", join(dir, "server.sqlite"), dir);
  const pg = await startPostgres({ durable: true });
  try {
    await bench("postgres", await pg.createDatabase("bench"), dir);
  } finally {
    await pg.stop();
  }
  await driverComparison(dir);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** The same insert and lookup through bun:sqlite and through Bun.SQL's sqlite:// driver. */
async function driverComparison(dir: string) {
  const N = 20_000;
  const rows = Array.from({ length: N }, (_, i) => [hash(`d ${i}`), `summary ${i} ${"x".repeat(500)}`, i] as const);
  const a = new Database(join(dir, "a.sqlite"), { create: true });
  a.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE t (h TEXT PRIMARY KEY, s TEXT, n INTEGER)");
  let t0 = performance.now();
  const ins = a.query("INSERT INTO t VALUES (?, ?, ?)");
  for (let i = 0; i < N; i += 100) a.transaction(() => rows.slice(i, i + 100).forEach((r) => ins.run(...r)))();
  const aInsert = performance.now() - t0;
  const sel = a.query("SELECT s FROM t WHERE h = ?");
  t0 = performance.now();
  for (let i = 0; i < 5000; i++) sel.get(rows[(i * 7) % N]![0]);
  const aSelect = performance.now() - t0;
  a.close();

  const b = new Bun.SQL(`sqlite://${join(dir, "b.sqlite")}`);
  await b.unsafe("PRAGMA journal_mode = WAL");
  await b.unsafe("PRAGMA synchronous = NORMAL");
  await b.unsafe("CREATE TABLE t (h TEXT PRIMARY KEY, s TEXT, n INTEGER)");
  t0 = performance.now();
  for (let i = 0; i < N; i += 100) {
    await b.begin(async (tx) => {
      for (const r of rows.slice(i, i + 100)) await tx.unsafe("INSERT INTO t VALUES (?, ?, ?)", [...r]);
    });
  }
  const bInsert = performance.now() - t0;
  t0 = performance.now();
  for (let i = 0; i < 5000; i++) await b.unsafe("SELECT s FROM t WHERE h = ?", [rows[(i * 7) % N]![0]]);
  const bSelect = performance.now() - t0;
  await b.close();
  console.log(`sqlite driver: insert ${N} rows in batches of 100: bun:sqlite ${fmt(aInsert)}, Bun.SQL ${fmt(bInsert)} (${(bInsert / aInsert).toFixed(1)}x)`);
  console.log(`sqlite driver: 5,000 lookups by key:             bun:sqlite ${fmt(aSelect)}, Bun.SQL ${fmt(bSelect)} (${(bSelect / aSelect).toFixed(1)}x)`);
}
