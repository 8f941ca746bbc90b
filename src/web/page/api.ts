/** The read API as the page calls it: relative URLs, same-origin credentials, the chosen project in team mode. */
import type { CommitFacts, DiffStatLine, DirectoryFile, FileCommit, SessionHeading, Stats } from "../../core/dashboard/contract.ts";

export type { CommitFacts, DiffStatLine, DirectoryFile, FileCommit, SessionHeading, Stats };

/** The mode the server wrote into the page. */
export const MODE: "local" | "team" =
  document.querySelector('meta[name="aiflare-mode"]')?.getAttribute("content") === "team" ? "team" : "local";

export class Unauthorized extends Error {}

let project: string | null = null;

/** The project the reads are about (team mode, several projects). */
export function setProject(id: string | null): void {
  project = id;
}

export function currentProject(): string | null {
  return project;
}

async function answer<T>(res: Response): Promise<T> {
  if (res.status === 401 || res.status === 403) throw new Unauthorized(await errorText(res));
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

/** GET /api/v1/<path> with the given query parameters (empty ones dropped). */
export async function get<T>(path: string, params: Record<string, string | undefined> = {}): Promise<T> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  if (project) q.set("project", project);
  const qs = q.toString();
  const res = await fetch(`/api/v1/${path}${qs ? `?${qs}` : ""}`, { credentials: "same-origin", headers: { Accept: "application/json" } });
  return answer<T>(res);
}

/** POST JSON (sign-in and sign-out). */
export async function post<T>(path: string, body: unknown): Promise<T> {
  const res = await fetch(`/api/v1/${path}`, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify(body),
  });
  return answer<T>(res);
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
}

export interface Entry extends Summary {
  conversationSnippet: string;
}

export interface TimelinePage {
  entries: Summary[];
  nextCursor: string | null;
  sessions: Record<string, SessionHeading>;
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
