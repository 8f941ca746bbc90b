/**
 * The team's why on a teammate's machine: commits without a local entry are looked up on the configured team
 * server (batched, cached in the team cache, bounded by a short deadline, silent when offline), and `aiflare pull`
 * copies the project's entries into that cache so `why` answers offline.
 */
import { AiflareError } from "../../errors.ts";
import type { Database } from "bun:sqlite";
import { allTeamEntries, cachedTeamEntries, recordPull, storeTeamAnswer, teamCandidates, teamEntry, withTeamCache, withTeamCacheAsync } from "../../store/team-cache.ts";
import { MAX_LINKS_PER_VIEW } from "../history/linked.ts";
import type { LinkedView } from "../history/render-links.ts";
import { computeLink, linkParts } from "../links/match.ts";
import type { Entry } from "../../store/entry.ts";
import { VERSION } from "../../version.ts";
import { loadConfig } from "../config.ts";
import type { RepoPaths } from "../repo.ts";
import { configProblem, endpointProblem, syncTarget } from "../sync/settings.ts";

/** How long a `why` waits for the team server before answering with what it has. */
export const LOOKUP_DEADLINE_MS = 1500;
/** Commits per lookup request (the server's limit). */
const LOOKUP_BATCH = 100;
/** Entries per timeline page while pulling. */
const PULL_PAGE = 200;

interface Backend {
  endpoint: string;
  apiKey: string;
  /** the backend and project as the cache keys them */
  target: string;
}

type Env = Record<string, string | undefined>;

