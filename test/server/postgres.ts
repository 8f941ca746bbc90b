/**
 * A real PostgreSQL for the server tests: a throw-away cluster in a temp dir, on a free port of 127.0.0.1 with its
 * unix socket beside the data. PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres`
 * system user and its programs run through `setpriv`.
 */
import { chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Postgres {
  /** postgres://… of the `postgres` database */
  url: string;
  port: number;
  /** the cluster's directory (its log is postgres.log there) */
  dir: string;
  /** creates an empty database and returns its URL */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

/** The newest installed PostgreSQL's bin directory (Debian layout), or null. */
export function postgresBin(): string | null {
  try {
    const versions = readdirSync("/usr/lib/postgresql").filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    return versions.length ? `/usr/lib/postgresql/${versions[0]}/bin` : null;
  } catch {
    return null;
  }
}

function pgUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const r = Bun.spawnSync(["id", "-u", "postgres"]);
  const g = Bun.spawnSync(["id", "-g", "postgres"]);
  if (r.exitCode !== 0) throw new Error("running as root needs the `postgres` system user (Debian's postgresql package creates it)");
  return { uid: Number(r.stdout.toString()), gid: Number(g.stdout.toString()) };
}

async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/** The `pg_ctl stop` of each running cluster. A test run that ends without stop() still takes its clusters down. */
const running = new Set<() => void>();
process.on("exit", () => {
  for (const stop of running) stop();
});

/**
 * Starts a fresh cluster; call stop() when done (it also removes the data). Tests skip fsync; `durable` keeps it.
 * `dir` names a directory to keep the cluster in: an existing cluster there is started again, and stop() keeps it
 * (benchmarks that load a large database once reuse it between runs).
 */
export async function startPostgres(opts: { durable?: boolean; dir?: string; settings?: string[] } = {}): Promise<Postgres> {
  const bin = postgresBin();
  if (!bin) throw new Error("PostgreSQL is not installed: run scripts/test-deps.sh (bun run test does)");
  if (opts.dir) mkdirSync(opts.dir, { recursive: true });
  const dir = opts.dir ? realpathSync(opts.dir) : realpathSync(mkdtempSync(join(tmpdir(), "aiflare-pg-")));
  const owner = pgUser();
  if (owner) chownSync(dir, owner.uid, owner.gid);
  // setpriv execs in place (runuser would fork and keep the signals stop() sends from reaching postgres)
  const as = (cmd: string[]) => (owner ? ["setpriv", `--reuid=${owner.uid}`, `--regid=${owner.gid}`, "--init-groups", "--", ...cmd] : cmd);
  const data = join(dir, "data");
  const init = existsSync(join(data, "PG_VERSION"))
    ? { exitCode: 0, stderr: "" }
    : Bun.spawnSync(as([`${bin}/initdb`, "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"]), {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (init.exitCode !== 0) throw new Error(`initdb failed: ${init.stderr.toString()}`);
  // pg_ctl starts postgres as a daemon, not as a child of the test process: bun's test runner SIGTERMs the children
  // a test file spawned whenever any of its tests times out (and, in some versions, when none did).
  // Another process may take the free port before postgres binds it: postgres then exits, and we try another port.
  // pg_ctl -w waits over the unix socket in our own dir, so another cluster on that port never answers for ours.
  const log = join(dir, "postgres.log");
  const settings = [
    "-c listen_addresses=127.0.0.1",
    "-c max_connections=200",
    ...(opts.durable ? [] : ["-c fsync=off", "-c full_page_writes=off"]),
    ...(opts.settings ?? []).map((s) => `-c ${s}`),
  ];
  const pgCtl = (...args: string[]) => Bun.spawnSync(as([`${bin}/pg_ctl`, "-D", data, ...args]), { stdout: "pipe", stderr: "pipe" });
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    const started = pgCtl("-l", log, "-w", "-t", "60", "-o", `-p ${port} -k ${dir} ${settings.join(" ")}`, "start");
    if (started.exitCode === 0) break;
    if (attempt >= 5) throw new Error(`postgres did not start: ${started.stderr.toString()}${readFileSync(log, "utf8")}`);
  }
  const halt = () => void pgCtl("-m", "immediate", "stop");
  running.add(halt);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    port,
    dir,
    async createDatabase(name) {
      const sql = new Bun.SQL(url);
      try {
        await sql.unsafe(`CREATE DATABASE "${name.replace(/"/g, "")}"`);
      } finally {
        await sql.close();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async stop() {
      pgCtl("-m", "fast", "-w", "stop"); // disconnects clients, stops cleanly
      running.delete(halt);
      // AIFLARE_TEST_PG_LOG=<file> keeps the server's log of the run
      if (process.env.AIFLARE_TEST_PG_LOG) copyFileSync(join(dir, "postgres.log"), process.env.AIFLARE_TEST_PG_LOG);
      if (!opts.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
