/** Runs the team server: listens, logs one line per request, stops cleanly on SIGINT/SIGTERM. */
import { createApp, type AppOptions } from "./app.ts";
import type { Storage } from "./storage.ts";

export interface ServeOptions extends AppOptions {
  host: string;
  port: number;
  storage: Storage;
  /** where request lines and notices go */
  log?: (line: string) => void;
}

/** Starts listening; resolves with the URL and a stop() that finishes in-flight requests first. */
export async function startServer(opts: ServeOptions): Promise<{ url: string; port: number; stop(force?: boolean): Promise<void> }> {
  const handle = await createApp(opts.storage, opts);
  const log = opts.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const server = Bun.serve({
    hostname: opts.host,
    port: opts.port,
    // the app reads bodies itself, under its own cap; this is the outer bound
    maxRequestBodySize: 64 * 1024 * 1024,
    async fetch(req, srv) {
      const t0 = performance.now();
      const addr = srv.requestIP(req)?.address ?? "unknown";
      const res = await handle(req, addr);
      // method, path, status, time: never a key, a query or a body
      const path = new URL(req.url).pathname.replace(/[^\x21-\x7e]/g, "?");
      log(`${new Date().toISOString()} ${req.method} ${path} ${res.status} ${(performance.now() - t0).toFixed(1)}ms`);
      return res;
    },
    error(err) {
      log(`${new Date().toISOString()} internal error: ${err.message}`);
      return Response.json({ error: "internal server error; try again later" }, { status: 500 });
    },
  });
  const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host}:${server.port}`,
    port: server.port!,
    /** stops accepting; waits for the requests in flight unless `force` */
    async stop(force = false) {
      await server.stop(force);
    },
  };
}

/** Serves until SIGINT or SIGTERM, then stops accepting, finishes what is in flight and closes the database. */
export async function serveUntilSignal(opts: ServeOptions & { where: string }): Promise<void> {
  const log = opts.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const server = await startServer({ ...opts, log });
  log(`aiflare serve: listening on ${server.url} (${opts.where}${opts.trustProxy ? "; trusting the proxy's X-Forwarded-For, -Host and -Proto" : ""})`);
  const signal = await new Promise<string>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
  log(`aiflare serve: ${signal}: finishing requests in flight`);
  await server.stop();
  await opts.storage.close();
  log("aiflare serve: stopped");
}
