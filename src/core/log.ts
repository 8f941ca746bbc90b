import { appendFileSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import { ensureContextDir } from "./fsutil.ts";
import { CONTEXT_DIR } from "./session.ts";

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
  return {
    log(level, message, fields) {
      const extra = fields
        ? Object.entries(fields)
            .filter(([, v]) => v !== undefined)
            .map(([k, v]) => ` ${k}=${JSON.stringify(v)}`)
            .join("")
        : "";
      const line = `${new Date().toISOString()} ${level} ${opts.component}: ${message}${extra}\n`;
      if (opts.stderr && level !== "info") process.stderr.write(`aiflare: ${message}${extra}\n`);
      if (root === undefined) return;
      const file = logFilePath(root);
      try {
        if (!dirReady) ensureContextDir(root);
        dirReady = true;
        try {
          if (statSync(file).size > MAX_LOG_BYTES) renameSync(file, `${file}.1`);
        } catch {
          // no log yet
        }
        appendFileSync(file, line, { mode: 0o600 });
      } catch {
        // logging must never fail a hook
      }
    },
  };
}
