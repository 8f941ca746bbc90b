/** The one storage interface of the team server; `sqlite/` and `postgres/` implement it. */
import type { Stats } from "../core/dashboard/contract.ts";

export type { Stats };

export interface Project {
  id: string;
  name: string;
  createdAt: string;
}

export interface ProjectInfo extends Project {
  keys: number;
  entries: number;
  lastEntryAt: string | null;
}

export interface KeyInfo {
  id: string;
  projectId: string;
  projectName: string;
  label: string;
  /** the first characters of the key, to tell keys apart in lists */
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}

/** What the server knows about a valid key. */
export interface KeyOwner {
  keyId: string;
  projectId: string;
  projectName: string;
}

/** One entry as the adapters store it: indexed columns plus the JSON to answer with. */
export interface EntryRow {
  commitHash: string;
  sessionId: string;
  branch: string;
  tag: string;
  capturedMs: number;
  /** committedAt ?? capturedAt, in ms: what the timeline orders by */
  sortMs: number;
  /** undefined: the server decides it (SPEC §5) */
  groupRootId: string | null | undefined;
  /** the delta holds a new user request (SPEC §5) */
  hasUser: boolean;
  continuation: boolean;
  /** the first user request of the delta, shortened; describes a session */
  request: string | null;
  /** the entry as JSON without conversationSnippet and groupRootId */
  summary: string;
  conversation: string;
  /** title, intent, alternatives, diff summary and conversation, for full-text search */
  searchText: string;
  files: string[];
}

/** What one putEntries stored, and what it did not because the server holds a newer capture. */
export interface PutResult {
  stored: string[];
  conflicts: { commitHash: string; storedCapturedMs: number }[];
}

/** A stored entry read back. */
export interface StoredEntry {
  commitHash: string;
  groupRootId: string | null;
  summary: string;
  sortMs: number;
  conversation?: string;
}

export interface TimelineQuery {
  limit: number;
  /** (sortMs, commitHash) of the last entry of the previous page */
  after?: { sortMs: number; commitHash: string };
  tags?: string[];
  sessionPrefix?: string;
  /** a file path, or a directory: matches everything under it */
  file?: string;
  branch?: string;
  /** the words to search for; every one must occur (as a word prefix) */
  words?: string[];
  sinceMs?: number;
  untilMs?: number;
}

export interface SessionFacts {
  sessionId: string;
  firstRequest: string | null;
  agentType: string;
  branch: string;
  startMs: number;
  endMs: number;
  commits: number;
}

export interface Storage {
  readonly kind: "sqlite" | "postgres";
  /** applies the migrations this version knows and the database lacks */
  migrate(): Promise<void>;
  close(): Promise<void>;

  createProject(id: string, name: string): Promise<Project>;
  projects(): Promise<ProjectInfo[]>;
  /** by id or by name */
  project(idOrName: string): Promise<Project | null>;
  createKey(key: { id: string; projectId: string; hash: string; prefix: string; label: string }): Promise<void>;
  keys(projectId?: string): Promise<KeyInfo[]>;
  /** marks a key revoked; false when there is no such active key */
  revokeKey(idOrPrefix: string): Promise<KeyInfo | null>;
  /** the active key with this hash */
  keyByHash(hash: string): Promise<KeyOwner | null>;
  /** the active keys among `ids` */
  activeKeys(ids: string[]): Promise<KeyOwner[]>;
  /** a server-wide value kept in the database, set once: the first writer wins */
  setting(name: string, init: () => string): Promise<string>;

  /**
   * Upserts by (project, commitHash) in one transaction: a newer or equal capturedAt replaces, an older never does,
   * unless the stored one is later than `trustUntilMs` (a clock in the future, which would win every write); then
   * groups (SPEC §5). Says which rows were stored and which lost to a newer stored capture.
   */
  putEntries(projectId: string, rows: EntryRow[], trustUntilMs: number): Promise<PutResult>;
  putSession(projectId: string, sessionId: string, content: string): Promise<void>;

  timeline(projectId: string, q: TimelineQuery): Promise<StoredEntry[]>;
  sessionFacts(projectId: string, ids: string[]): Promise<SessionFacts[]>;
  /** the entries whose hash starts with `prefix` (at most 2, to tell ambiguity) */
  entriesByPrefix(projectId: string, prefix: string): Promise<StoredEntry[]>;
  /** the members of a group, in commit order */
  group(projectId: string, groupId: string): Promise<StoredEntry[]>;
  /** the session's entries in commit order, with their conversation */
  sessionEntries(projectId: string, sessionId: string): Promise<StoredEntry[]>;
  transcript(projectId: string, sessionId: string): Promise<string | null>;
  stats(projectId: string, sinceMs: number): Promise<Stats>;
}
