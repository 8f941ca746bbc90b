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
