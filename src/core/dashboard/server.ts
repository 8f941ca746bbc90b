/**
 * `aiflare ui`'s HTTP server: the dashboard and its read API over this repository, on 127.0.0.1 only.
 *
 * Credentials never travel in a cookie: cookies are not scoped by port, so any other listener on 127.0.0.1 (or a
 * page that sends the browser there) would receive one. Instead the printed URL carries this run's token in its
 * fragment, which browsers never send to any server; the page trades it once (POST /api/v1/auth/login with an
 * `Authorization: Bearer` header) for a session that it keeps in its tab's sessionStorage and sends as a header,
 * which a browser adds to no request on its own. The Host check keeps DNS-rebinding pages out.
 *
 * The page itself is served without a credential (the token never reaches the server before the sign-in), so the
 * first screen's data cannot ride in the HTML: it rides in the sign-in's answer instead. `?first=<read API path and
 * query>` on the sign-in asks for that read's answer beside the session (`first`), exactly as the read would answer
 * it, which saves the page a round trip before its first card.
 *
 * The server listens before it loads the read API and the index (the URL is printed sooner, and the browser's first
 * requests, which need neither, are answered while they load): the first read loads them.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { RepoPaths } from "../repo.ts";
import { FIRST_READ } from "./first-read.ts";
import { apiError } from "./reply.ts";
import { newUiToken } from "./token.ts";

/** Where the printed URL puts the token: `#token=…`, never sent to the server by the browser. */
export const TOKEN_FRAGMENT = "token";
/**
 * How long after the URL is out the first page is read ahead when no browser has fetched the page's script by
 * then (one still starting); a browser already running fetches it sooner, and the read waits for it so that the
 * server's reading and the browser's compiling run side by side rather than one after the other.
 */
const WARM_AFTER_MS = 250;
/**
 * How long the first page read ahead stays the answer for a sign-in: one arriving later reads afresh (what the hooks
 * recorded since is on it). The page shows a moment's timeline either way; this moment is at most this much older.
 */
const AHEAD_FRESH_MS = 1000;
/** Sessions kept at once; the oldest goes first (each tab that opened the link holds one). */
const MAX_SESSIONS = 64;

export interface LocalDashboard {
  /** the URL to print (the run's token in its fragment) */
  url: string;
  port: number;
  /**
   * A URL carrying a new single-use code in place of the token, for a browser opened on the user's behalf:
   * the code works for one sign-in only, after which `used` runs.
   */
  singleUseUrl(used: () => void): string;
  /**
   * Loads the read API and reads the timeline's first page once, in the background, once the page's script has gone
   * out or WARM_AFTER_MS after the call, whichever comes first: the index is opened and brought up to the branch tips
   * (rebuilt, if it has to be) while the browser starts or compiles the page, not after the page asks; a sign-in
   * that asks for that page while it is being read gets this answer.
   */
  warm(): Promise<void>;
  stop(): void;
}

export interface LocalDashboardOptions {
  repo: Pick<RepoPaths, "root" | "commonDir">;
  /** 0 picks a free port */
  port: number;
  /** the page's static files (`dashboardResponse` bound to local mode) */
  assets: (pathname: string, acceptEncoding: string | null) => Response | null;
  token?: string;
}

// the run's token, the tab sessions and the single-use codes all carry the ui token's prefix: each is a redaction
// rule wherever it is pasted (SPEC §9)
const secret = newUiToken;
const digest = (value: string) => createHash("sha256").update(value).digest("hex");

