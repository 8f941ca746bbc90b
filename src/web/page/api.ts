/**
 * The read API as the page calls it: relative URLs, the chosen project in team mode, and the credential. Where the
 * server hands the page a session (`aiflare ui`, and `aiflare serve` reached by a loopback name, where a cookie
 * would reach every port of the machine) it stays in this tab's sessionStorage and goes out as an Authorization
 * header, which the browser sends nowhere by itself; otherwise the server's HttpOnly cookie does the work.
 */
import type { MatchContext } from "../../core/dashboard/answers.ts";
import type { CommitFacts, DiffStatLine, DirectoryFile, FileCommit, SessionHeading, Stats } from "../../core/dashboard/contract.ts";
import { signInFromFragment } from "./signin.ts";

export type { CommitFacts, DiffStatLine, DirectoryFile, FileCommit, MatchContext, SessionHeading, Stats };

/** The mode the server wrote into the page. */
export const MODE: "local" | "team" =
  document.querySelector('meta[name="aiflare-mode"]')?.getAttribute("content") === "team" ? "team" : "local";

export class Unauthorized extends Error {}

/** The server has no such thing (an unknown commit or session): the page says so. */
export class NotFound extends Error {}

let project: string | null = null;

const SESSION = "aiflare.session";

/** Keeps (or with null, forgets) the session the server handed this tab. */
export function keepSession(value: string | null | undefined): void {
  // what was read with another credential is not this one's to show
  early.clear();
  if (value) sessionStorage.setItem(SESSION, value);
  else sessionStorage.removeItem(SESSION);
}

function headers(extra: Record<string, string>): Record<string, string> {
  const session = sessionStorage.getItem(SESSION);
  return session ? { ...extra, Authorization: `Bearer ${session}` } : extra;
}

/** The project the reads are about (team mode, several projects). */
export function setProject(id: string | null): void {
  project = id;
}

export function currentProject(): string | null {
  return project;
}

async function answer<T>(res: Response): Promise<T> {
  if (res.status === 401 || res.status === 403) throw new Unauthorized(await errorText(res));
  if (res.status === 404) throw new NotFound(await errorText(res));
  if (!res.ok) throw new Error(await errorText(res));
  return (await res.json()) as T;
}

async function errorText(res: Response): Promise<string> {
  try {
    const body = (await res.json()) as { error?: unknown };
    if (typeof body.error === "string") return body.error;
  } catch {
    // not JSON
  }
  return `${res.status} ${res.statusText}`;
}

/** The URL of GET /api/v1/<path> with the given query parameters (empty ones dropped) and the chosen project. */
export function readUrl(path: string, params: Record<string, string | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  if (project) q.set("project", project);
  const qs = q.toString();
  return `/api/v1/${path}${qs ? `?${qs}` : ""}`;
}

/**
 * Reads already under way or answered before the page asked for them (the first screen's data, fetched while the
 * page signs in), by URL; each is used once. One that failed answers nothing, and the page asks again.
 */
const early = new Map<string, Promise<unknown>>();

/** Starts the read of `url` now, for a `get` of the same URL to take up later. */
export function prefetch(url: string): void {
  early.set(url, fetch(url, { credentials: "same-origin", headers: headers({ Accept: "application/json" }) }).then(
    (res) => (res.ok ? res.json() : undefined),
    () => undefined,
  ));
}

/** GET /api/v1/<path> with the given query parameters (empty ones dropped). */
export async function get<T>(path: string, params: Record<string, string | undefined> = {}): Promise<T> {
  const url = readUrl(path, params);
  const ready = early.get(url);
  if (ready) {
    early.delete(url);
    const body = await ready;
    if (body !== undefined) return body as T;
  }
  const res = await fetch(url, { credentials: "same-origin", headers: headers({ Accept: "application/json" }) });
  return answer<T>(res);
}

/** POST JSON (sign-in and sign-out). */
export async function post<T>(path: string, body: unknown): Promise<T> {
  const res = await fetch(`/api/v1/${path}`, {
    method: "POST",
    credentials: "same-origin",
    headers: headers({ "Content-Type": "application/json", Accept: "application/json" }),
    body: JSON.stringify(body),
  });
  return answer<T>(res);
}

/**
 * `aiflare ui`: finishes the sign-in from the printed URL (signin.ts), the one the boot script started if it ran
 * first: the session is kept and the first read's answer waits for the page's `get`.
 */
export async function finishSignIn(): Promise<void> {
  const signed = await (window.aiflareSignIn ?? signInFromFragment());
  if (!signed) return;
  keepSession(signed.session);
  if (signed.first !== undefined) early.set(signed.read, Promise.resolve(signed.first));
}

export interface Summary {
  commitHash: string;
  title: string;
  intent: string;
  alternatives: string;
  diffSummary: string;
  tag: string;
  changedFiles: string[];
  agentType: string;
  claudeSessionId: string;
  branch: string;
  continuation: boolean;
  groupRootId: string | null;
  capturedAt: string;
  summaryStatus?: "pending" | "written" | "imported";
  committedAt?: string;
  groupId: string;
  /** the first user request of the entry's delta */
  request?: string | null;
  /** the session this one continues after a /clear */
  continuedFrom?: string | null;
  /** with a search: where it hit (null: in the title, or in a folded form) */
  match?: MatchContext | null;
  /** who ran the session (`Name <email>`), as the client recorded it */
  author?: string;
  /** team server: the owner of the key that sent the entry */
  keyOwner?: string;
  model?: string;
  /** `aiflare ui` on a teammate's clone: an entry of the team's, from its cache (read-only) */
  from?: "team";
}

export interface Entry extends Summary {
  conversationSnippet: string;
}

export interface TimelinePage {
  entries: Summary[];
  nextCursor: string | null;
  sessions: Record<string, SessionHeading>;
  /** group roots of the page's entries that the page does not hold (older, or outside the filters) */
  roots?: Summary[];
}

export interface EntryAnswer {
  entry: Entry;
  group: Summary[];
  /** how to see the commit itself (absent from servers that predate it) */
  commit?: CommitFacts;
}

export interface SessionAnswer {
  sessionId: string;
  transcript: string;
  entries: Summary[];
  cuts: { commitHash: string; afterLine: number }[];
}

export interface FileAnswer {
  path: string;
  entries: Summary[];
  /** every commit that touched the path, renames followed (`aiflare ui`: git's history) */
  commits?: FileCommit[];
  /** false when older commits may exist beyond those listed */
  complete?: boolean;
  /** a directory's files, each renamed file under its last name */
  files?: DirectoryFile[];
}

export interface Project {
  id: string;
  name: string;
}
