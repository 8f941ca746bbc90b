import { AiflareError } from "../../errors.ts";
import { VERSION } from "../../version.ts";

/** Outcome of one logical request (after retries). */
export type SendResult =
  | { ok: true; status: number; attempts: number; body?: string }
  | {
      ok: false;
      /**
       * rejected: the backend refused this body (400 and other 4xx) — go on with the rest;
       * fatal: nothing will work until the user fixes the setup (401, 403, 404, redirect) — stop;
       * unavailable: retries exhausted on network errors, timeouts, 429 or 5xx — stop, try next time.
       */
      kind: "rejected" | "fatal" | "unavailable";
      status?: number;
      message: string;
      attempts: number;
      /** the answer's body (at most MAX_RESPONSE_BYTES), when the backend answered */
      body?: string;
    };

export interface ClientOptions {
  endpoint: string;
  apiKey: string;
  /** how to name where the key came from in messages, e.g. "api_key in aiflare.yml" */
  keyHint?: string;
  endpointHint?: string;
  /** the user opted in to `http://` on a host other than this machine (the key travels in clear) */
  allowInsecureHttp?: boolean;
  /** per-request timeout (default 5 s) */
  timeoutMs?: number;
  /** attempts per request, first one included (default 4) */
  attempts?: number;
  /** first backoff delay; doubles each retry (default 500 ms) */
  backoffMs?: number;
  /** longest Retry-After honoured (default 30 s) */
  maxRetryAfterMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/** The backend API of SPEC §7. Bodies are JSON text that has already passed the redactor. */
export interface SyncClient {
  readonly endpoint: string;
  postBatch(body: string): Promise<SendResult>;
  putSession(body: string): Promise<SendResult>;
  /** links of squash and rebase-merge commits (an additive endpoint; see README "Squash and rebase merges") */
  postLinks?(body: string): Promise<SendResult>;
}

/** Where entries go, in batches (SPEC §7). */
export const BATCH_PATH = "/api/v1/captures/batch";
/** Where a session transcript goes (SPEC §7). */
export const SESSION_PATH = "/api/v1/work-sessions/prompt";
/** Where links go, in batches. */
export const LINKS_PATH = "/api/v1/links/batch";

/** The most of a response body aiflare reads: only a one-line reason is ever taken from it. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

/** True for a host name that stays on this machine (localhost, 127.0.0.0/8, ::1). */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h.endsWith(".localhost") || /^127(?:\.\d{1,3}){3}$/.test(h) || h === "::1" || h === "0:0:0:0:0:0:0:1";
}

/**
 * Why `endpoint` may not be used, or null: `http://` to another machine sends the key in clear, so it needs the
 * user's explicit opt-in.
 */
export function insecureEndpoint(endpoint: string, allowInsecureHttp: boolean, hint = "the endpoint"): string | null {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return `${hint} is not a URL`;
  }
  if (url.protocol === "https:") return null;
  if (url.protocol !== "http:") return `${hint} must be an https:// URL`;
  if (isLoopbackHost(url.hostname) || allowInsecureHttp) return null;
  return (
    `${hint} (${url.origin}) is http:// to another machine: the API key and your conversations would travel in clear. ` +
    "Use https://, or opt in with allow_insecure_http: true in your own config (or AIFLARE_ALLOW_INSECURE_HTTP=1)"
  );
}

/** True when `key` can be sent as an HTTP header value (printable ASCII, no line breaks or controls). */
export function isHeaderSafe(key: string): boolean {
  return /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(key);
}

/** Reads at most `max` bytes of a response body as text and drops the rest unread. */
export async function readCapped(res: Response, max = MAX_RESPONSE_BYTES): Promise<string> {
  const body = res.body;
  if (!body) return "";
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value.subarray(0, max - size));
      size += Math.min(value.length, max - size);
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/** Parses Retry-After (seconds or an HTTP date) into milliseconds. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A one-line reason from a response body: a JSON `message`/`error`/`detail`, else the text, trimmed. */
export function reasonFromBody(text: string): string {
  let reason = text;
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    const pick = j.message ?? j.error ?? j.detail ?? j.title;
    if (typeof pick === "string") reason = pick;
    else if (pick && typeof pick === "object" && typeof (pick as { message?: unknown }).message === "string") {
      reason = (pick as { message: string }).message;
    }
  } catch {
    // not JSON: use the text
  }
  return oneLine(reason);
}

/** A backend's text as one line of at most 200 characters. */
export function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}

