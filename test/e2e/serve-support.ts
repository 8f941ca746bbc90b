/** `aiflare serve` as a test drives it: the compiled binary on a free port, its admin commands, temp dirs. */
import { afterEach, expect } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binary, runBin, testEnv } from "../helpers.ts";
import type { Backend } from "../server/backends.ts";

/** `aiflare serve …` admin commands on a database. */
export async function admin(database: string, args: string[], home: string) {
  return runBin(["serve", ...args, "--database", database], { cwd: home, env: testEnv(home) });
}

/** Creates a project and returns its first key. */
export async function newProject(database: string, home: string, name = "team"): Promise<string> {
  const r = await admin(database, ["project", "create", name, "--json"], home);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout).key;
}

/** A fresh database of each backend, as a URL or file the binary takes. */
export async function database(backend: Backend): Promise<string> {
  return (await backend.fresh()).url;
}

/** Temp dirs and servers for a test file; whatever a test started goes away after it. */
export function useServe() {
  const cleanups: (() => void | Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function tempDir(): string {
    const d = realpathSync(mkdtempSync(join(tmpdir(), "aiflare-serve-")));
    cleanups.push(() => rmSync(d, { recursive: true, force: true }));
    return d;
  }

  /** Starts `aiflare serve` on a free port and waits for its URL. */
  async function serve(database: string, home: string, extra: string[] = [], env: Record<string, string> = {}) {
    const proc = Bun.spawn([binary(), "serve", "--port", "0", "--database", database, ...extra], {
      cwd: home,
      env: testEnv(home, env),
      stdout: "pipe",
      stderr: "pipe",
    });
    let out = "";
    const reader = proc.stdout.getReader();
    const decoder = new TextDecoder();
    let url = "";
    while (!url) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`aiflare serve exited: ${out}${await new Response(proc.stderr).text()}`);
      out += decoder.decode(value);
      url = /listening on (http:\/\/\S+)/.exec(out)?.[1] ?? "";
    }
    // keep reading so the log pipe never fills
    const rest = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        out += decoder.decode(value);
      }
    })();
    const server = {
      url,
      proc,
      output: () => out,
      async stop(signal: NodeJS.Signals = "SIGTERM") {
        if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
        const code = await proc.exited;
        await rest;
        return code;
      },
    };
    cleanups.push(() => void server.stop("SIGKILL"));
    return server;
  }

  return { tempDir, serve };
}

/** A GET of the read API with a key, as JSON. */
export const read = async (url: string, key: string, path: string) => (await fetch(`${url}${path}`, { headers: { "x-api-key": key } })).json() as Promise<any>;
