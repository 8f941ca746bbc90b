/**
 * The dashboard's read API (/api/v1/…) over one repository's own index: the same JSON shapes `aiflare serve`
 * answers for a project, so one page reads both.
 */
import { finishQueued } from "../capture/queue.ts";
import type { Database } from "bun:sqlite";
import { AiflareError } from "../../errors.ts";
import type { Entry } from "../../store/entry.ts";
import { topChangedFiles, withIndex } from "../../store/index-db.ts";
import { readSession } from "../../store/sessions.ts";
import { isValidSessionId } from "../../util/ids.ts";
import { revParseCommit } from "../../util/git.ts";
import { landingCommits } from "../../store/index/links.ts";
import { linkedView } from "../history/linked.ts";
import { conversationLines } from "../../util/jsonl.ts";
import type { CommitFacts, DirectoryFile, FileCommit, SessionHeading } from "./contract.ts";
import { loadConfig } from "../config.ts";
import { matchContext, missingRoots, searchFields, searchWords } from "./answers.ts";
import { everyDay, readDays, utcDay, windowStart } from "./stats.ts";
import { buildFilter, type HistoryFilter } from "../history/filters.ts";
import { fileHistory, isDirectoryTarget, type GitCommit } from "../history/why.ts";
import { commitDiff } from "./commit.ts";
import { cachedTeamView, teamLinkedViews } from "../team/index.ts";
import type { RepoPaths } from "../repo.ts";
import { forgeCommitUrl } from "./forge.ts";
import { apiError, json } from "./reply.ts";
import {
  entriesByPrefix,
  entryCommitsForPath,
  entriesOfSession,
  getEntries,
  getEntry,
  groupMembers,
  listEntries,
  sessionInfo,
  timelinePage,
} from "../history/query.ts";

/** An entry without its conversation, plus the id of its request group and the request its delta opens with. */
export type Summary = Omit<Entry, "conversationSnippet"> & { groupId: string; request: string | null };

/** How much of a delta's first request a summary carries (as the team server keeps it). */
const REQUEST_CHARS = 300;

const MAX_LIMIT = 200;

/** The entry as the list views send it. */
export function toSummary(entry: Entry): Summary {
  const { conversationSnippet, ...rest } = entry;
  const request = conversationLines(conversationSnippet).find((l) => l.role === "user")?.content.trim();
  return { ...rest, groupId: entry.groupRootId ?? entry.commitHash, request: request ? request.slice(0, REQUEST_CHARS) : null };
}

/** A teammate's entry from the team cache, as the views send it: marked as the team's (read-only). */
function teamSummary(e: Entry): Summary & { from: "team" } {
  return { ...toSummary(e), from: "team" };
}

/** The team cache's entries of commits this clone has no entry of. */
function teamOnly(db: Database, team: Map<string, Entry>): Entry[] {
  if (team.size === 0) return [];
  const own = getEntries(db, [...team.keys()]);
  return [...team.values()].filter((e) => !own.has(e.commitHash));
}

/** A 4xx answer with the contract's error body. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function readLimit(text: string | null, fallback: number): number {
  if (text === null || text === "") return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new ApiError(400, `limit must be a positive whole number, not "${text}"`);
  return Math.min(n, MAX_LIMIT);
}

/** The timeline filters of a query string, validated like the history command's flags. */
function readFilter(params: URLSearchParams, root: string, now: Date): HistoryFilter {
  const get = (k: string) => params.get(k)?.trim() || undefined;
  const q = get("q");
  try {
    const filter = buildFilter(
      { tag: get("tag"), session: get("session"), author: get("author"), file: get("file"), grep: q, since: get("since"), until: get("until") },
      { cwd: root, root, now },
    );
    const branch = get("branch");
    if (branch) filter.branch = branch;
    return filter;
  } catch (err) {
    if (err instanceof AiflareError) throw new ApiError(400, err.message.replace(/--grep/g, "q").replace(/--(\w+)/g, "$1"));
    throw err;
  }
}

/** Timeline parameters that narrow the list: with any of them, the team's cached entries are not mixed in. */
const NARROWING = ["q", "tag", "session", "author", "file", "branch", "since", "until", "agent"];

