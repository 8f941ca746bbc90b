import { renameSync } from "node:fs";
import { join } from "node:path";
import { appendWhole, ensureContextDir, ownFileSize } from "./fsutil.ts";
import { CONTEXT_DIR } from "./session.ts";
import { termSafe } from "../util/terminal.ts";

const MAX_LOG_BYTES = 1024 * 1024;

export type LogLevel = "info" | "warn" | "error";

/** Writes diagnostics; never given prompt, reply or file contents. */
export interface Logger {
  log(level: LogLevel, message: string, fields?: Record<string, string | number | boolean | undefined>): void;
}

/** The log file of a repository: `<root>/.context-capture/aiflare.log` (rotated at 1 MiB). */
export function logFilePath(root: string): string {
  return join(root, CONTEXT_DIR, "aiflare.log");
}

/**
 * A logger that appends to the log file of the repository at `root` (when known) and mirrors warnings to stderr.
 * The first line written creates `.context-capture/` if need be, so callers never have to.
 */
export function createLogger(opts: { root?: string; stderr?: boolean; component: string }): Logger {
  const root = opts.root;
  let dirReady = false;
  let refusedShown = false;
  return {
    log(level, message, fields) {
      // a loop: Array's filter and map cost a hook more on their first call than this whole line
      let extra = "";
      for (const k in fields) if (fields[k] !== undefined) extra += ` ${k}=${JSON.stringify(fields[k])}`;
      // errors may quote outside text; a log is read on a terminal too
      const line = termSafe(`${new Date().toISOString()} ${level} ${opts.component}: ${message}${extra}`) + "\n";
      if (opts.stderr && level !== "info") process.stderr.write(`${termSafe(`aiflare: ${message}${extra}`)}\n`);
      if (root === undefined) return;
      const file = logFilePath(root);
      try {
        if (!dirReady) ensureContextDir(root);
        dirReady = true;
        if ((ownFileSize(file) ?? 0) > MAX_LOG_BYTES) renameSync(file, `${file}.1`);
        appendWhole(file, line);
      } catch (err) {
        // logging must never fail a hook; a refused (unsafe) log place is said once on stderr instead
        if (!refusedShown && (err as { code?: string }).code === "UNSAFE_PATH") {
          refusedShown = true;
          if (!opts.stderr || level === "info") process.stderr.write(`aiflare: ${message}${extra}\n`);
          process.stderr.write(`aiflare: not logged to ${file}: ${(err as Error).message}\n`);
        }
      }
    },
  };
}
