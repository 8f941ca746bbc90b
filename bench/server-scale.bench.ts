/**
 * The team server at scale on PostgreSQL: one project of N realistic entries (default 1,000,000; `BENCH_QUICK=1`:
 * 100,000) of about 4.8 KB each, their text drawn from real conversations (`RealText`), then the p50/p95/p99 of each
 * read through the HTTP API of the compiled `aiflare serve`, the plan PostgreSQL ran for each (auto_explain, with
 * ANALYZE and BUFFERS) and the storage used against the bytes of JSON sent.
 *
 * Loading: the first SAMPLE entries go through the real ingest (`POST /api/v1/captures/batch`, triggers on); the same
 * SAMPLE also through the bulk path into a second project, and the two are compared row by row, the derived rows
 * (entry_paths, the stats tables) included. The bulk path: the ingest's checks and redactor (`checkBatch`), then the
 * adapter's own batch statements (`putEntries`, batches of 500, three at once) with the tables' triggers off; the
 * derived rows are then made in one pass each (`DERIVED`, what the triggers would have written). It makes DISTINCT
 * entries; the rest are copies of them made inside PostgreSQL (`replicate`: their own hash, times, session and rare
 * word in every column that holds them, checked by `checkCopies`), LANES statements at once. The secondary indexes
 * and the derived tables' keys are built after the load, LANES at once, with `synchronous_commit=off` for the load.
 *
 * AIFLARE_SCALE_DIR=<dir> keeps the cluster there and reuses it when it already holds the N entries (a load of
 * 1,000,000 takes a while); AIFLARE_SCALE_BIN=<binary> measures another build of the server against the same data.
 */
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadavg } from "node:os";
import { openPostgres } from "../src/server/postgres/index.ts";
import { DERIVED, DERIVED_TABLES } from "../src/server/postgres/schema.ts";
import { checkBatch } from "../src/server/ingest.ts";
import type { Entry } from "../src/store/entry.ts";
import { binary, testEnv } from "../test/helpers.ts";
import { startPostgres } from "../test/server/postgres.ts";
import { FILES, HOT_FILE, makeEntry } from "./data.ts";
import { fmt, median, percentile, startServe, tempDir } from "./lib.ts";
import { RealText } from "./real-text.ts";

const N = process.env.BENCH_QUICK ? 100_000 : Number(process.env.AIFLARE_SCALE_N || 1_000_000);
const KEEP = process.env.AIFLARE_SCALE_DIR || "";
const BIN = process.env.AIFLARE_SCALE_BIN || binary();
const SAMPLE = 2_000;
const BATCH = 500;
/** copies made per statement, and statements (and index builds) at once */
const COPIES = 50_000;
const LANES = 2;
/** the tables whose triggers the bulk load turns off: it writes their derived rows itself (DERIVED) */
const BULK_TABLES = ["entries", "entry_files", "entry_paths", "stats_files"];
const CALLS = 30;
/** one commit a minute, the newest now: a year holds about half of the entries */
const STEP_MS = 60_000;
/** each rare token (a short commit hash an entry cites) is cited by three entries */
const RARE = Math.floor(N / 3);

/** a commit hash per entry: the first 40 hex digits of a SHA-256, which PostgreSQL computes too (see replicate) */
const hashOf = (i: number) => new Bun.CryptoHasher("sha256").update(`scale ${i}`).digest("hex").slice(0, 40);
const HASH_SQL = (j: string) => `left(encode(sha256(convert_to('scale ' || ${j}, 'UTF8')), 'hex'), 40)`;
/** the rare word of entry i: a short hash it cites, starting with a letter so that the parser keeps it whole */
const rareWord = (i: number) => `c${hashOf(i % RARE).slice(0, 11)}`;
const RARE_SQL = (j: string) => `'c' || left(${HASH_SQL(`${j} % ${RARE}`)}, 11)`;
/** the first DISTINCT entries are made one by one; the rest are copies of them with their own hash, time, session and rare word */
/** (a multiple of 70, so that a copy has its original's tag, file count, busy file and second-sharing) */
const DISTINCT = Math.min(N, Number(process.env.AIFLARE_SCALE_DISTINCT || 49_980));

