/**
 * The storage backends every server test runs against: SQLite in a temp dir, and a real PostgreSQL cluster the
 * test file starts once (each test gets a database of its own) and stops in afterAll.
 */
import { afterAll, afterEach, beforeAll } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPostgres } from "../../src/server/postgres/index.ts";
import { startServer } from "../../src/server/serve.ts";
import { openSqlite } from "../../src/server/sqlite/index.ts";
import type { Storage } from "../../src/server/storage.ts";
import { startPostgres, type Postgres } from "./postgres.ts";

export interface Backend {
  name: "sqlite" | "postgres";
  /** a fresh, empty, migrated database; `url` opens it again (a second connection or process) */
  fresh(): Promise<{ url: string; open(): Promise<Storage> }>;
}

let pg: Promise<Postgres> | undefined;
let dbs = 0;
const dirs: string[] = [];

/** The backends, for one test file: its PostgreSQL cluster and temp dirs go away after its last test. */
export function useBackends(): Backend[] {
  // started before the tests, not lazily inside one: bun's test runner ends processes a test leaves behind
  beforeAll(async () => {
    pg ??= startPostgres();
    await pg;
  });
  afterAll(async () => {
    const running = pg;
    pg = undefined;
    if (running) await (await running).stop();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return BACKENDS;
}

const BACKENDS: Backend[] = [
  {
    name: "sqlite",
    async fresh() {
      const dir = realpathSync(mkdtempSync(join(tmpdir(), "aiflare-server-")));
      dirs.push(dir);
      const url = join(dir, "server.sqlite");
      return { url, open: async () => migrated(openSqlite(url)) };
    },
  },
  {
    name: "postgres",
    async fresh() {
      pg ??= startPostgres();
      const url = await (await pg).createDatabase(`t${process.pid}_${++dbs}`);
      return { url, open: async () => migrated(openPostgres(url, { max: 4 })) };
    },
  },
];

async function migrated(s: Storage): Promise<Storage> {
  await s.migrate();
  return s;
}

/** A server over a fresh database, with a project and its key; `stop()` closes both. */
export async function testServer(backend: Backend, opts: { rateLimit?: number; failureLimit?: number } = {}) {
  const db = await backend.fresh();
  const storage = await db.open();
  const { createProject } = await import("../../src/server/admin.ts");
  const { project, key } = await createProject(storage, "demo");
  const lines: string[] = [];
  const server = await startServer({ host: "127.0.0.1", port: 0, storage, rateLimit: opts.rateLimit ?? 0, failureLimit: opts.failureLimit, log: (l) => lines.push(l) });
  return {
    db,
    storage,
    project,
    key,
    url: server.url,
    lines,
    async stop() {
      // the test has its answers; a client still sending a refused body must not hold the next test up
      await server.stop(true);
      await storage.close();
    },
  };
}

/** A made-up commit hash: the SHA-1 of `s`. */
export const hash = (s: string) => new Bun.CryptoHasher("sha1").update(s).digest("hex");

export type TestServer = Awaited<ReturnType<typeof testServer>>;

/**
 * The server of the running test: `start` opens one over a fresh database and it is stopped after the test (this
 * registers the afterEach); `call` sends JSON with a key (the project's by default) and answers the status and body.
 */
export function serverPerTest() {
  let current: TestServer | undefined;
  afterEach(async () => {
    await current?.stop();
    current = undefined;
  });
  return {
    async start(backend: Backend, opts?: Parameters<typeof testServer>[1]): Promise<TestServer> {
      current = await testServer(backend, opts);
      return current;
    },
    async call(method: string, path: string, body?: unknown, key = current!.key): Promise<{ status: number; json: any }> {
      const res = await fetch(`${current!.url}${path}`, {
        method,
        headers: { "content-type": "application/json", "x-api-key": key },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, json: await res.json() };
    },
  };
}