function backendOf(repo: RepoPaths, env: Env): Backend | string {
  let config;
  try {
    config = loadConfig(repo.root, env);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  const problem = configProblem(config) ?? endpointProblem(config);
  const t = syncTarget(config);
  if (problem || !t) return problem ?? "no backend configured";
  return { endpoint: t.endpoint, apiKey: config.apiKey!, target: t.target };
}

async function getJson(b: Backend, path: string, signal: AbortSignal): Promise<unknown> {
  const res = await fetch(`${b.endpoint}${path}`, {
    headers: { "x-api-key": b.apiKey, accept: "application/json", "user-agent": `aiflare/${VERSION}` },
    redirect: "error",
    signal,
  });
  if (!res.ok) {
    let reason = "";
    try {
      reason = String(((await res.json()) as { error?: unknown }).error ?? "");
    } catch {
      // no reason given
    }
    throw new AiflareError("BACKEND", `the team server answered ${res.status}${reason ? `: ${reason.slice(0, 200)}` : ""}`);
  }
  return res.json();
}

/** The entries of `hashes` in one answer of `GET /api/v1/entries?commits=`; anything that is not an entry is left out. */
async function fetchEntries(b: Backend, hashes: string[], signal: AbortSignal): Promise<Entry[]> {
  const answer = (await getJson(b, `/api/v1/entries?commits=${hashes.join(",")}`, signal)) as { entries?: unknown };
  const asked = new Set(hashes);
  const out: Entry[] = [];
  for (const raw of Array.isArray(answer.entries) ? answer.entries : []) {
    const e = teamEntry(raw);
    if (e && asked.has(e.commitHash)) out.push(e);
  }
  return out;
}

function batches<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The team's entries of commits that have no local entry: from the cache, else from the team server within
 * `deadlineMs`. Never throws: no backend, an offline server or a slow answer leave the commits without an entry.
 */
export async function teamEntries(
  repo: RepoPaths,
  hashes: string[],
  opts: { env?: Env; deadlineMs?: number; nowMs?: number } = {},
): Promise<Map<string, Entry>> {
  const none = new Map<string, Entry>();
  if (hashes.length === 0) return none;
  const b = backendOf(repo, opts.env ?? process.env);
  if (typeof b === "string") return none;
  const nowMs = opts.nowMs ?? Date.now();
  try {
    const { found, misses } = withTeamCache(repo.commonDir, (db) => cachedTeamEntries(db, b.target, hashes, nowMs));
    const ask = hashes.filter((h) => !found.has(h) && !misses.has(h));
    if (ask.length === 0) return found;
    const signal = AbortSignal.timeout(opts.deadlineMs ?? LOOKUP_DEADLINE_MS);
    const answered = (await Promise.all(batches(ask, LOOKUP_BATCH).map((part) => fetchEntries(b, part, signal)))).flat();
    const got = new Set(answered.map((e) => e.commitHash));
    withTeamCache(repo.commonDir, (db) => storeTeamAnswer(db, b.target, answered, ask.filter((h) => !got.has(h)), nowMs));
    for (const e of answered) found.set(e.commitHash, e);
    return found;
  } catch {
    // offline, slow or refusing: the answer is what the clone itself knows, and the cache what it held
    try {
      return withTeamCache(repo.commonDir, (db) => cachedTeamEntries(db, b.target, hashes, nowMs).found);
    } catch {
      return none;
    }
  }
}

/** What `aiflare pull` did. */
export interface PullOutcome {
  endpoint: string;
  entries: number;
}

/**
 * `aiflare pull`: every entry of the configured project copied into the team cache (the timeline paged through, the
 * whole entries fetched by commit). Errors say what to fix.
 */
export async function pullTeam(repo: RepoPaths, opts: { env?: Env; timeoutMs?: number } = {}): Promise<PullOutcome> {
  const b = backendOf(repo, opts.env ?? process.env);
  if (typeof b === "string") throw new AiflareError("CONFIG", b);
  const timeoutMs = opts.timeoutMs ?? 30_000;
  let cursor: string | null = null;
  let total = 0;
  try {
    do {
      const page = (await getJson(
        b,
        `/api/v1/timeline?limit=${PULL_PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        AbortSignal.timeout(timeoutMs),
      )) as { entries?: { commitHash?: unknown }[]; nextCursor?: unknown };
      const hashes = (page.entries ?? []).map((e) => e.commitHash).filter((h): h is string => typeof h === "string" && /^[0-9a-f]{40}$/.test(h));
      for (const part of batches(hashes, LOOKUP_BATCH)) {
        const entries = await fetchEntries(b, part, AbortSignal.timeout(timeoutMs));
        withTeamCache(repo.commonDir, (db) => storeTeamAnswer(db, b.target, entries, [], Date.now()));
        total += entries.length;
      }
      cursor = typeof page.nextCursor === "string" && page.nextCursor ? page.nextCursor : null;
    } while (cursor);
  } catch (err) {
    if (err instanceof AiflareError) throw err;
    throw new AiflareError("NETWORK", `could not reach the team server at ${b.endpoint}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  withTeamCache(repo.commonDir, (db) => recordPull(db, b.target, total, Date.now()));
  return { endpoint: b.endpoint, entries: total };
}

/**
 * Squash and rebase-merge commits matched to the team's cached entries (SPEC §13), for a clone whose own timeline
 * holds none of their parts. Nothing is written: neither a link on the timeline branch nor an entry.
 */
export async function teamLinkedViews(
  db: Database,
  repo: RepoPaths,
  hashes: string[],
  opts: { env?: Env; nowMs?: number } = {},
): Promise<Map<string, LinkedView>> {
  const out = new Map<string, LinkedView>();
  if (hashes.length === 0) return out;
  const b = backendOf(repo, opts.env ?? process.env);
  if (typeof b === "string") return out;
  try {
    return await withTeamCacheAsync(repo.commonDir, async (cache) => {
      const candidates = (_db: Database, paths: string[], fromMs: number, toMs: number, exclude: string, limit: number) =>
        teamCandidates(cache, b.target, paths, fromMs, toMs, exclude, limit);
      for (const h of hashes.slice(0, MAX_LINKS_PER_VIEW)) {
        const link = await computeLink({ db, commonDir: repo.commonDir, candidates }, h);
        if (!link || link.parts.length === 0) continue;
        const { found } = cachedTeamEntries(cache, b.target, link.parts.map((p) => p.commitHash), opts.nowMs ?? Date.now());
        const parts = linkParts(link, found).map((p) => p.entry);
        if (parts.length) out.set(h, { link, parts, forLines: null });
      }
      return out;
    });
  } catch {
    return out;
  }
}

/**
 * The team's entries this clone holds in its team cache (pulled or looked up), for the configured backend: what
 * `aiflare ui` shows beside the clone's own, read-only. Never asks the server; none without a backend.
 */
export function cachedTeamView(repo: RepoPaths, env: Env = process.env): Map<string, Entry> {
  const b = backendOf(repo, env);
  if (typeof b === "string") return new Map();
  try {
    return new Map(allTeamEntries(repo.commonDir, b.target).map((e) => [e.commitHash, e]));
  } catch {
    return new Map();
  }
}