/** Entry `i`: about 4.8 KB of real text, 2–3 files out of 400 in 4 folders, every tenth also the busy file. */
function entry(t: RealText, i: number, endMs: number): Entry {
  const files = [FILES[t.int(FILES.length)]!, FILES[t.int(FILES.length)]!, ...(i % 2 ? [FILES[t.int(FILES.length)]!] : [])];
  if (i % 10 === 0) files.push(HOT_FILE);
  const e = makeEntry(t, i, hashOf(i), null, [...new Set(files)]);
  const at = new Date(commitMs(i, endMs)).toISOString();
  e.committedAt = at;
  e.capturedAt = at;
  e.recordedAt = new Date(Date.parse(at) + (i % 7) * 10).toISOString();
  e.conversationSnippet += `${JSON.stringify({ role: "assistant", content: `This builds on ${rareWord(i)}.` })}\n`;
  return e;
}

/** every seventh commit shares its second with the one before: the order then rests on recordedAt and the hash */
function commitMs(i: number, endMs: number): number {
  return Math.floor((endMs - (N - i + (i % 7 === 1 ? 1 : 0)) * STEP_MS) / 1000) * 1000;
}

interface Meta {
  n: number;
  key: string;
  endMs: number;
  jsonBytes: number;
  loadMs: number;
  proof: string;
}

