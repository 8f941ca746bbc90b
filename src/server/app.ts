/**
 * The routes of `aiflare serve`: the write API of SPEC §7 (what `aiflare sync` sends) and the read API of the
 * dashboard, per project, behind a key or a sign-in cookie. Routes are thin: check, call the storage, shape.
 */
import { matchContext, missingRoots, searchFields } from "../core/dashboard/answers.ts";
import { everyDay, readDays, windowStart } from "../core/dashboard/stats.ts";
import { forgeCommitUrl } from "../core/dashboard/forge.ts";
import type { CommitFacts } from "../core/dashboard/contract.ts";
import { isValidSessionId } from "../util/ids.ts";
import { conversationLines } from "../util/jsonl.ts";
import { dashboardResponse } from "../web/assets.ts";
import { HttpError, bearer, cookie, errorResponse, isLoopbackHost, json, parseObject, readBody } from "./http.ts";
import { ingest, ingestAnswer, storeTranscript } from "./write.ts";
import { MAX_BATCH_ENTRIES } from "./ingest.ts";
import { checkLink } from "./ingest-links.ts";
import { SESSION_MAX_AGE_S, hashKey, isKeyShaped, isTokenShaped, newToken } from "./keys.ts";
import { WriteLanes } from "./lanes.ts";
import { FailureGate, RateLimiter, clientOf } from "./limits.ts";
import { BadQuery, cursorAfter, fullEntry, normalPath, sessionsAnswer, summary, timelineQuery, transcriptCuts } from "./read.ts";
import type { KeyOwner, Storage, StoredEntry } from "./storage.ts";

/** The most commits one `GET /api/v1/entries?commits=` names. */
export const MAX_LOOKUP = 100;

/** The largest body any route reads. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
const MAX_LOGIN_BYTES = 4096;
const COOKIE = "aiflare_session";

export interface AppOptions {
  /** requests per second per key (0 = no limit); bursts of 10 s worth are allowed */
  rateLimit?: number;
  /** failed key checks per client per minute before that client must wait */
  failureLimit?: number;
  /** failed key checks per minute from all clients together before any wrong key must wait */
  failureBudget?: number;
  /** a proxy in front is trusted: its X-Forwarded-For names the client, X-Forwarded-Host and -Proto the public URL */
  trustProxy?: boolean;
  now?: () => Date;
  /** run the redactor over what is stored (default true; off only to measure what it costs) */
  redact?: boolean;
}

/** Who is asking: the projects the key or the cookie gives access to. */
interface Caller {
  via: "key" | "cookie";
  id: string;
  owners: KeyOwner[];
}

