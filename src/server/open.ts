/** Picks and opens the storage a server or an admin command uses, and applies the migrations. */
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { AiflareError } from "../errors.ts";
import type { Storage } from "./storage.ts";

export interface DatabaseOptions {
  /** postgres://… , sqlite:<path> or a file path; else AIFLARE_DATABASE_URL; else the default SQLite file */
  database?: string;
  /** where the default SQLite file lives */
  dataDir?: string;
  env?: Record<string, string | undefined>;
  /** what relative paths resolve from (default: the process's directory) */
  cwd?: string;
}

/** Where the database is, for messages: a PostgreSQL URL without its password, or the SQLite file. */
export function describeDatabase(target: { kind: "sqlite"; path: string } | { kind: "postgres"; url: string }): string {
  if (target.kind === "sqlite") return `SQLite ${target.path}`;
  try {
    const u = new URL(target.url);
    if (u.password) u.password = "***";
    return `PostgreSQL ${u.toString()}`;
  } catch {
    return "PostgreSQL";
  }
}

/** Which database the options name. */
export function databaseTarget(opts: DatabaseOptions): { kind: "sqlite"; path: string } | { kind: "postgres"; url: string } {
  const env = opts.env ?? process.env;
  const given = opts.database || env.AIFLARE_DATABASE_URL || "";
  if (/^postgres(ql)?:\/\//i.test(given)) return { kind: "postgres", url: given };
  const cwd = opts.cwd ?? process.cwd();
  if (given) return { kind: "sqlite", path: resolve(cwd, given.replace(/^sqlite:(\/\/)?/i, "")) };
  const base = opts.dataDir ? resolve(cwd, opts.dataDir) : join(env.XDG_DATA_HOME || join(env.HOME || homedir(), ".local", "share"), "aiflare");
  return { kind: "sqlite", path: join(base, "server.sqlite") };
}

/** Opens the database the options name and brings its schema up to date. */
export async function openStorage(opts: DatabaseOptions): Promise<{ storage: Storage; where: string }> {
  const target = databaseTarget(opts);
  const where = describeDatabase(target);
  let storage: Storage;
  try {
    if (target.kind === "postgres") {
      const { openPostgres } = await import("./postgres/index.ts");
      storage = openPostgres(target.url);
    } else {
      const { openSqlite } = await import("./sqlite/index.ts");
      storage = openSqlite(target.path);
    }
    await storage.migrate();
  } catch (err) {
    throw new AiflareError("CONFIG", `Cannot open the database (${where}): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return { storage, where };
}
