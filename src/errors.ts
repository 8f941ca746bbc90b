/** Error codes that commands report; each message says what to do. */
export type ErrorCode =
  | "NOT_A_REPO"
  | "INVALID_SESSION_ID"
  | "INVALID_ARGUMENT"
  | "NOT_FOUND"
  | "CONFLICT"
  | "LOCKED"
  | "REDACTION_REFUSED"
  | "CONFIG"
  | "NETWORK"
  | "BACKEND"
  | "GIT"
  | "AGENT"
  | "UNSAFE_PATH";

/** A failure with a stable code, an actionable message and an optional cause. */
export class AiflareError extends Error {
  readonly code: ErrorCode;
  readonly data?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; data?: Record<string, unknown> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AiflareError";
    this.code = code;
    this.data = options?.data;
  }
}

/**
 * A bad value given to a command-line flag or argument: reported like every other usage error (one line naming
 * the command, exit code 2). Tools that take the same values (MCP, the read API) see an INVALID_ARGUMENT.
 */
export function usageError(message: string): AiflareError {
  return new AiflareError("INVALID_ARGUMENT", message, { data: { usage: true } });
}

/** True when `err` is an AiflareError (optionally with the given code). */
export function isAiflareError(err: unknown, code?: ErrorCode): err is AiflareError {
  return err instanceof AiflareError && (code === undefined || err.code === code);
}

/** A short description of any thrown value, safe to log (no payload contents). */
export function describeError(err: unknown): string {
  if (err instanceof AiflareError) return `${err.code}: ${err.message}`;
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

/** What a failure of the machine (not of aiflare) means and what to do, by Node's error code. */
const SYSTEM_FAILURES: Record<string, string> = {
  EROFS: "is on a read-only file system; aiflare needs to write there (run it in a writable checkout)",
  EACCES: "is not writable by you (permission denied); check its owner and permissions",
  EPERM: "may not be changed (operation not permitted); check its owner and permissions",
  ENOSPC: "cannot be written: the disk is full. Free some space and run the command again",
  EDQUOT: "cannot be written: the disk quota is used up. Free some space and run the command again",
  EMFILE: "cannot be opened: too many open files. Close some programs and run the command again",
};

/** SQLite's own messages for the same conditions (bun:sqlite errors carry no path). */
const SQLITE_FAILURES: [RegExp, string][] = [
  [/readonly database|read-only/i, "aiflare's index cannot be written (read-only); run aiflare in a writable checkout"],
  [/disk is full|SQLITE_FULL/i, "aiflare's index cannot be written: the disk is full. Free some space and run the command again"],
  [/unable to open database/i, "aiflare's index cannot be opened; check that .git is writable by you"],
];

/**
 * One line saying what to do about a failure that is not a bug in aiflare (read-only checkout, permissions, disk
 * full); undefined for anything else.
 */
export function describeExpectedFailure(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as Error & { code?: unknown; path?: unknown };
  const code = typeof e.code === "string" ? e.code : undefined;
  if (code && code in SYSTEM_FAILURES) {
    const what = typeof e.path === "string" ? e.path : "a file aiflare needs";
    return `${what} ${SYSTEM_FAILURES[code]}`;
  }
  if (e.name === "SQLiteError" || (code ?? "").startsWith("SQLITE_")) {
    for (const [re, text] of SQLITE_FAILURES) if (re.test(`${e.message} ${code ?? ""}`)) return text;
  }
  return undefined;
}

/** The stack of a thrown value (its message when it has none), for the log file. */
export function errorDetails(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

/**
 * What the user sees of a bug: one line with a pointer to the details (the log file, or AIFLARE_DEBUG=1), or the
 * whole stack when `debug`.
 */
export function unexpectedFailure(err: unknown, opts: { debug: boolean; logPath?: string }): string {
  if (opts.debug) return `unexpected error: ${errorDetails(err)}`;
  const where = opts.logPath ? `details in ${opts.logPath}; AIFLARE_DEBUG=1 prints them` : "AIFLARE_DEBUG=1 prints the details";
  return `unexpected error: ${describeError(err).split("\n")[0]} (${where})`;
}
