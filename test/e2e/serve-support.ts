/** `aiflare serve` as a real process for the end-to-end tests: the admin commands and a running server. */
import { expect } from "bun:test";
import { binary, runBin, testEnv } from "../helpers.ts";

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

/** Starts `aiflare serve` on a free port and waits for its URL; `cleanups` gets a SIGKILL in case the test fails. */
export async function serve(database: string, home: string, extra: string[], cleanups: (() => void | Promise<void>)[]) {
  const proc = Bun.spawn([binary(), "serve", "--port", "0", "--database", database, ...extra], {
    cwd: home,
    env: testEnv(home),
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

/** A GET of the read API with a key, as JSON. */
export const read = async (url: string, key: string, path: string) => (await fetch(`${url}${path}`, { headers: { "x-api-key": key } })).json() as Promise<any>;