/** Builds the request handler over `storage` (migrated). */
export async function createApp(storage: Storage, opts: AppOptions = {}) {
  const perSecond = opts.rateLimit ?? 20;
  const limiter = new RateLimiter(perSecond, perSecond * 10);
  const gate = new FailureGate(opts.failureLimit ?? 20, opts.failureBudget ?? 200);
  const lanes = new WriteLanes();
  const now = opts.now ?? (() => new Date());
  /** A header the proxy sets; without a trusted proxy the client could have sent it, so it is not read. */
  const forwarded = (req: Request, name: string) => (opts.trustProxy ? req.headers.get(`x-forwarded-${name}`) : null);

  /** Who sent the request, for counting failures: the connection's address, or the last one a trusted proxy added. */
  function clientAddress(req: Request, addr: string): string {
    const hops = forwarded(req, "for")?.split(",") ?? [];
    return clientOf(hops.at(-1)?.trim() || addr);
  }

  /** The caller of a request, or an HttpError (401, 429). */
  async function caller(req: Request, addr: string): Promise<Caller> {
    const key = req.headers.get("x-api-key");
    if (key !== null) return { via: "key", ...(await checkKey(key, clientAddress(req, addr))) };
    const owners = await signedIn(req);
    if (owners.length === 0) throw new HttpError(401, "sign in, or send an API key in the X-API-Key header");
    return { via: "cookie", id: owners[0]!.keyId, owners };
  }

  /** The sign-in record a request's session names (by the hash of its token); none when there is none. */
  function signInOf(req: Request): string | null {
    const token = sessionValue(req);
    return token && isTokenShaped(token) ? hashKey(token) : null;
  }

  /** The keys of the request's live sign-in: ended at logout, at expiry and when one of its keys is revoked. */
  async function signedIn(req: Request): Promise<KeyOwner[]> {
    const id = signInOf(req);
    return id ? storage.signInKeys(id, now().getTime()) : [];
  }

  /** A valid key always passes (it has its own rate bucket); a wrong one is counted, and refused with 429 past the limits. */
  async function checkKey(key: string, client: string): Promise<{ id: string; owners: KeyOwner[] }> {
    const owner = isKeyShaped(key) ? await storage.keyByHash(hashKey(key)) : null;
    if (owner) return { id: owner.keyId, owners: [owner] };
    const wait = gate.fail(client);
    if (wait > 0) throw new HttpError(429, "too many failed key checks; wait", {}, { "retry-after": String(Math.max(1, Math.ceil(wait / 1000))) });
    throw new HttpError(401, "unknown or revoked API key");
  }

  function throttle(c: Caller): void {
    const wait = limiter.take(c.id);
    if (wait > 0) throw new HttpError(429, "too many requests; slow down", {}, { "retry-after": String(Math.max(1, Math.ceil(wait / 1000))) });
  }

  /** The project a read is about: `?project=<id>`, or the caller's only one. */
  function projectOf(c: Caller, url: URL): string {
    const wanted = url.searchParams.get("project");
    const ids = [...new Set(c.owners.map((o) => o.projectId))];
    if (wanted) {
      if (!ids.includes(wanted)) throw new HttpError(404, "no such project for this key or sign-in");
      return wanted;
    }
    if (ids.length > 1) throw new HttpError(400, `signed in to ${ids.length} projects: add ?project=<id>`);
    return ids[0]!;
  }

  function writer(c: Caller): string {
    if (c.via !== "key") throw new HttpError(403, "writes need an API key in the X-API-Key header");
    return c.owners[0]!.projectId;
  }

  function requireJson(req: Request): void {
    const type = req.headers.get("content-type") ?? "";
    if (!/^application\/json\b/i.test(type)) throw new HttpError(415, "send the body as application/json");
  }

  async function body(req: Request, max = MAX_BODY_BYTES, json = true): Promise<Record<string, unknown>> {
    if (json) requireJson(req);
    return parseObject(await readBody(req, max));
  }

  /** A browser's request from another site (its Origin names another host) must not change anything. */
  function sameOrigin(req: Request, url: URL): void {
    const origin = req.headers.get("origin");
    if (origin === null) return;
    let host: string | null = null;
    try {
      host = new URL(origin).host;
    } catch {
      // "null" or garbage: not this site
    }
    // behind a trusted proxy the public name arrives as X-Forwarded-Host when the proxy rewrites Host
    const ours = [req.headers.get("host") ?? url.host, forwarded(req, "host")];
    if (host === null || !ours.includes(host)) throw new HttpError(403, "requests from another site are refused");
  }

  const projectsOf = (owners: KeyOwner[]) => {
    const seen = new Map<string, { id: string; name: string }>();
    for (const o of owners) seen.set(o.projectId, { id: o.projectId, name: o.projectName });
    return [...seen.values()];
  };

  const cookieHeader = (req: Request, value: string, maxAge: number) => {
    const secure = new URL(req.url).protocol === "https:" || forwarded(req, "proto") === "https";
    return `${COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAge}${secure ? "; Secure" : ""}`;
  };

  // How a browser's session travels. Cookies are not scoped by port: one set by a server reached as localhost or
  // 127.0.0.1 goes to every other listener on that name. There the session is answered in the body instead, the
  // page keeps it in its tab's sessionStorage and sends it as `Authorization: Bearer`, which browsers send nowhere
  // by themselves (and any old cookie is cleared). Under a real host name (behind TLS) it is an HttpOnly cookie.

  /** The session a request carries: its Authorization header, else its cookie. */
  const sessionValue = (req: Request): string | null => bearer(req) ?? cookie(req, COOKIE);

  /** The sign-in answer: `body` with the session, as a cookie or (loopback names) in the body. */
  const signInAnswer = (req: Request, value: string, body: Record<string, unknown>): Response =>
    isLoopbackHost(req.headers.get("x-forwarded-host") ?? req.headers.get("host") ?? new URL(req.url).host)
      ? json({ ...body, session: value }, 200, { "set-cookie": cookieHeader(req, "", 0) })
      : json(body, 200, { "set-cookie": cookieHeader(req, value, SESSION_MAX_AGE_S) });

  // --- write API (SPEC §7) -----------------------------------------------------------------------------------------

  async function postBatch(req: Request, c: Caller): Promise<Response> {
    const projectId = writer(c);
    return inLane(c, async () => {
      const { captures } = await body(req);
      if (!Array.isArray(captures)) throw new HttpError(400, 'the body must be {"captures": [entry, …]}');
      return ingestAnswer(await ingest(storage, projectId, captures, ingestOpts(c)), captures.length);
    });
  }

  /** `POST /api/v1/links/batch` `{"links": [link, …]}`: links of squash and rebase-merge commits (README "Squash and rebase merges"). */
  async function postLinks(req: Request, c: Caller): Promise<Response> {
    const projectId = writer(c);
    const { links } = await body(req);
    if (!Array.isArray(links)) throw new HttpError(400, 'the body must be {"links": [link, …]}');
    if (links.length > MAX_BATCH_ENTRIES) throw new HttpError(400, `at most ${MAX_BATCH_ENTRIES} links per batch, not ${links.length}`);
    const rows: { commitHash: string; json: string }[] = [];
    for (const [i, raw] of links.entries()) {
      const link = checkLink(raw);
      if (!link) throw new HttpError(400, `link ${i}: not a link (commitHash, method, parts, coverage, computedAt)`);
      rows.push({ commitHash: link.commitHash, json: JSON.stringify(link) });
    }
    await storage.putLinks(projectId, rows);
    return json({ accepted: rows.length });
  }

  async function postOne(req: Request, c: Caller): Promise<Response> {
    const projectId = writer(c);
    return inLane(c, async () => ingestAnswer(await ingest(storage, projectId, [await body(req)], ingestOpts(c)), 1));
  }

  async function putSession(req: Request, c: Caller): Promise<Response> {
    const projectId = writer(c);
    return inLane(c, async () => {
      const { claudeSessionId, content } = await body(req);
      await storeTranscript(storage, projectId, claudeSessionId, content, ingestOpts(c));
      return json({ ok: true });
    });
  }

  /** how a caller's writes are checked: the server's clock, its redactor, and who the sending key belongs to */
  const ingestOpts = (c: Caller) => ({ nowMs: now().getTime(), redact: opts.redact, keyOwner: c.owners[0]?.owner ?? null });

  /** Runs a write in its key's lane; 429 when the key has too many writes in line, or this one waited too long. */
  async function inLane(c: Caller, fn: () => Promise<Response>): Promise<Response> {
    const r = await lanes.run(c.id, fn);
    if (r === null) throw new HttpError(429, "too many writes in flight for this key; slow down", {}, { "retry-after": "1" });
    return r;
  }

  // --- sign-in -------------------------------------------------------------------------------------------------------

  async function login(req: Request, addr: string): Promise<Response> {
    // the page may post its JSON as text/plain; the Origin check keeps other sites out
    const { key } = await body(req, MAX_LOGIN_BYTES, false);
    if (typeof key !== "string" || key === "") throw new HttpError(400, 'the body must be {"key": "<API key>"}');
    const { owners } = await checkKey(key, clientAddress(req, addr));
    // signing in with another key adds its project: a new sign-in with both keys replaces the previous one
    const keys = new Map([...(await signedIn(req)), owners[0]!].map((o) => [o.keyId, o]));
    const token = newToken();
    const nowMs = now().getTime();
    await storage.signIn({ id: hashKey(token), keyIds: [...keys.keys()], createdMs: nowMs, expiresMs: nowMs + SESSION_MAX_AGE_S * 1000 }, signInOf(req) ?? undefined);
    return signInAnswer(req, token, { projects: projectsOf([...keys.values()]) });
  }

  async function logout(req: Request): Promise<Response> {
    const id = signInOf(req);
    if (id) await storage.signOut(id);
    return json({ ok: true }, 200, { "set-cookie": cookieHeader(req, "", 0) });
  }

  // --- read API ------------------------------------------------------------------------------------------------------

  const sessionOf = (e: StoredEntry) => (JSON.parse(e.summary) as { claudeSessionId: string }).claudeSessionId;

  async function timeline(projectId: string, url: URL): Promise<Response> {
    const q = timelineQuery(url.searchParams, now());
    const rows = await storage.timeline(projectId, q);
    const page = rows.slice(0, q.limit - 1);
    // a request group whose root is not on this page (an older page, or outside the filters) is shown with it: those
    // roots in one read (a search's page can miss dozens), beside the sessions' facts
    const wanted = missingRoots(page);
    const [facts, found] = await Promise.all([
      storage.sessionFacts(projectId, [...new Set(page.map(sessionOf))]),
      wanted.length ? storage.entriesByHashes(projectId, wanted) : Promise.resolve([]),
    ]);
    const byHash = new Map(found.map((e) => [e.commitHash, e]));
    const roots = wanted.flatMap((h) => byHash.get(h) ?? []);
    const words = q.words ?? [];
    const entries = page.map((e) => {
      if (!words.length) return summary(e);
      const fields = searchFields(JSON.parse(e.summary) as { intent: string; alternatives: string; diffSummary: string }, conversationLines(e.conversation ?? ""));
      return { ...summary(e), match: matchContext(fields, words) };
    });
    return json({
      entries,
      nextCursor: rows.length > page.length && page.length ? cursorAfter(page.at(-1)!) : null,
      sessions: sessionsAnswer(facts),
      roots: roots.map(summary),
    });
  }

  async function entry(projectId: string, hash: string): Promise<Response> {
    if (!/^[0-9a-f]{4,40}$/i.test(hash)) throw new HttpError(400, "give at least 4 hex digits of a commit hash");
    const found = await storage.entriesByPrefix(projectId, hash.toLowerCase());
    if (found.length === 0) {
      // a squash or rebase-merge commit: its linked parts
      const linked = await linkedEntry(projectId, hash.toLowerCase());
      if (linked) return linked;
      throw new HttpError(404, `no entry for commit ${hash}`);
    }
    if (found.length > 1) throw new HttpError(400, `${hash} names more than one commit; give more digits`);
    const e = found[0]!;
    const groupId = e.groupRootId ?? e.commitHash;
    const members = await storage.group(projectId, groupId);
    const root = members.filter((m) => m.commitHash === groupId);
    // the server has no git: the entry's diff summary and files are what it holds; the patch is in the clones
    const commit: CommitFacts = {
      show: `git show ${e.commitHash}`,
      forgeUrl: forgeCommitUrl(await storage.projectSetting(projectId, "forge_url"), e.commitHash),
      diff: null,
      diffMissing: "remote",
    };
    return json({ entry: fullEntry(e), group: [...root, ...members.filter((m) => m.commitHash !== groupId)].map(summary), commit });
  }

  /** Whole entries of the commits named (full hashes, comma-separated): what a teammate's `why` and `pull` read. */
  async function entriesOf(projectId: string, url: URL): Promise<Response> {
    const hashes = [...new Set((url.searchParams.get("commits") ?? "").split(",").map((h) => h.trim().toLowerCase()).filter(Boolean))];
    if (hashes.length === 0 || hashes.length > MAX_LOOKUP) throw new HttpError(400, `commits: name 1 to ${MAX_LOOKUP} commits, comma-separated`);
    const bad = hashes.find((h) => !/^[0-9a-f]{40}$/.test(h));
    if (bad !== undefined) throw new HttpError(400, `commits: ${bad.slice(0, 60)} is not a full 40-hex commit hash`);
    const found = await storage.entriesByHashes(projectId, hashes);
    return json({ entries: found.map(fullEntry) });
  }

  /** `entry: null`, the link and its parts' summaries (those the server has), or null when no link is stored. */
  async function linkedEntry(projectId: string, prefix: string): Promise<Response | null> {
    const links = await storage.linksByPrefix(projectId, prefix);
    if (links.length !== 1) return null;
    const link = checkLink(JSON.parse(links[0]!.json));
    if (!link) return null;
    const parts: StoredEntry[] = [];
    for (const p of link.parts) {
      const [e] = await storage.entriesByPrefix(projectId, p.commitHash);
      if (e && e.commitHash === p.commitHash) parts.push(e);
    }
    return json({ entry: null, commitHash: link.commitHash, link, parts: parts.map(summary), group: [] });
  }

  async function session(projectId: string, id: string): Promise<Response> {
    if (!isValidSessionId(id)) throw new HttpError(400, "not a valid session id");
    const [entries, stored] = await Promise.all([storage.sessionEntries(projectId, id), storage.transcript(projectId, id)]);
    if (entries.length === 0 && stored === null) throw new HttpError(404, `no session ${id}`);
    // without a stored transcript, the entries' deltas are the transcript as far as the server knows it
    const transcript = stored ?? entries.map((e) => (e.conversation ?? "").replace(/\n?$/, "\n")).filter((t) => t !== "\n").join("");
    return json({ sessionId: id, transcript, entries: entries.map(summary), cuts: transcriptCuts(transcript, entries) });
  }

  async function files(projectId: string, url: URL): Promise<Response> {
    const raw = url.searchParams.get("path");
    if (raw === null || raw.trim() === "") throw new HttpError(400, "path: name a file or a directory");
    const path = normalPath(raw);
    const rows = await storage.timeline(projectId, { limit: 200, file: path });
    return json({ path, entries: rows.map(summary) });
  }

  async function stats(projectId: string, url: URL): Promise<Response> {
    const days = readDays(url.searchParams.get("days"));
    if (typeof days === "string") throw new HttpError(400, days);
    const sinceMs = windowStart(now(), days);
    const s = await storage.stats(projectId, sinceMs);
    return json({ ...s, perDay: everyDay(sinceMs, days, s.perDay) });
  }

  // --- dispatch -----------------------------------------------------------------------------------------------------

  async function api(req: Request, url: URL, addr: string): Promise<Response> {
    const path = url.pathname.replace(/\/+$/, "");
    const m = req.method;
    if (m !== "GET" && m !== "HEAD") sameOrigin(req, url);
    if (path === "/api/v1/auth/login") {
      if (m !== "POST") throw notAllowed("POST");
      return login(req, addr);
    }
    if (path === "/api/v1/auth/logout") {
      if (m !== "POST") throw notAllowed("POST");
      return logout(req);
    }
    const writes: Record<string, [string, (req: Request, c: Caller) => Promise<Response>]> = {
      "/api/v1/captures/batch": ["POST", postBatch],
      "/api/v1/captures": ["POST", postOne],
      "/api/v1/links/batch": ["POST", postLinks],
      "/api/v1/work-sessions/prompt": ["PUT", putSession],
    };
    const write = writes[path];
    if (write) {
      if (m !== write[0]) throw notAllowed(write[0]);
      const c = await caller(req, addr);
      throttle(c);
      return write[1](req, c);
    }
    const read = readRoute(path);
    if (!read) throw new HttpError(404, `no API at ${path}`);
    if (m !== "GET" && m !== "HEAD") throw notAllowed("GET");
    const c = await caller(req, addr);
    throttle(c);
    if (read.name === "me") return json({ projects: projectsOf(c.owners) });
    const projectId = projectOf(c, url);
    switch (read.name) {
      case "timeline":
        return timeline(projectId, url);
      case "entry":
        return entry(projectId, read.arg);
      case "session":
        return session(projectId, read.arg);
      case "files":
        return files(projectId, url);
      case "stats":
        return stats(projectId, url);
      case "entries":
        return entriesOf(projectId, url);
    }
  }

  /** Answers one request; never throws. */
  return async function handle(req: Request, addr = "unknown"): Promise<Response> {
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return json({ error: "bad request URL" }, 400);
    }
    try {
      if (url.pathname === "/api" || url.pathname.startsWith("/api/")) return await api(req, url, addr);
      if (req.method === "GET" || req.method === "HEAD") {
        const page = dashboardResponse(url.pathname, "team", req.headers.get("accept-encoding"));
        if (page) return page;
      }
      return json({ error: "not found" }, 404);
    } catch (err) {
      if (err instanceof HttpError) return errorResponse(err);
      if (err instanceof BadQuery) return json({ error: err.message }, 400);
      console.error(`aiflare serve: ${req.method} ${url.pathname} failed: ${err instanceof Error ? err.message : String(err)}`);
      return json({ error: "internal server error; try again later" }, 500);
    }
  };
}

function notAllowed(method: string): HttpError {
  return new HttpError(405, `use ${method}`, {}, { allow: method });
}

type ReadRoute = { name: "timeline" | "files" | "stats" | "me" | "entries"; arg: "" } | { name: "entry" | "session"; arg: string };

function readRoute(path: string): ReadRoute | null {
  const fixed: Record<string, ReadRoute> = {
    "/api/v1/timeline": { name: "timeline", arg: "" },
    "/api/v1/files": { name: "files", arg: "" },
    "/api/v1/stats": { name: "stats", arg: "" },
    "/api/v1/entries": { name: "entries", arg: "" },
    "/api/v1/auth/me": { name: "me", arg: "" },
  };
  if (fixed[path]) return fixed[path]!;
  const m = /^\/api\/v1\/(entries|sessions)\/([^/]+)$/.exec(path);
  if (!m) return null;
  let arg: string;
  try {
    arg = decodeURIComponent(m[2]!);
  } catch {
    return null;
  }
  return { name: m[1] === "entries" ? "entry" : "session", arg };
}