function timeline(db: Database, params: URLSearchParams, root: string, now: Date, team: Map<string, Entry>): unknown {
  const limit = readLimit(params.get("limit"), 50);
  const filter = readFilter(params, root, now);
  const { entries: own, nextCursor } = timelinePage(db, { ...filter, limit }, params.get("cursor"));
  // the team's cached entries (a teammate's clone) join the unfiltered list where they fall in this page's time
  // span, so the next page of this clone's own entries follows on unchanged
  const time = (e: Entry) => Date.parse(e.committedAt ?? e.capturedAt);
  const oldest = nextCursor && own.length ? time(own[own.length - 1]!) : -Infinity;
  const newest = params.get("cursor") && own.length ? time(own[0]!) : Infinity;
  const theirs = NARROWING.some((k) => params.has(k)) ? [] : teamOnly(db, team).filter((e) => time(e) >= oldest && time(e) <= newest);
  const isTeam = new Set(theirs.map((e) => e.commitHash));
  const page = [...own, ...theirs].sort((a, b) => time(b) - time(a));
  const ids = [...new Set(page.map((e) => e.claudeSessionId))];
  const info = sessionInfo(db, ids);
  const sessions: Record<string, SessionHeading> = {};
  for (const id of ids) {
    const s = info.get(id);
    const first = page.find((e) => e.claudeSessionId === id)!;
    sessions[id] = {
      firstRequest: s?.firstRequest ?? null,
      agentType: first.agentType,
      branch: first.branch,
      start: s ? new Date(s.fromMs).toISOString() : (first.committedAt ?? first.capturedAt),
      end: s ? new Date(s.toMs).toISOString() : (first.committedAt ?? first.capturedAt),
      commits: s?.entryCount ?? 1,
    };
  }
  // a request group whose root is not on this page (an older page, or outside the filters) is shown with it
  const roots = [...getEntries(db, missingRoots(page)).values()].map(toSummary);
  const words = searchWords(params.get("q") ?? "");
  const entries = page.map((e) =>
    words.length
      ? { ...toSummary(e), match: matchContext(searchFields(e, conversationLines(e.conversationSnippet)), words) }
      : isTeam.has(e.commitHash)
        ? teamSummary(e)
        : toSummary(e),
  );
  return { entries, nextCursor, sessions, roots };
}

/**
 * The entry page's answer for a commit with no entry that contains recorded changes: `entry: null`, the link
 * and its parts' summaries (oldest first). Null when the commit is unknown or contains none.
 */
async function linkedAnswer(db: Database, repo: { root: string; commonDir: string }, ref: string): Promise<unknown> {
  const hash = revParseCommit(repo.root, ref);
  if (!hash) return null;
  const view = await linkedView(db, repo.commonDir, hash);
  if (!view) return null;
  return { entry: null, commitHash: hash, link: view.link, parts: view.parts.map(toSummary), group: [] };
}

/**
 * The entry page's answer from the team cache: a teammate's entry of the commit (read-only, marked as the team's),
 * or a squash or rebase-merge commit matched to the team's cached entries. Null when the team has neither.
 */
async function teamAnswer(db: Database, repo: RepoPaths, ref: string, team: Map<string, Entry>): Promise<unknown> {
  const ref0 = ref.toLowerCase();
  const hits = [...team.keys()].filter((h) => h.startsWith(ref0));
  if (hits.length === 1) return { entry: { ...team.get(hits[0]!)!, from: "team" }, group: [], from: "team" };
  if (team.size === 0) return null;
  const hash = revParseCommit(repo.root, ref);
  if (!hash) return null;
  const view = (await teamLinkedViews(db, repo, [hash])).get(hash);
  return view ? { entry: null, commitHash: hash, link: view.link, parts: view.parts.map(teamSummary), group: [], from: "team" } : null;
}

async function entry(db: Database, repo: RepoPaths, ref: string, team: Map<string, Entry>): Promise<unknown> {
  if (!/^[0-9a-f]{4,40}$/i.test(ref)) throw new ApiError(400, "an entry is named by its commit hash (4 to 40 hex digits)");
  const found = entriesByPrefix(db, ref);
  if (found.length === 0) {
    // a squash or rebase-merge commit without an entry of its own: answered with its linked parts
    const linked = (await linkedAnswer(db, repo, ref)) ?? (await teamAnswer(db, repo, ref, team));
    if (linked) return linked;
    throw new ApiError(404, `no entry for commit ${ref}`);
  }
  if (found.length > 1) throw new ApiError(400, `${ref} matches several entries; give more of the hash`);
  const full = getEntry(db, found[0]!);
  if (!full) throw new ApiError(404, `no entry for commit ${ref}`);
  const members = groupMembers(db, full.groupRootId ?? full.commitHash).map((m) => m.commitHash);
  const docs = getEntries(db, members);
  const group = members.flatMap((h) => (docs.has(h) ? [toSummary(docs.get(h)!)] : []));
  return { entry: full, group };
}

