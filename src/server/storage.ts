/** The one storage interface of the team server; `sqlite/` and `postgres/` implement it. */
import type { Stats } from "../core/dashboard/contract.ts";

export type { Stats };

export interface Project {
  id: string;
  name: string;
  createdAt: string;
}

/** The settings a project has beside its keys: what the dashboard shows, nothing that changes what is stored. */
export type ProjectSetting = "forge_url";

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
  /** the person the key was issued to ("" when none was named) */
  owner: string;
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
  /** the person the key was issued to; null when none was named */
  owner: string | null;
}

/** A browser's sign-in, kept on the server so that logout and key revocation end it on every server process. */
export interface SignIn {
  /** SHA-256 of the cookie's random token: the database never holds a usable cookie */
  id: string;
  keyIds: string[];
  createdMs: number;
  expiresMs: number;
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
  /** recordedAt ?? capturedAt, in ms: orders commits of the same second (SPEC §4) */
  recordedMs: number;
  /** undefined: the server decides it (SPEC §5) */
  groupRootId: string | null | undefined;
  /** the delta holds a new user request (SPEC §5) */
  hasUser: boolean;
  continuation: boolean;
  /** the first user request of the delta, shortened; describes a session */
  request: string | null;
  /** the person the client says ran the session (the entry's `author`) */
  author: string | null;
  /** who the key that sent the entry belongs to: what the server itself vouches for */
  keyOwner: string | null;
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
  /** the first user request of the delta, shortened */
  request?: string | null;
  recordedMs: number;
  conversation?: string;
}

export interface TimelineQuery {
  limit: number;
  /** the place of the last entry of the previous page in the one order (SPEC §4) */
  after?: { sortMs: number; recordedMs: number; commitHash: string };
  tags?: string[];
  sessionPrefix?: string;
  /** a file path, or a directory: matches everything under it */
  file?: string;
  branch?: string;
  /** part of the claimed author or of the key owner (any case) */
  author?: string;
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
  /**
   * A write runs in the database's own process while this one goes on (PostgreSQL), rather than holding the event
   * loop (bun:sqlite is synchronous): its transactions may be longer, and the next entries can be checked meanwhile
   */
  readonly writesAside: boolean;
  /** applies the migrations this version knows and the database lacks */
  migrate(): Promise<void>;
  close(): Promise<void>;

  createProject(id: string, name: string): Promise<Project>;
  projects(): Promise<ProjectInfo[]>;
  /** by id or by name */
  project(idOrName: string): Promise<Project | null>;
  /** a project's display setting (`forge_url`); null when unset */
  projectSetting(projectId: string, name: ProjectSetting): Promise<string | null>;
  /** sets a project's display setting; null unsets it */
  setProjectSetting(projectId: string, name: ProjectSetting, value: string | null): Promise<void>;
  createKey(key: { id: string; projectId: string; hash: string; prefix: string; label: string; owner: string }): Promise<void>;
  keys(projectId?: string): Promise<KeyInfo[]>;
  /** marks a key revoked and ends the sign-ins made with it; null when there is no such active key */
  revokeKey(idOrPrefix: string): Promise<KeyInfo | null>;
  /** the active key with this hash */
  keyByHash(hash: string): Promise<KeyOwner | null>;
  /** records a sign-in (its id: the hash of the cookie's token) with the keys it was made with; ends `replaces` */
  signIn(s: SignIn, replaces?: string): Promise<void>;
  /** the keys of a sign-in that is live: not ended, not expired, and none of its keys revoked */
  signInKeys(id: string, nowMs: number): Promise<KeyOwner[]>;
  /** ends a sign-in */
  signOut(id: string): Promise<void>;

  /**
   * Upserts by (project, commitHash) in one transaction: a newer or equal capturedAt replaces, an older never does,
   * unless the stored one is later than `trustUntilMs` (a clock in the future, which would win every write); then
   * groups (SPEC §5). Says which rows were stored and which lost to a newer stored capture.
   */
  putEntries(projectId: string, rows: EntryRow[], trustUntilMs: number): Promise<PutResult>;
  /**
   * putEntries for rows that arrive in chunks as they are checked (where writes run aside): one transaction, each
   * chunk's upsert sent as soon as the chunk is there, so that the database writes one chunk while the next is
   * checked. The chunks come in commit-hash order, each after the last, and every row carries its group (none is the
   * server's to group). Taking a chunk may run the checks; a transaction tried again takes the same chunks again.
   */
  putEntriesStreamed?(projectId: string, chunks: AsyncIterable<EntryRow[]>, trustUntilMs: number): Promise<PutResult>;
  putSession(projectId: string, sessionId: string, content: string): Promise<void>;

  /** newest first; with their conversation when `q.words` searches */
  timeline(projectId: string, q: TimelineQuery): Promise<StoredEntry[]>;
  sessionFacts(projectId: string, ids: string[]): Promise<SessionFacts[]>;
  /** the entries whose hash starts with `prefix` (at most 2, to tell ambiguity) */
  entriesByPrefix(projectId: string, prefix: string): Promise<StoredEntry[]>;
  /** the entries of these full commit hashes, with their conversation (in no particular order) */
  entriesByHashes(projectId: string, hashes: string[]): Promise<StoredEntry[]>;
  /** the members of a group, in commit order */
  group(projectId: string, groupId: string): Promise<StoredEntry[]>;
  /** the session's entries in commit order, with their conversation */
  sessionEntries(projectId: string, sessionId: string): Promise<StoredEntry[]>;
  transcript(projectId: string, sessionId: string): Promise<string | null>;
  /** counts over the entries dated from `sinceMs` on (perDay: the days that have entries) */
  stats(projectId: string, sinceMs: number): Promise<Stats>;

  /** upserts links (a squash or rebase-merge commit → the entries it contains) by (project, commitHash) */
  putLinks(projectId: string, links: { commitHash: string; json: string }[]): Promise<void>;
  /** the links whose commit hash starts with `prefix` (at most 2, to tell ambiguity), as JSON */
  linksByPrefix(projectId: string, prefix: string): Promise<{ commitHash: string; json: string }[]>;
}