const dir = KEEP || tempDir("aiflare-bench-scale-");
const home = tempDir("aiflare-bench-scale-home-");
// the cluster belongs to the postgres user when run as root: it must reach its directory
chmodSync(dir, 0o755);
const pg = await startPostgres({
  durable: true,
  dir: join(dir, "pg"),
  settings: ["shared_buffers=512MB", "max_wal_size=8GB", "checkpoint_timeout=30min"],
});
const metaFile = join(dir, "meta.json");
try {
  const sql = new Bun.SQL(pg.url);
  const exists = (await sql.unsafe("SELECT 1 FROM pg_database WHERE datname = 'bench'")).length > 0;
  await sql.close();
  const database = exists ? pg.url.replace(/\/postgres$/, "/bench") : await pg.createDatabase("bench");
  let meta: Meta | null = existsSync(metaFile) ? (JSON.parse(readFileSync(metaFile, "utf8")) as Meta) : null;
  if (!meta || meta.n !== N) {
    meta = await load(database);
    writeFileSync(metaFile, JSON.stringify(meta));
  } else console.log(`reusing the loaded cluster in ${dir}: ${N} entries`);
  console.log(`data: ${N} entries of ${Math.round(meta.jsonBytes / N)} bytes of JSON on average (${(meta.jsonBytes / 1e9).toFixed(2)} GB sent); load ${(meta.loadMs / 60_000).toFixed(1)} min`);
  console.log(`bulk path = ingest: ${meta.proof}`);
  await measure(database, meta);
} finally {
  await pg.stop();
  if (!KEEP) rmSync(dir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}

async function createProject(database: string, name: string): Promise<string> {
  const r = Bun.spawnSync([BIN, "serve", "project", "create", name, "--json", "--database", database], { env: testEnv(home) });
  if (r.exitCode !== 0) throw new Error(`project create: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString()).key;
}

async function load(database: string): Promise<Meta> {
  const t0 = performance.now();
  const key = await createProject(database, "bench");
  await createProject(database, "proof");
  const endMs = Date.now();
  const text = new RealText(7);
  /** the bytes of JSON of each distinct entry; a copy sends as many (give or take a digit of its session id) */
  const sizes: number[] = [];
  const batchOf = (from: number, to: number) =>
    Array.from({ length: to - from }, (_, k) => {
      const e = entry(text, from + k, endMs);
      sizes[from + k] = Buffer.byteLength(JSON.stringify(e));
      return e;
    });

  // 1. the sample through the real ingest
  const server = await startServe(BIN, database, home);
  const sample: Entry[] = [];
  try {
    for (let i = 0; i < SAMPLE; i += 100) {
      const captures = batchOf(i, i + 100);
      sample.push(...captures);
      const r = await fetch(`${server.url}/api/v1/captures/batch`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify({ captures }),
      });
      if (r.status !== 200) throw new Error(`batch answered ${r.status}: ${await r.text()}`);
    }
  } finally {
    await server.stop();
  }

  // 2. the same sample through the bulk path into the second project: the rows must be the same, the derived ones too
  const admin = new Bun.SQL(database);
  const ids = Object.fromEntries((await admin.unsafe("SELECT id, name FROM projects")).map((r: any) => [r.name, r.id]));
  const storage = openPostgres(database, { max: 4 });
  const put = async (projectId: string, captures: Entry[]) => {
    const { rows, rejected } = await checkBatch(captures, { nowMs: Date.now(), keyOwner: null });
    if (rejected.length) throw new Error(`bulk path refused ${rejected.length}: ${rejected[0]!.reason}`);
    await storage.putEntries(projectId, rows.map((r) => r.row), Date.now() + 86_400_000);
  };
  const triggers = (on: boolean) => admin.unsafe(BULK_TABLES.map((t) => `ALTER TABLE ${t} ${on ? "ENABLE" : "DISABLE"} TRIGGER ALL`).join("; "));
  await triggers(false);
  for (let i = 0; i < SAMPLE; i += BATCH) await put(ids.proof, sample.slice(i, i + BATCH));
  await derive(admin, ids.proof);
  const differ = async (table: string, select: string) => {
    const q = (a: string, b: string) => `SELECT count(*)::int AS n FROM (${select.replaceAll("$P", `'${a}'`)} EXCEPT ALL ${select.replaceAll("$P", `'${b}'`)}) x`;
    const [x] = await admin.unsafe(q(ids.bench, ids.proof));
    const [y] = await admin.unsafe(q(ids.proof, ids.bench));
    return `${table} ${x.n + y.n === 0 ? "identical" : `DIFFER (${x.n} / ${y.n} rows)`}`;
  };
  const proof = [
    await differ("entries", "SELECT to_jsonb(e) - 'id' - 'project_id' FROM entries e WHERE e.project_id = $P"),
    await differ("entry files", "SELECT e.commit_hash, to_jsonb(f) - 'entry_id' - 'project_id' FROM entry_files f JOIN entries e ON e.id = f.entry_id WHERE e.project_id = $P"),
    await differ("paths", "SELECT to_jsonb(p) - 'entry_id' - 'project_id' FROM entry_paths p WHERE p.project_id = $P"),
    ...DERIVED_TABLES.filter((t) => t.startsWith("stats")).map((t) => differ(t, `SELECT to_jsonb(s) - 'project_id' FROM ${t} s WHERE s.project_id = $P`)),
  ];
  const proofText = (await Promise.all(proof)).join(", ");
  console.log(`load: ${SAMPLE} entries through POST /api/v1/captures/batch and through the bulk path: ${proofText}`);
  if (proofText.includes("DIFFER")) throw new Error("the bulk path does not write what the ingest writes");
  // the sample's derived rows are made again with the rest's
  await triggers(true);
  await admin.unsafe("DELETE FROM projects WHERE id = $1", [ids.proof]);
  for (const t of DERIVED_TABLES) await admin.unsafe(`DELETE FROM ${t} WHERE project_id = $1`, [ids.bench]);
  await triggers(false);

  // 3. the rest through the bulk path (no triggers; the secondary indexes and the derived tables' keys built after
  // the load), then the copies, then the derived rows in one pass each
  await admin.unsafe("ALTER DATABASE bench SET synchronous_commit = off");
  const indexes = await admin.unsafe<{ name: string; def: string }[]>(`
    SELECT i.indexname AS name, 'DROP INDEX ' || i.indexname AS drop, i.indexdef AS def FROM pg_indexes i
    WHERE i.schemaname = 'public' AND i.indexdef NOT LIKE '% WHERE %'
      AND i.indexname NOT IN (SELECT conname FROM pg_constraint)
    UNION ALL
    SELECT c.conname, format('ALTER TABLE %s DROP CONSTRAINT %I', c.conrelid::regclass, c.conname),
      format('ALTER TABLE %s ADD CONSTRAINT %I %s', c.conrelid::regclass, c.conname, pg_get_constraintdef(c.oid))
    FROM pg_constraint c WHERE c.contype = 'p' AND c.conrelid::regclass::text = ANY($1::text[])`, [DERIVED_TABLES]);
  for (const i of indexes as any[]) await admin.unsafe(i.drop);
  let next = SAMPLE;
  let done = SAMPLE;
  const t1 = performance.now();
  const c1 = cpuSeconds();
  const progress = (what: string, n: number) =>
    console.log(`load: ${n} entries${what}, ${Math.round((n - SAMPLE) / ((performance.now() - t1) / 1000))}/s; disk ${freeDisk()}`);
  await Promise.all(
    Array.from({ length: 3 }, async () => {
      while (next < DISTINCT) {
        const from = next;
        const to = (next = Math.min(DISTINCT, next + BATCH));
        await put(ids.bench, batchOf(from, to));
        done += to - from;
        if (Math.floor(done / 10_000) !== Math.floor((done - (to - from)) / 10_000)) progress("", done);
      }
    }),
  );
  await storage.close();
  console.log(`load: ${DISTINCT} distinct entries: ${cpuSince(c1)}`);
  const c2 = cpuSeconds();
  const chunks: number[] = [];
  for (let from = DISTINCT; from < N; from += COPIES) chunks.push(from);
  await Promise.all(
    Array.from({ length: LANES }, async () => {
      const lane = new Bun.SQL(database, { max: 1 });
      for (let from = chunks.shift(); from !== undefined; from = chunks.shift()) {
        await replicate(lane, ids.bench, from, Math.min(N, from + COPIES), endMs);
        progress(" (copies)", (done += Math.min(N, from + COPIES) - from));
      }
      await lane.close();
    }),
  );
  const t2 = performance.now();
  console.log(`load: ${N - DISTINCT} copies: ${cpuSince(c2)}`);
  if (N > DISTINCT) console.log(`load: copies checked: ${await checkCopies(admin, ids.bench, endMs)}`);
  let c3 = cpuSeconds();
  await derive(admin, ids.bench);
  console.log(`load: derived rows: ${cpuSince(c3)}`);
  const t3 = performance.now();
  c3 = cpuSeconds();
  // the indexes in LANES connections, the biggest (the full-text index) first
  const builds = [...(indexes as any[])].sort((a, b) => Number(/ gin /i.test(b.def)) - Number(/ gin /i.test(a.def)));
  await Promise.all(
    Array.from({ length: LANES }, async () => {
      const lane = new Bun.SQL(database, { max: 1 });
      await lane.unsafe("SET maintenance_work_mem = '1GB'");
      for (let i = builds.shift(); i; i = builds.shift()) await lane.unsafe(i.def);
      await lane.close();
    }),
  );
  console.log(`load: indexes and keys: ${cpuSince(c3)}`);
  await triggers(true);
  await admin.unsafe("ALTER DATABASE bench RESET synchronous_commit");
  const t4 = performance.now();
  await admin.unsafe("VACUUM ANALYZE");
  await admin.close();
  const loadMs = performance.now() - t0;
  console.log(
    `load: ${N - SAMPLE} entries by the bulk path in ${fmt(t2 - t1)} (${Math.round((N - SAMPLE) / ((t2 - t1) / 1000))}/s), derived rows in ${fmt(t3 - t2)}, ` +
      `${indexes.length} indexes and keys built in ${fmt(t4 - t3)}, vacuum ${fmt(performance.now() - t4)}; load average ${loadavg().map((x) => x.toFixed(1)).join(" ")}`,
  );
  let jsonBytes = 0;
  for (let j = 0; j < N; j++) jsonBytes += sizes[j % DISTINCT]!;
  return { n: N, key, endMs, jsonBytes, loadMs, proof: proofText };
}

/** The derived rows of a project (paths and day counts), in one pass each, as its triggers would have kept them. */
async function derive(admin: InstanceType<typeof Bun.SQL>, projectId: string) {
  for (const statement of DERIVED) await admin.unsafe(statement, [projectId]);
}

/**
 * Entries from..to as copies of the distinct ones (entry j copies j % DISTINCT): the same text, files and tag, with
 * their own commit hash, times, session and rare word, replaced in every column that holds them (the summary's JSON,
 * the conversation, the search vector); the rows are what the ingest would write for such an entry.
 */
async function replicate(admin: InstanceType<typeof Bun.SQL>, projectId: string, from: number, to: number, endMs: number) {
  const at = (j: string) => `(floor((${endMs}::bigint - (${N} - ${j} + CASE WHEN ${j} % 7 = 1 THEN 1 ELSE 0 END) * ${STEP_MS}::bigint) / 1000) * 1000)::bigint`;
  const iso = (ms: string) => `to_char(to_timestamp(${ms} / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  await admin.unsafe(`
    WITH c AS (
      SELECT j, ${HASH_SQL("j")} AS h, ${HASH_SQL(`j % ${DISTINCT}`)} AS sh, ${at("j")} AS ms, ${at(`(j % ${DISTINCT})`)} AS sms,
        ${RARE_SQL("j")} AS rare, ${RARE_SQL(`(j % ${DISTINCT})`)} AS srare
      FROM generate_series(${from}, ${to - 1}) AS j
    ), ins AS (
      INSERT INTO entries (project_id, commit_hash, session_id, branch, tag, captured_ms, sort_ms, group_root_id, group_id,
        group_auto, has_user, continuation, request, summary, conversation, search, author, key_owner, recorded_ms)
      SELECT s.project_id, c.h, 'bench-session-' || (c.j / 10), s.branch, s.tag, c.ms, c.ms, NULL, c.h, false, s.has_user,
        s.continuation, s.request,
        replace(replace(replace(replace(s.summary, s.commit_hash, c.h), ${iso("(s.recorded_ms)")}, ${iso(`(c.ms + (c.j % 7) * 10)`)}),
          ${iso("c.sms")}, ${iso("c.ms")}), '"claudeSessionId":"' || s.session_id || '"', '"claudeSessionId":"bench-session-' || (c.j / 10) || '"'),
        replace(s.conversation, c.srare, c.rare),
        ts_delete(s.search, c.srare) || to_tsvector('simple', c.rare), s.author, s.key_owner, c.ms + (c.j % 7) * 10
      FROM c JOIN entries s ON s.project_id = $1 AND s.commit_hash = c.sh
      RETURNING id, commit_hash
    )
    INSERT INTO entry_files (entry_id, project_id, path)
    SELECT ins.id, f.project_id, f.path FROM ins JOIN c ON c.h = ins.commit_hash
      JOIN entries s ON s.project_id = $1 AND s.commit_hash = c.sh JOIN entry_files f ON f.entry_id = s.id`,
    [projectId],
  );
}

/** A few copies read back: their summary, conversation and search vector hold their own hash, times, session and word. */
async function checkCopies(admin: InstanceType<typeof Bun.SQL>, projectId: string, endMs: number): Promise<string> {
  for (const j of [DISTINCT, DISTINCT + 1, N - 1]) {
    const [r] = await admin.unsafe(
      `SELECT summary, conversation, search @@ to_tsquery('simple', $3) AS found, sort_ms::float8 AS ms FROM entries WHERE project_id = $1 AND commit_hash = $2`,
      [projectId, hashOf(j), `${rareWord(j)}:*`],
    );
    const e = JSON.parse(r.summary);
    const at = new Date(commitMs(j, endMs)).toISOString();
    const want = { commitHash: hashOf(j), committedAt: at, capturedAt: at, recordedAt: new Date(Date.parse(at) + (j % 7) * 10).toISOString(), claudeSessionId: `bench-session-${Math.floor(j / 10)}` };
    const got = { commitHash: e.commitHash, committedAt: e.committedAt, capturedAt: e.capturedAt, recordedAt: e.recordedAt, claudeSessionId: e.claudeSessionId };
    if (JSON.stringify(got) !== JSON.stringify(want) || !r.found || !r.conversation.includes(rareWord(j)) || r.ms !== commitMs(j, endMs)) {
      throw new Error(`copy ${j} is not as the ingest would store it: ${JSON.stringify(got)} vs ${JSON.stringify(want)}, found ${r.found}`);
    }
  }
  return "hash, times, session and rare word as the ingest would store them";
}

/**
 * CPU seconds used so far by this process and by the cluster (the postmaster, its exited backends and the live
 * ones): on a busy machine the wall time of a phase says little, its CPU time what it would take on a quiet one.
 */
function cpuSeconds(): { bench: number; pg: number } {
  const ticks = (pid: string, fields: number[]) => {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      return fields.reduce((n, i) => n + Number(f[i]), 0);
    } catch {
      return 0; // a backend that just exited
    }
  };
  const postmaster = readFileSync(join(pg.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]!;
  const children = readdirSync("/proc").filter((p) => /^\d+$/.test(p) && ticks(p, [1]) === Number(postmaster));
  const pgTicks = ticks(postmaster, [11, 12, 13, 14]) + children.reduce((n, p) => n + ticks(p, [11, 12]), 0);
  const own = process.cpuUsage();
  return { bench: (own.user + own.system) / 1e6, pg: pgTicks / 100 };
}

/** The CPU seconds since `from` (a cpuSeconds()). */
function cpuSince(from: { bench: number; pg: number }): string {
  const now = cpuSeconds();
  return `CPU ${Math.round(now.bench - from.bench)} s here, ${Math.round(now.pg - from.pg)} s in PostgreSQL`;
}

function freeDisk(): string {
  const r = Bun.spawnSync(["df", "-h", "--output=avail", dir]);
  return `${r.stdout.toString().split("\n")[1]?.trim()} free`;
}

interface Read {
  name: string;
  /** the goal, and whether a figure meets it */
  goal: string;
  met: (p: { p50: number; p95: number; p99: number }) => boolean;
  path: (i: number) => string;
}

async function timeReads(url: string, reads: Read[], key: string) {
  const server = { url };
  const meta = { key };
  const get = async (path: string) => {
    const t0 = performance.now();
    const r = await fetch(`${server.url}${path}`, { headers: { "x-api-key": meta.key } });
    const j = (await r.json()) as any;
    if (r.status !== 200) throw new Error(`${path} answered ${r.status}: ${JSON.stringify(j).slice(0, 300)}`);
    return { ms: performance.now() - t0, j };
  };
  const shape = (j: any) =>
    Array.isArray(j.entries) ? `${j.entries.length} entries${j.nextCursor ? ", more" : ""}` : j.entry ? "1 entry" : j.transcript !== undefined ? `${j.entries?.length ?? 0} entries` : `${j.entries} entries, ${j.sessions} sessions`;
  console.log(`reads at ${N} entries, ${CALLS} calls each, one client:`);
  console.log(`${"read".padEnd(38)} ${"p50".padStart(10)} ${"p95".padStart(10)} ${"p99".padStart(10)}  goal`);
  for (const read of reads) {
    for (let i = 0; i < 3; i++) await get(read.path(CALLS + i));
    const xs: number[] = [];
    let last = "";
    for (let i = 0; i < CALLS; i++) {
      const r = await get(read.path(i));
      xs.push(r.ms);
      last = shape(r.j);
    }
    const p = { p50: median(xs), p95: percentile(xs, 95), p99: percentile(xs, 99) };
    console.log(
      `${read.name.padEnd(38)} ${fmt(p.p50).padStart(10)} ${fmt(p.p95).padStart(10)} ${fmt(p.p99).padStart(10)}  ${read.goal}: ${read.met(p) ? "met" : "NOT MET"}  (${last})`,
    );
  }
}

async function measure(database: string, meta: Meta) {
  const admin = new Bun.SQL(database);
  // the place of the entry 50,000 deep (page 1,000 of 50): its cursor, as the server writes it
  const deep = (k: number) => `SELECT sort_ms::float8 AS s, recorded_ms::float8 AS r, commit_hash AS h FROM entries ORDER BY sort_ms DESC, recorded_ms DESC, commit_hash DESC OFFSET ${k} LIMIT 1`;
  const cursors: string[] = [];
  for (let i = 0; i < 4; i++) {
    const [c] = await admin.unsafe(deep(Math.min(49_999, N - 300) + i * 50));
    cursors.push(Buffer.from(`${c.s}:${c.r}:${c.h}`).toString("base64url"));
  }
  const pick = (i: number, n: number) => (i * 7919 + 13) % n;
  const flat = (ms: number) => ({ goal: `p99 ≤ ${ms} ms (stays flat)`, met: (p: { p99: number }) => p.p99 <= ms });
  const reads: Read[] = [
    { name: "first page", ...flat(17), path: () => "/api/v1/timeline?limit=50" },
    { name: "tag filter", ...flat(17), path: (i) => `/api/v1/timeline?limit=50&tag=${["FEATURE", "BUGFIX", "REFACTORING", "TEST", "DOCS"][i % 5]}` },
    { name: "one entry", ...flat(17), path: (i) => `/api/v1/entries/${hashOf(pick(i, N)).slice(0, 12)}` },
    { name: "one session", ...flat(17), path: (i) => `/api/v1/sessions/bench-session-${pick(i, N / 10)}` },
    { name: "text search, a common word", ...flat(17), path: (i) => `/api/v1/timeline?limit=50&q=${["the", "file", "test"][i % 3]}` },
    { name: "text search, a rare word (3 matches)", goal: "p95 ≤ 50 ms", met: (p) => p.p95 <= 50, path: (i) => `/api/v1/timeline?limit=50&q=${rareWord(pick(i, RARE))}` },
    { name: "file filter, a folder (~55%)", goal: "p95 ≤ 50 ms", met: (p) => p.p95 <= 50, path: (i) => `/api/v1/timeline?limit=50&file=src/${["core", "store", "util", "web"][i % 4]}` },
    { name: "file filter, one busy file (10%)", goal: "p95 ≤ 50 ms", met: (p) => p.p95 <= 50, path: () => `/api/v1/timeline?limit=50&file=${HOT_FILE}` },
    { name: "cursor page 1,000", goal: "p95 ≤ 10 ms", met: (p) => p.p95 <= 10, path: (i) => `/api/v1/timeline?limit=50&cursor=${cursors[i % cursors.length]}` },
    { name: "stats, 28 days", goal: "p95 ≤ 200 ms", met: (p) => p.p95 <= 200, path: () => "/api/v1/stats?days=28" },
    { name: "stats, 365 days", goal: "p95 ≤ 200 ms", met: (p) => p.p95 <= 200, path: () => "/api/v1/stats?days=365" },
  ];

  const server = await startServe(BIN, database, home);
  try {
    await timeReads(server.url, reads, meta.key);
  } finally {
    await server.stop();
  }

  // storage
  const tables = await admin.unsafe<{ name: string; total: number; heap: number; toast: number; indexes: number }[]>(`
    SELECT c.relname AS name, pg_total_relation_size(c.oid)::float8 AS total, pg_relation_size(c.oid)::float8 AS heap,
      COALESCE(pg_total_relation_size(NULLIF(c.reltoastrelid, 0)), 0)::float8 AS toast, pg_indexes_size(c.oid)::float8 AS indexes
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 2 DESC`);
  const total = tables.reduce((s, t) => s + Number(t.total), 0);
  const gb = (b: number) => `${(b / 1e9).toFixed(2)} GB`;
  console.log(
    `storage: ${gb(total)} for ${gb(meta.jsonBytes)} of JSON sent (${(total / meta.jsonBytes).toFixed(2)}×); goal ≤ 2×: ${total / meta.jsonBytes <= 2 ? "met" : "NOT MET"}`,
  );
  for (const t of tables.filter((t) => t.total > 1e6)) {
    console.log(`  ${t.name.padEnd(16)} ${gb(t.total).padStart(9)}  (heap ${gb(t.heap)}, toast ${gb(t.toast)}, indexes ${gb(t.indexes)})`);
  }

  // the plans, as PostgreSQL ran them for the server: auto_explain in a fresh server's connections, one call each
  if (process.env.AIFLARE_SCALE_EXPLAIN !== "0") {
    const settings = ["session_preload_libraries = 'auto_explain'", "auto_explain.log_min_duration = 0", "auto_explain.log_analyze = on", "auto_explain.log_buffers = on"];
    for (const s of settings) await admin.unsafe(`ALTER DATABASE bench SET ${s}`);
    const log = join(pg.dir, "postgres.log");
    const explained = await startServe(BIN, database, home);
    try {
      for (const read of reads) {
        const from = statSync(log).size;
        await fetch(`${explained.url}${read.path(1)}`, { headers: { "x-api-key": meta.key } }).then((r) => r.text());
        await Bun.sleep(300);
        const plans = readFileSync(log).subarray(from).toString().split(/\n(?=\S)/).filter((b) => b.includes("plan:") && !/api_keys|sign_ins|FROM projects/.test(b));
        console.log(`\nEXPLAIN ${read.name}:\n${plans.join("\n").trim()}`);
      }
    } finally {
      await explained.stop();
      for (const s of settings) await admin.unsafe(`ALTER DATABASE bench RESET ${s.split(" = ")[0]}`);
    }
  }
  await admin.close();
}