function session(db: Database, id: string, stored: string | null): unknown {
  const entries = entriesOfSession(db, id).filter((e) => e.claudeSessionId === id);
  if (stored === null && entries.length === 0) throw new ApiError(404, `no session ${id}`);
  // A session stored before its end may lack the last deltas; the entries' own deltas fill in.
  const lines = conversationLines(stored ?? entries.map((e) => e.conversationSnippet).join("\n"));
  const cuts: { commitHash: string; afterLine: number }[] = [];
  let at = 0;
  for (const e of entries) {
    at += conversationLines(e.conversationSnippet).length;
    cuts.push({ commitHash: e.commitHash, afterLine: Math.min(at, lines.length) });
  }
  const transcript = lines.map((l) => `${JSON.stringify(l)}\n`).join("");
  return { sessionId: id, transcript, entries: entries.map(toSummary), cuts };
}

/** The most commits a file answer lists. */
const FILE_COMMITS = 500;

/**
 * The why of a path as `aiflare why` finds it (git's history, renames followed, commits without an entry
 * included): `entries` (newest first, as before), `commits` (every commit that touched the path, with the name
 * it had then), and for a directory its `files`, each renamed file merged with its former names.
 */
async function files(db: Database, params: URLSearchParams, repo: { root: string; commonDir: string }, now: Date, team: Map<string, Entry>): Promise<unknown> {
  const raw = params.get("path")?.trim() ?? "";
  const path = raw.replace(/^(\.\/)+/, "").replace(/\/+$/, "");
  if (!path) throw new ApiError(400, "path is required");
  const filter = readFilter(new URLSearchParams({ file: path }), repo.root, now);
  const target = { file: filter.file ?? path };
  const recorded = entryCommitsForPath(db, target.file);
  const history = await fileHistory(target, { cwd: repo.root, commonDir: repo.commonDir }, recorded, FILE_COMMITS, { files: true });
  const shown = history.commits.slice(0, FILE_COMMITS);
  const seen = new Set(shown.map((c) => c.commitHash));
  // entries git did not list (their commit rewritten or pruned, or older than the commits listed) still count
  const gone = recorded.filter((r) => !seen.has(r.commitHash)).slice(0, FILE_COMMITS);
  const docs = getEntries(db, [...shown.map((c) => c.commitHash), ...gone.map((r) => r.commitHash)]);
  const time = (e: Entry) => Date.parse(e.committedAt ?? e.capturedAt);
  // the team's cached entries of the commits listed that this clone has none of, marked as the team's
  const theirs = shown.flatMap((c) => (docs.has(c.commitHash) || !team.has(c.commitHash) ? [] : [team.get(c.commitHash)!]));
  const entries = [...[...docs.values()].map((e) => ({ e, s: toSummary(e) })), ...theirs.map((e) => ({ e, s: teamSummary(e) }))]
    .sort((a, b) => time(b.e) - time(a.e))
    .map((x) => x.s);
  // the commits that landed these entries on the main line (squash, rebase-merge), where links are known
  const landedIn = landingCommits(db, [...docs.keys()]);
  const dir = isDirectoryTarget(target, repo.root);
  const commits: FileCommit[] = shown.map((c) => {
    const then = dir ? undefined : c.changes?.[0]?.path;
    return {
      commitHash: c.commitHash,
      subject: c.subject,
      author: c.author,
      date: new Date(c.committedMs ?? c.dateMs).toISOString(),
      ...(then && then !== target.file ? { pathThen: then } : {}),
    };
  });
  return {
    path: target.file,
    entries,
    commits,
    complete: history.complete,
    ...(dir ? { files: mergedFiles(shown) } : {}),
    ...(landedIn.size ? { landedIn: Object.fromEntries(landedIn) } : {}),
  };
}

/** The files a directory's commits changed, oldest history first followed through renames, each under its last name. */
export function mergedFiles(commits: GitCommit[]): DirectoryFile[] {
  const byPath = new Map<string, DirectoryFile>();
  for (let i = commits.length - 1; i >= 0; i--) {
    for (const ch of commits[i]!.changes ?? []) {
      let file = byPath.get(ch.from ?? ch.path);
      if (ch.status === "R" && ch.from !== undefined) {
        file ??= { path: ch.path, formerPaths: [], commits: 0 };
        byPath.delete(ch.from);
        file.formerPaths.unshift(ch.from);
        file.path = ch.path;
      }
      file ??= { path: ch.path, formerPaths: [], commits: 0 };
      file.commits++;
      byPath.set(ch.path, file);
    }
  }
  return [...byPath.values()].sort((a, b) => b.commits - a.commits || a.path.localeCompare(b.path));
}