function networkReason(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string };
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return `no answer within ${timeoutMs / 1000} s`;
  if (e?.code === "ECONNREFUSED") return "connection refused";
  if (e?.code === "ENOTFOUND") return "host not found";
  return `${e?.code ?? e?.name ?? "network error"}: ${(e?.message ?? String(err)).slice(0, 120)}`;
}

/** The HTTP client: X-API-Key, 5 s timeout per request, retries with backoff on network errors, 429 and 5xx. */
export function createClient(opts: ClientOptions): SyncClient {
  const endpoint = opts.endpoint.replace(/\/+$/, "");
  const timeoutMs = opts.timeoutMs ?? 5000;
  const attempts = Math.max(1, opts.attempts ?? 4);
  const backoffMs = opts.backoffMs ?? 500;
  const maxRetryAfterMs = opts.maxRetryAfterMs ?? 30_000;
  const sleep = opts.sleep ?? ((ms: number) => Bun.sleep(ms));
  const keyHint = opts.keyHint ?? "the API key";
  const endpointHint = opts.endpointHint ?? "the endpoint";
  // settings that cannot work are a configuration error now, not retries reported as an unavailable backend
  if (!isHeaderSafe(opts.apiKey)) {
    throw new AiflareError("CONFIG", `${keyHint}: the key holds a line break, a control or a non-ASCII character; copy it again without them`);
  }
  const insecure = insecureEndpoint(endpoint, opts.allowInsecureHttp ?? false, endpointHint);
  if (insecure) throw new AiflareError("CONFIG", insecure);

  async function send(method: "POST" | "PUT", path: string, body: string): Promise<SendResult> {
    const url = `${endpoint}${path}`;
    let last = "";
    let lastStatus: number | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      let waitMs: number | undefined;
      try {
        const res = await fetch(url, {
          method,
          headers: {
            "content-type": "application/json",
            accept: "application/json",
            "x-api-key": opts.apiKey,
            "user-agent": `aiflare/${VERSION}`,
          },
          body,
          // A redirect would resend the key to another place, and turn POST into GET: report it instead.
          redirect: "manual",
          signal: AbortSignal.timeout(timeoutMs),
        });
        const status = res.status;
        const text = await readCapped(res).catch(() => "");
        if (status >= 200 && status < 300) return { ok: true, status, attempts: attempt, body: text };
        lastStatus = status;
        const stop = (kind: "fatal" | "rejected", message: string): SendResult => ({ ok: false, kind, status, attempts: attempt, message });
        if (status >= 300 && status < 400) {
          const to = res.headers.get("location");
          return stop("fatal", `the endpoint answers with a redirect (${status}${to ? ` to ${to}` : ""}); set ${endpointHint} to the final URL`);
        }
        if (status === 401 || status === 403) {
          return stop("fatal", `the backend refused the API key (${status}${status === 401 ? " Unauthorized" : " Forbidden"}); check ${keyHint}`);
        }
        if (status === 404) {
          return stop(
            "fatal",
            `the backend answered 404 for ${path}: no project for this key, or the endpoint is wrong; check ${endpointHint} (${endpoint}) and that the key belongs to a project`,
          );
        }
        if (status === 429 || status >= 500) {
          last = `HTTP ${status}${text ? ` ${reasonFromBody(text)}` : ""}`;
          waitMs = parseRetryAfter(res.headers.get("retry-after"));
        } else {
          const reason = text ? reasonFromBody(text) : "";
          return { ...stop("rejected", `the backend rejected the data (${status})${reason ? `: ${reason}` : ""}`), body: text };
        }
      } catch (err) {
        last = networkReason(err, timeoutMs);
        lastStatus = undefined;
      }
      if (attempt < attempts) {
        const backoff = backoffMs * 2 ** (attempt - 1) * (0.75 + Math.random() * 0.5);
        await sleep(Math.min(waitMs ?? backoff, maxRetryAfterMs));
      }
    }
    return {
      ok: false,
      kind: "unavailable",
      status: lastStatus,
      attempts,
      message: `the backend at ${endpoint} is unavailable (${last}, ${attempts} attempt${attempts > 1 ? "s" : ""})`,
    };
  }

  return {
    endpoint,
    postBatch: (body) => send("POST", BATCH_PATH, body),
    putSession: (body) => send("PUT", SESSION_PATH, body),
    postLinks: (body) => send("POST", LINKS_PATH, body),
  };
}
