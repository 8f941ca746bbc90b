/**
 * What the team server's write path costs beyond the database, in one run with the machine's load printed:
 *
 * - the server's own redaction pass: its CPU µs per entry (bench/redact-pass.ts), and the request handler of
 *   `aiflare serve` with and without it, on SQLite and on PostgreSQL (goal: with ≥ 80% of the entries/s of without);
 * - PostgreSQL ingest (the whole handler, redaction included) against a plain batched upsert of the same rows into
 *   the same tables and indexes through the same driver (Bun.SQL), at several batch sizes (goal ≥ 0.9×).
 *
 * Entries of about 5 KB from the real transcripts in test/fixtures/claude-code, as a client sends them (already
 * redacted), one in 50 holding a secret as an older or forged client might send it. Every mode writes the same
 * entries into a database of its own; rounds are interleaved and their order rotated, so that a busy machine weighs
 * on all alike; medians of the rounds are compared.
 */
import { SQL as BunSQL } from "bun";
import { rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { createProject } from "../src/server/admin.ts";
import { createApp } from "../src/server/app.ts";
import { checkEntry } from "../src/server/ingest.ts";
import { openPostgres } from "../src/server/postgres/index.ts";
import { openSqlite } from "../src/server/sqlite/index.ts";
import type { EntryRow, Storage } from "../src/server/storage.ts";
import type { Entry } from "../src/store/entry.ts";
import { startPostgres } from "../test/server/postgres.ts";
import { benchEntry } from "./ingest-data.ts";
import { median, tempDir } from "./lib.ts";
import { redactionPassCost } from "./redact-pass.ts";

const ROUNDS = 5;
/** entries each mode writes per round */
const PER_ROUND = 400;
const SQLITE_BATCH = 100;
const PG_BATCHES = [10, 50, 100];
const SECRET_EVERY = 50;

const load = () => loadavg().map((x) => x.toFixed(1)).join(" ");

interface Mode {
  name: string;
  /** writes one batch; throws when it was not stored whole */
  write: (batch: Entry[]) => Promise<void>;
  rates: number[];
  /** entries per second of this process's own CPU time (all of the work on SQLite; the client side on PostgreSQL) */
  cpuRates: number[];
  close?: () => Promise<void>;
}

/** The request handler over `storage`, with or without the server's redaction. */
async function handlerMode(name: string, storage: Storage, redact: boolean): Promise<Mode> {
  await storage.migrate();
  const { key } = await createProject(storage, "bench");
  const handle = await createApp(storage, { rateLimit: 0, redact });
  return {
    name,
    rates: [],
    cpuRates: [],
    close: () => storage.close(),
    async write(batch) {
      const res = await handle(
        new Request("http://127.0.0.1/api/v1/captures/batch", {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": key },
          body: JSON.stringify({ captures: batch }),
        }),
      );
      if (res.status !== 200) throw new Error(`${name}: batch answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    },
  };
}

/**
 * The same rows written the plainest way: one INSERT … SELECT FROM unnest … ON CONFLICT DO UPDATE for the entries
 * and one for their files, in a transaction, into tables migrated like the server's. The rows are made beforehand
 * (outside the time), from the same entries.
 */
async function plainUpsertMode(url: string): Promise<Mode> {
  const storage = openPostgres(url);
  await storage.migrate();
  const { project } = await createProject(storage, "bench");
  await storage.close();
  const sql = new BunSQL(url, { max: 10 });
  const rowsOf = new Map<string, EntryRow>();
  return {
    name: "plain upsert",
    rates: [],
    cpuRates: [],
    async write(batch) {
      const rows = batch.map((e) => rowsOf.get(e.commitHash)!);
      await sql.begin(async (tx) => {
        const col = <K extends keyof EntryRow>(k: K) => rows.map((r) => r[k]);
        const ids = await tx.unsafe<{ id: string }[]>(
          `INSERT INTO entries (project_id, commit_hash, session_id, branch, tag, captured_ms, sort_ms, group_root_id, group_id,
             group_auto, has_user, continuation, request, summary, conversation, search, author, key_owner, recorded_ms)
           SELECT $1, r.h, r.s, r.b, r.t, r.c, r.o, r.g, COALESCE(r.g, r.h), r.a, r.u, r.n, r.q, r.m, r.v, to_tsvector('simple', r.x),
             r.w, r.k, r.d
           FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::text[], $9::boolean[],
             $10::boolean[], $11::boolean[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::bigint[])
             AS r(h, s, b, t, c, o, g, a, u, n, q, m, v, x, w, k, d)
           ON CONFLICT (project_id, commit_hash) DO UPDATE SET summary = excluded.summary, conversation = excluded.conversation,
             search = excluded.search, captured_ms = excluded.captured_ms
           RETURNING id`,
          [
            project.id, col("commitHash"), col("sessionId"), col("branch"), col("tag"), col("capturedMs"), col("sortMs"),
            rows.map((r) => r.groupRootId ?? null), rows.map((r) => r.groupRootId === undefined), col("hasUser"), col("continuation"),
            col("request"), col("summary"), col("conversation"), col("searchText"), col("author"), col("keyOwner"), col("recordedMs"),
          ],
        );
        const fileIds = rows.flatMap((r, i) => r.files.map(() => ids[i]!.id));
        await tx.unsafe(
          `INSERT INTO entry_files (entry_id, project_id, path) SELECT f.id, $1, f.path FROM unnest($2::bigint[], $3::text[]) AS f(id, path)
           ON CONFLICT DO NOTHING`,
          [project.id, fileIds, rows.flatMap((r) => r.files)],
        );
      });
    },
    // the rows of the entries, made once before any round
    prepare: async (entries: Entry[]) => {
      for (const e of entries) {
        const r = await checkEntry(e, { nowMs: Date.now(), redact: false }, async () => {});
        if (!("row" in r)) throw new Error(r.reason);
        rowsOf.set(e.commitHash, r.row);
      }
    },
    close: () => sql.close(),
  } as Mode & { prepare: (entries: Entry[]) => Promise<void> };
}

/** Runs `rounds` of each mode over the same entries (batches of `size`), the modes' order rotated each round. */
async function rounds(modes: Mode[], entries: Entry[][], size: number): Promise<void> {
  for (let round = 0; round < entries.length; round++) {
    const order = modes.map((_, i) => modes[(i + round) % modes.length]!);
    for (const m of order) {
      const list = entries[round]!;
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      for (let at = 0; at < list.length; at += size) await m.write(list.slice(at, at + size));
      m.rates.push(list.length / ((performance.now() - t0) / 1000));
      const cpu = process.cpuUsage(cpu0);
      m.cpuRates.push(list.length / ((cpu.user + cpu.system) / 1e6));
    }
  }
}

const lines: string[] = [];
/**
 * One comparison: the medians of wall-clock entries/s and their ratio against the goal; with `cpu`, also the
 * ratio of entries per CPU-second of this process, which a machine shared with other work disturbs far less.
 */
function row(what: string, a: Mode, b: Mode, goal: number, cpu = false) {
  const ratio = median(a.rates) / median(b.rates);
  const fmt = (m: Mode) => `${Math.round(median(m.rates))}`.padStart(5);
  const cpuRatio = median(a.cpuRates) / median(b.cpuRates);
  const line =
    `${what.padEnd(60)} ${fmt(a)} / ${fmt(b)} entries/s = ${ratio.toFixed(2)}` +
    `${cpu ? `, per CPU-second ${cpuRatio.toFixed(2)}` : ""}  (goal ≥ ${goal.toFixed(2)}: ${ratio >= goal ? "met" : "NOT MET"})`;
  lines.push(line);
  console.log(line);
  console.log(`  rounds ${a.name}: ${a.rates.map(Math.round).join(", ")}; ${b.name}: ${b.rates.map(Math.round).join(", ")}`);
}

let serial = 0;
/** `ROUNDS` lists of `PER_ROUND` fresh entries. */
const freshEntries = () =>
  Array.from({ length: ROUNDS }, () => Array.from({ length: PER_ROUND }, () => benchEntry(serial++, { secretEvery: SECRET_EVERY })));

const dir = tempDir("aiflare-bench-ingest-");
try {
  const sample = freshEntries();
  const size = sample.flat().reduce((n, e) => n + JSON.stringify(e).length, 0) / (ROUNDS * PER_ROUND);
  console.log(`entries of ${(size / 1024).toFixed(1)} KB from test/fixtures transcripts, 1 in ${SECRET_EVERY} with a secret; ${ROUNDS} rounds of ${PER_ROUND} per mode`);
  console.log(`load average at start: ${load()}`);

  // the redactor's own cost, in CPU time: far less disturbed by a busy machine than the entries/s below
  const cost = await redactionPassCost(sample[0]!);
  const passLine =
    `redaction pass µs per entry (CPU): ${cost.pass.toFixed(0)}` +
    ` (the write API's checks ${cost.with.toFixed(0)} with the redactor, ${cost.without.toFixed(0)} without)`;
  lines.push(passLine);
  console.log(passLine);

  // SQLite: the handler with and without the redaction pass
  const sqlite = [
    await handlerMode("with redaction", openSqlite(join(dir, "with.sqlite")), true),
    await handlerMode("without", openSqlite(join(dir, "without.sqlite")), false),
  ];
  await rounds(sqlite, sample, SQLITE_BATCH);
  row(`SQLite ingest, batches of ${SQLITE_BATCH}: with / without redaction`, sqlite[0]!, sqlite[1]!, 0.8, true);
  console.log(`load average: ${load()}`);

  const pg = await startPostgres({ durable: true });
  try {
    for (const batch of PG_BATCHES) {
      const entries = freshEntries();
      const storages = [openPostgres(await pg.createDatabase(`with${batch}`)), openPostgres(await pg.createDatabase(`without${batch}`))];
      const plain = (await plainUpsertMode(await pg.createDatabase(`plain${batch}`))) as Mode & { prepare: (entries: Entry[]) => Promise<void> };
      await plain.prepare(entries.flat());
      const modes = [await handlerMode("with redaction", storages[0]!, true), await handlerMode("without", storages[1]!, false), plain];
      await rounds(modes, entries, batch);
      row(`PostgreSQL ingest, batches of ${batch}: with / without redaction`, modes[0]!, modes[1]!, 0.8);
      row(`PostgreSQL ingest, batches of ${batch}: ingest / plain upsert`, modes[0]!, plain, 0.9);
      console.log(`load average: ${load()}`);
      for (const m of modes) await m.close?.();
    }
  } finally {
    await pg.stop();
  }
  for (const m of sqlite) await m.close?.();
  console.log(`\nload average at end: ${load()}`);
  for (const l of lines) console.log(l);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