/** How to see an entry's commit: its diff from git, `git show`, and the forge link the user configured. */
async function commitFacts(repo: { root: string }, sha: string): Promise<CommitFacts> {
  let template: string | undefined;
  try {
    template = loadConfig(repo.root).forgeUrl;
  } catch {
    // a settings file that cannot be read costs the link, not the page
  }
  const diff = await commitDiff(repo.root, sha);
  return { show: `git show ${sha}`, forgeUrl: forgeCommitUrl(template, sha), diff, ...(diff ? {} : { diffMissing: "gone" as const }) };
}

function stats(db: Database, params: URLSearchParams, now: Date): unknown {
  const days = readDays(params.get("days"));
  if (typeof days === "string") throw new ApiError(400, days);
  const sinceMs = windowStart(now, days);
  const rows = listEntries(db, { sinceMs, limit: 0 });
  const perTag: Record<string, number> = {};
  const perDay = new Map<string, number>();
  for (const r of rows) {
    perTag[r.tag] = (perTag[r.tag] ?? 0) + 1;
    const day = utcDay(r.capturedMs);
    perDay.set(day, (perDay.get(day) ?? 0) + 1);
  }
  return {
    entries: rows.length,
    sessions: new Set(rows.map((r) => r.sessionId)).size,
    perTag,
    perDay: everyDay(sinceMs, days, [...perDay].map(([day, count]) => ({ day, count }))),
    topFiles: topChangedFiles(db, sinceMs, 10),
  };
}

/**
 * Answers one read API request for the repository whose common git dir is `commonDir` (worktree root `root`).
 * Null when the path is not part of the read API.
 */
export async function answerLocalApi(url: URL, repo: { root: string; commonDir: string; gitDir?: string }, now = new Date()): Promise<Response | null> {
  const path = url.pathname;
  if (!path.startsWith("/api/v1/")) return null;
  const rest = path.slice("/api/v1/".length);
  const params = url.searchParams;
  // what the hooks queued is on the timeline before the index is read
  await finishQueued(repo.commonDir);
  try {
    // A transcript is read from the sessions branch itself (the index keeps only what lists and searches need).
    let transcript: string | null = null;
    if (rest.startsWith("sessions/")) {
      const id = decodeURIComponent(rest.slice("sessions/".length));
      if (!isValidSessionId(id)) throw new ApiError(400, "not a session id");
      transcript = await readSession(repo, id);
    }
    // a teammate's clone: the team's entries it pulled or looked up, shown beside its own (never asked for here)
    const paths: RepoPaths = { ...repo, gitDir: repo.gitDir ?? repo.commonDir };
    const team = rest === "timeline" || rest === "files" || rest.startsWith("entries/") ? cachedTeamView(paths) : new Map<string, Entry>();
    const body = await withIndex(repo.commonDir, (db) => {
      if (rest === "timeline") return timeline(db, params, repo.root, now, team);
      if (rest.startsWith("entries/")) return entry(db, paths, decodeURIComponent(rest.slice("entries/".length)), team);
      if (rest.startsWith("sessions/")) return session(db, decodeURIComponent(rest.slice("sessions/".length)), transcript);
      if (rest === "files") return files(db, params, repo, now, team);
      if (rest === "stats") return stats(db, params, now);
      throw new ApiError(404, `no such API path: ${path}`);
    });
    if (rest.startsWith("entries/")) {
      // an entry's own commit, from git; a linked commit's answer (entry null) names its parts instead
      const answer = body as { entry: Entry | null; commit?: CommitFacts };
      if (answer.entry) answer.commit = await commitFacts(repo, answer.entry.commitHash);
    }
    return json(body);
  } catch (err) {
    if (err instanceof ApiError) return apiError(err.status, err.message);
    if (err instanceof AiflareError && err.code === "INVALID_ARGUMENT") return apiError(400, err.message.replace(/--grep/g, "q"));
    if (err instanceof AiflareError && err.code === "NOT_FOUND") return apiError(404, err.message);
    return apiError(500, err instanceof Error ? err.message : String(err));
  }
}
