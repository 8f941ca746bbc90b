/**
 * A real PostgreSQL for the server tests: a throw-away cluster in a temp dir, on a free port of 127.0.0.1 with its
 * unix socket beside the data. PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres`
 * system user and its programs run through `setpriv`.
 */
import { chownSync, mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Postgres {
  /** postgres://… of the `postgres` database */
  url: string;
  port: number;
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

const running = new Set<{ kill(sig?: number | NodeJS.Signals): void }>();
// A test run that ends without stop() still takes its clusters down.
process.on("exit", () => {
  for (const p of running) p.kill("SIGQUIT");
});

/** Starts a fresh cluster; call stop() when done (it also removes the data). Tests skip fsync; `durable` keeps it. */
export async function startPostgres(opts: { durable?: boolean } = {}): Promise<Postgres> {
  const bin = postgresBin();
  if (!bin) throw new Error("PostgreSQL is not installed: run scripts/test-deps.sh (bun run test does)");
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "aiflare-pg-")));
  const owner = pgUser();
  if (owner) chownSync(dir, owner.uid, owner.gid);
  // setpriv execs in place (runuser would fork and keep the signals stop() sends from reaching postgres)
  const as = (cmd: string[]) => (owner ? ["setpriv", `--reuid=${owner.uid}`, `--regid=${owner.gid}`, "--init-groups", "--", ...cmd] : cmd);
  const data = join(dir, "data");
  const init = Bun.spawnSync(as([`${bin}/initdb`, "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"]), {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (init.exitCode !== 0) throw new Error(`initdb failed: ${init.stderr.toString()}`);
  // another process may take the free port before postgres binds it: postgres then exits, and we try another port.
  // Readiness is asked over the unix socket in our own dir, so another cluster on that port never answers for ours.
  let port = 0;
  let proc: ReturnType<typeof Bun.spawn> | undefined;
  for (let attempt = 1; !proc; attempt++) {
    port = await freePort();
    const p = Bun.spawn(
      as([`${bin}/postgres`, "-D", data, "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200", ...(opts.durable ? [] : ["-c", "fsync=off", "-c", "full_page_writes=off"])]),
      { stdout: "ignore", stderr: "pipe" },
    );
    running.add(p);
    let stderr = "";
    void new Response(p.stderr as ReadableStream).text().then((t) => (stderr = t));
    for (let i = 0; ; i++) {
      const ready = Bun.spawnSync([`${bin}/pg_isready`, "-q", "-h", dir, "-p", String(port)]);
      if (ready.exitCode === 0 && p.exitCode === null) {
        proc = p;
        break;
      }
      if (p.exitCode !== null || i > 400) {
        p.kill("SIGQUIT");
        await p.exited;
        running.delete(p);
        if (attempt >= 5) throw new Error(`postgres did not start: ${stderr}`);
        break;
      }
      await Bun.sleep(50);
    }
  }
  const server = proc;
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    port,
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
      server.kill("SIGINT"); // fast shutdown: disconnects clients, stops cleanly
      await server.exited;
      running.delete(server);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
