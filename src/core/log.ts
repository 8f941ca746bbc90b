import { appendFileSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
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

/** A logger that appends to the repository's log file (when known) and mirrors warnings to stderr. */
export function createLogger(opts: { file?: string; stderr?: boolean; component: string }): Logger {
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
      if (!opts.file) return;
      try {
        try {
          if (statSync(opts.file).size > MAX_LOG_BYTES) renameSync(opts.file, `${opts.file}.1`);
        } catch {
          // no log yet
        }
        appendFileSync(opts.file, line, { mode: 0o600 });
      } catch {
        // logging must never fail a hook
      }
    },
  };
}