function sameSecret(given: string | null | undefined, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The credential of an `Authorization: Bearer <value>` header, or null. */
function bearer(req: Request): string | null {
  const m = /^Bearer ([\w-]{1,200})$/.exec(req.headers.get("authorization") ?? "");
  return m ? m[1]! : null;
}

function plain(status: number, text: string): Response {
  return new Response(`${text}\n`, { status, headers: { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff" } });
}

/** Starts the server; it runs until `stop()`. */
export function startLocalDashboard(opts: LocalDashboardOptions): LocalDashboard {
  const token = opts.token ?? secret();
  // the sessions by their SHA-256: a lookup's timing says nothing about a session's value
  const sessions = new Set<string>();
  // single-use codes by their SHA-256, with what to do once one is used
  const codes = new Map<string, () => void>();
  let port = opts.port;
  // One read of the index at a time: a read that finds the index stale refreshes it under the index's lock, awaiting
  // git as it goes, and a second read of this same process waiting on that lock would hold up the first.
  let reads: Promise<unknown> = Promise.resolve();
  let api: Promise<typeof import("./api.ts")> | undefined;
  const read = (url: URL): Promise<Response | null> => {
    const next = reads.then(async () => (await (api ??= import("./api.ts"))).answerLocalApi(url, opts.repo));
    reads = next.catch(() => undefined);
    return next;
  };
  // The first page, read ahead (`warm`) or for the sign-in that asks for it, whichever comes first: a sign-in asking
  // while it is being read, or within AHEAD_FRESH_MS of its answer, takes that answer rather than reading the same
  // page again (on a machine the browser keeps busy as it starts, a second read delays its first card).
  let ahead: Promise<Response | null> | undefined;
  const readAhead = (): Promise<Response | null> => {
    if (ahead) return ahead;
    const answer = read(new URL(FIRST_READ, `http://127.0.0.1:${port}`));
    ahead = answer;
    // once it is older than that (or failed), a later sign-in reads afresh
    const drop = () => void (ahead === answer && (ahead = undefined));
    answer.then(() => void setTimeout(drop, AHEAD_FRESH_MS).unref(), drop);
    return answer;
  };
  // set while `warm` waits for its moment: starts the read ahead now
  let warmNow: (() => void) | undefined;

  /** Trades the token or a single-use code for a new session, with the answer of the read `first` names. */
  async function login(given: string | null, first: string | null): Promise<Response> {
    const key = given === null ? "" : digest(given);
    const used = codes.get(key);
    if (!used && !sameSecret(given, token)) return apiError(401, "open the URL that `aiflare ui` printed (it carries this run's token)");
    if (used) {
      codes.delete(key);
      used();
    }
    const session = secret();
    sessions.add(digest(session));
    if (sessions.size > MAX_SESSIONS) sessions.delete(sessions.values().next().value!);
    // the read's JSON goes in as it was written, not parsed and written again
    const answer = await firstRead(first);
    return new Response(`{"session":${JSON.stringify(session)}${answer === undefined ? "" : `,"first":${answer}`}}`, {
      headers: { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" },
    });
  }

  /** The JSON answer of the read API GET `first` names (`/api/v1/…?…`), when it succeeds; undefined otherwise. */
  async function firstRead(first: string | null): Promise<string | undefined> {
    if (!first?.startsWith("/api/v1/") || first.startsWith("/api/v1/auth/")) return undefined;
    let res: Response | null;
    if (first === FIRST_READ) {
      warmNow?.();
      // taken: a second sign-in reads for itself (an answer's body is read once)
      const answer = readAhead();
      ahead = undefined;
      res = await answer;
    } else res = await read(new URL(first, `http://127.0.0.1:${port}`));
    return res?.ok ? await res.text() : undefined;
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: opts.port,
    async fetch(req) {
      const url = new URL(req.url);
      const host = req.headers.get("host");
      if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) return plain(403, "This dashboard answers only at 127.0.0.1.");
      if (url.pathname === "/api/v1/auth/login") return req.method === "POST" ? await login(bearer(req), url.searchParams.get("first")) : apiError(405, "use POST");
      if (req.method !== "GET" && req.method !== "HEAD") return plain(405, "Only GET is served here.");
      if (url.pathname.startsWith("/api/")) {
        const given = bearer(req);
        if (!given || !(sessions.has(digest(given)) || sameSecret(given, token))) {
          return apiError(401, "open the URL that `aiflare ui` printed (it carries this run's token)");
        }
        return (await read(url)) ?? apiError(404, `no such API path: ${url.pathname}`);
      }
      const file = opts.assets(url.pathname, req.headers.get("accept-encoding"));
      // the page's script is on its way: the browser compiles it while the index is read
      if (file && url.pathname === "/assets/app.js" && warmNow) setTimeout(warmNow, 0);
      return file ?? plain(404, "Not found.");
    },
  });
  port = server.port ?? opts.port;
  const origin = `http://127.0.0.1:${port}`;
  return {
    url: `${origin}/#${TOKEN_FRAGMENT}=${token}`,
    port,
    singleUseUrl(used) {
      const code = secret();
      codes.set(digest(code), used);
      return `${origin}/#${TOKEN_FRAGMENT}=${code}`;
    },
    warm: () =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => warmNow?.(), WARM_AFTER_MS);
        warmNow = () => {
          warmNow = undefined;
          clearTimeout(timer);
          // the answer says what went wrong, if anything: the page's own read will say it again
          readAhead().then(() => resolve(), () => resolve());
        };
      }),
    stop: () => void server.stop(true),
  };
}
