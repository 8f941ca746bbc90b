import { removeStaleTempFilesIfDue } from "../../store/cleanup.ts";
import { finishQueued } from "./queue.ts";
import { readdirSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { sessionFromEnv } from "../../agents/session-env.ts";
import { AiflareError, usageError } from "../../errors.ts";
import { AGENT_TYPES, TAGS, type AgentType, type Entry, type Tag } from "../../store/entry.ts";
import { AIFLARE_IDENT, ObjectStore, parseCommit } from "../../store/objects.ts";
import { latestSessionEntry, readEntryAt, updateEntry } from "../../store/timeline.ts";
import { revParseCommit } from "../../util/git.ts";
import { isFullHash } from "../../util/ids.ts";
import { findRepo, type RepoPaths } from "../repo.ts";
import { AGENT_TYPE, agentOfType, CONTEXT_DIR, isValidSessionId, sessionFiles, type AgentName } from "../session.ts";
import { commitCut, deltaHasUser, NO_DELTA, peekDelta, type Delta } from "./delta.ts";
import { readLogState, updateLogState } from "../session-log.ts";
import { commitFacts, commitHeader, inferTag, type CommitFacts, type CommitHeader } from "./facts.ts";
import { groupRootFor } from "./grouping.ts";
import { aboutFields } from "./record.ts";
import { redactOptionsFor } from "../config-files.ts";
import { withSessionSecrets } from "../session-secrets.ts";
import { compileRedactOptions, type RedactOptions } from "../../redact/index.ts";
import { currentBranch, headCommit } from "./verify.ts";
import { completeFingerprint } from "../links/fingerprint.ts";

/** `aiflare capture` flags as given on the command line (all optional). */
export interface CaptureFlags {
  title?: string;
  intent?: string;
  commitHash?: string;
  agentType?: string;
  changedFiles?: string;
  tag?: string;
  alternatives?: string;
  diffSummary?: string;
  conversationSnippet?: string;
  claudeSessionId?: string;
}

const upper = (s: string) => s.trim().toUpperCase().replace(/-/g, "_");

/** The flags as capture uses them: title and hash trimmed, tag and agent type upper-cased and known, paths split. */
type CheckedFlags = Omit<CaptureFlags, "agentType" | "changedFiles" | "tag"> & { agentType?: AgentType; changedFiles?: string[]; tag?: Tag };

/**
 * Checks the flags in their order, the first wrong one a usage error. Plain code rather than a schema: building one
 * cost every capture more than the checks themselves.
 */
function checkFlags(raw: CaptureFlags): CheckedFlags {
  const title = raw.title?.trim();
  if (title === "") throw usageError("--title must not be empty");
  const commitHash = raw.commitHash?.trim();
  if (commitHash !== undefined && !/^[^-\s]\S*$/.test(commitHash)) {
    throw usageError("--commit-hash must be a commit hash or name such as HEAD (no spaces, not starting with -)");
  }
  const agentType = raw.agentType === undefined ? undefined : upper(raw.agentType);
  if (agentType !== undefined && !(AGENT_TYPES as readonly string[]).includes(agentType)) {
    throw usageError(`unknown --agent-type ${JSON.stringify(agentType)}: use one of ${AGENT_TYPES.join(", ")}`);
  }
  const changedFiles = raw.changedFiles === undefined ? undefined : splitPathList(raw.changedFiles);
  const tag = raw.tag === undefined ? undefined : upper(raw.tag);
  if (tag !== undefined && !(TAGS as readonly string[]).includes(tag)) {
    throw usageError(`unknown --tag ${JSON.stringify(tag)}: use one of ${TAGS.join(", ")}`);
  }
  return { ...raw, title, commitHash, agentType: agentType as AgentType | undefined, changedFiles, tag: tag as Tag | undefined };
}

export interface CaptureResult {
  entry: Entry;
  created: boolean;
  warnings: string[];
}

/** Resolves a commit name (full or abbreviated hash, HEAD, a ref) to a full hash, or throws NOT_FOUND. */
export function resolveCommit(repo: RepoPaths, name: string | undefined): string {
  if (name === undefined || name === "HEAD") {
    const head = headCommit(repo);
    if (!head) throw new AiflareError("NOT_FOUND", "HEAD has no commit yet: make a commit first, or pass --commit-hash");
    return head;
  }
  const lower = name.toLowerCase();
  if (isFullHash(lower)) {
    // a full hash needs no git process: read the object
    const store = new ObjectStore(repo.commonDir);
    try {
      if (store.tryRead(lower)?.type === "commit") return lower;
    } finally {
      store.close();
    }
  } else {
    const hash = revParseCommit(repo.root, name);
    if (hash) return hash;
  }
  throw new AiflareError(
    "NOT_FOUND",
    `commit ${JSON.stringify(name)} does not exist in this repository: pass --commit-hash with a hash from \`git log --oneline\``,
  );
}

/** The newest `.<agent>-prompts-*` file's session id in `.context-capture/`, or undefined. */
function newestSession(root: string, agent: AgentName): string | undefined {
  const prefix = `.${agent}-prompts-`;
  let best: { id: string; mtime: number } | undefined;
  let names: string[] = [];
  try {
    names = readdirSync(join(root, CONTEXT_DIR));
  } catch {
    return undefined;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const id = name.slice(prefix.length);
    if (!isValidSessionId(id)) continue;
    const mtime = statSync(join(root, CONTEXT_DIR, name)).mtimeMs;
    if (!best || mtime > best.mtime) best = { id, mtime };
  }
  return best?.id;
}

/**
 * The session the agent's shell names: its variable (`$CLAUDE_SESSION_ID`, `$CLAUDE_CODE_SESSION_ID`, Codex's
 * `$CODEX_THREAD_ID`), or for an agent whose shell names only itself (Gemini CLI's `GEMINI_CLI=1`) the session its
 * hooks wrote last in this repository.
 */
export function envSession(env: Record<string, string | undefined>, root: string): { id?: string; agent: AgentName } | undefined {
  const found = sessionFromEnv(env);
  if (!found || found.id !== undefined) return found;
  return { id: newestSession(root, found.agent), agent: found.agent };
}

/**
 * The session of a capture (SPEC §6): the flag, then the session the agent's shell names (envSession), then the
 * newest prompts file (with a warning). Returns "" when none is known.
 */
export function resolveSession(
  flag: string | undefined,
  fromEnv: string | undefined,
  root: string,
  agent: AgentName,
  warnings: string[],
): { id: string; explicit: boolean } {
  const id = flag ?? fromEnv;
  if (id !== undefined) {
    if (!isValidSessionId(id)) {
      throw new AiflareError(
        "INVALID_SESSION_ID",
        `session id ${JSON.stringify(id.slice(0, 60))} is invalid: use only letters, digits, '.', '_' and '-' (1-128 characters), e.g. the session_id Claude Code reports`,
      );
    }
    return { id, explicit: true };
  }
  const newest = newestSession(root, agent);
  if (newest) {
    warnings.push(
      `no session given: using the most recent session ${newest}, without its conversation (pass --claude-session-id to choose)`,
    );
    return { id: newest, explicit: false };
  }
  return { id: "", explicit: false };
}

/**
 * Splits `--changed-files`: comma-separated paths, each plain or in git's quoted form (`"src/my dir/a \"b\".js"`,
 * where a comma inside the quotes is part of the name).
 */
export function splitPathList(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && (text[i] === " " || text[i] === ",")) i++;
    if (i >= text.length) break;
    if (text[i] === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out.push(unquoteGitPath(text.slice(i, j + 1)));
      i = j + 1;
      while (i < text.length && text[i] !== ",") i++;
    } else {
      const comma = text.indexOf(",", i);
      const end = comma < 0 ? text.length : comma;
      const path = text.slice(i, end).trim();
      if (path) out.push(path);
      i = end;
    }
  }
  return out;
}

const C_ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, "\\": 92 };

/** git's C-style quoted path (`"a\\tb \\303\\251"`) as the plain path; anything else as it is. */
export function unquoteGitPath(text: string): string {
  if (text.length < 2 || !text.startsWith('"') || !text.endsWith('"')) return text;
  const bytes: number[] = [];
  const body = text.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== "\\") {
      bytes.push(...Buffer.from(c, "utf8"));
      continue;
    }
    const n = body[i + 1] ?? "";
    if (/[0-3]/.test(n) && /^[0-7]{3}$/.test(body.slice(i + 1, i + 4))) {
      bytes.push(Number.parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      bytes.push(C_ESCAPES[n] ?? n.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

/**
 * Checks `--changed-files` against the commit: each path is taken relative to where capture runs, then to the
 * repository root, and must be one the commit changed. Returns the paths relative to the root.
 */
export function checkChangedFiles(given: string[], changed: string[], root: string, cwd: string): string[] {
  const set = new Set(changed);
  const out: string[] = [];
  const wrong: string[] = [];
  for (const raw of given) {
    const path = unquoteGitPath(raw.trim());
    const candidates = isAbsolute(path)
      ? [relative(root, path)]
      : [relative(root, resolve(cwd, path)), relative(root, resolve(root, path))];
    const hit = candidates.map((c) => c.split("\\").join("/")).find((c) => set.has(c));
    if (hit) out.push(hit);
    else wrong.push(raw);
  }
  if (wrong.length) {
    const list = changed.length ? changed.slice(0, 50).join(", ") + (changed.length > 50 ? ", …" : "") : "(none)";
    throw new AiflareError(
      "INVALID_ARGUMENT",
      `--changed-files names ${wrong.map((w) => JSON.stringify(w)).join(", ")}, which the commit did not change; ` +
        `it changed: ${list}. Leave --changed-files out to use exactly the commit's paths.`,
    );
  }
  return [...new Set(out)];
}

/** True when a commit is one of aiflare's own (on `aiflare/timeline/v1` or `aiflare/sessions/v1`). */
function isAiflareCommit(repo: RepoPaths, hash: string): boolean {
  const store = new ObjectStore(repo.commonDir);
  try {
    const c = parseCommit(store.read(hash, "commit").content);
    return c.committer.startsWith(`${AIFLARE_IDENT} `) && c.author.startsWith(`${AIFLARE_IDENT} `);
  } finally {
    store.close();
  }
}

/**
 * `aiflare capture`: completes the entry the commit hook wrote with the agent's summary, or creates it when there
 * is none. Capturing a commit again updates its entry. An entry of another session is never completed, and
 * without `--commit-hash` the session's newest commit still waiting for its summary is the one completed.
 */
export async function runCapture(
  rawFlags: CaptureFlags,
  deps: { cwd: string; env: Record<string, string | undefined>; now?: Date },
): Promise<CaptureResult> {
  const flags = checkFlags(rawFlags);
  const repo = findRepo(deps.cwd);
  if (!repo) throw new AiflareError("NOT_A_REPO", "not inside a git repository: run aiflare capture from your project");
  // the commit hook's entry of this commit may still be queued: the summary goes into it, never beside it
  await finishQueued(repo.commonDir);
  const warnings: string[] = [];
  const agentFlag = flags.agentType as AgentType | undefined;
  // the session as the caller names it (flag, then environment); the newest live session only as a last resort
  const fromEnv = envSession(deps.env, repo.root);
  const named = flags.claudeSessionId ?? fromEnv?.id;

  let hash: string;
  if (flags.commitHash === undefined && named !== undefined && isValidSessionId(named)) {
    const waiting = await latestSessionEntry(repo, named, undefined, (e) => e.summaryStatus === "pending");
    hash = waiting?.commitHash ?? resolveCommit(repo, undefined);
  } else {
    hash = resolveCommit(repo, flags.commitHash);
  }
  if (isAiflareCommit(repo, hash)) {
    throw new AiflareError(
      "INVALID_ARGUMENT",
      `commit ${hash.slice(0, 12)} is one of aiflare's own (aiflare/timeline/v1 or aiflare/sessions/v1): capture a commit of your project`,
    );
  }
  const now = (deps.now ?? new Date()).toISOString();
  const redact = await redactOptionsFor(repo.root);
  const read = await readEntryAt(repo, hash);
  const existing = read.entry;

  // a session named by an agent's shell is that agent's session
  const envAgent: AgentType | undefined = flags.claudeSessionId === undefined && fromEnv ? AGENT_TYPE[fromEnv.agent] : undefined;
  const agentType: AgentType = agentFlag ?? existing?.agentType ?? envAgent ?? "CLAUDE_CODE";
  const agent: AgentName = agentOfType(agentType);
  let session: { id: string; explicit: boolean };
  if (named !== undefined || !existing?.claudeSessionId) {
    session = resolveSession(flags.claudeSessionId, fromEnv?.id, repo.root, agent, warnings);
  } else {
    session = { id: existing.claudeSessionId, explicit: true };
  }
  const sessionId = session.id;
  if (existing?.claudeSessionId && named !== undefined && session.id && session.id !== existing.claudeSessionId) {
    const own = await latestSessionEntry(repo, session.id, undefined, (e) => e.summaryStatus === "pending");
    throw new AiflareError(
      "INVALID_ARGUMENT",
      `commit ${hash} belongs to another session (${existing.claudeSessionId}); its entry was left unchanged. ` +
        (own
          ? `This session's commit waiting for its summary is ${own.commitHash}: capture that one with --commit-hash ${own.commitHash}.`
          : `This session has no commit waiting for its summary.`),
    );
  }
  // The change's patch id (two git processes) is in the entry the commit hook's worker wrote; an entry without it (an
  // older one, or none yet) gets it here, from git working beside this process while the rest of the entry is made.
  const fingerprinting = completeFingerprint(repo.commonDir, hash, existing?.fingerprint);

  // What the entry may need of the commit, read only when it does: its object (subject, committer, date) for an
  // entry missing one of those, its changes (a tree diff) only for one missing its files or for --changed-files.
  const readCommit = <T>(read: (store: ObjectStore) => T): T => {
    const store = new ObjectStore(repo.commonDir);
    try {
      return read(store);
    } finally {
      store.close();
    }
  };
  let facts: CommitFacts | undefined;
  let header: CommitHeader | undefined;
  const getFacts = () => (facts ??= readCommit((store) => commitFacts(store, hash)));
  const getHeader = () => (header ??= facts ?? readCommit((store) => commitHeader(store, hash)));
  const changedFiles = flags.changedFiles ? checkChangedFiles(flags.changedFiles, getFacts().changedFiles, repo.root, deps.cwd) : undefined;

  // Creating: the hook did not write this entry. The conversation since the session's last capture goes with it,
  // but only from a session the caller named: a guessed session lends no conversation.
  const files = sessionId ? sessionFiles(repo.root, agent, sessionId) : undefined;
  let delta: Delta = NO_DELTA;
  let created:
    | Pick<Entry, "commitHash" | "agentType" | "claudeSessionId" | "branch" | "conversationSnippet" | "continuation" | "groupRootId" | "model" | "continuedFrom">
    | undefined;
  if (!existing) {
    if (files && session.explicit && flags.conversationSnippet === undefined) delta = peekDelta(files);
    const snippet = flags.conversationSnippet ?? delta.text;
    const previous = sessionId ? await latestSessionEntry(repo, sessionId, hash) : null;
    created = {
      commitHash: hash,
      agentType,
      claudeSessionId: sessionId,
      branch: currentBranch(repo),
      conversationSnippet: snippet,
      continuation: delta.continuation,
      groupRootId: groupRootFor(previous, flags.conversationSnippet !== undefined ? deltaHasUser(snippet) : delta.hasUser),
      // what the hooks learnt of the session the caller named
      ...(files && session.explicit ? aboutFields(undefined, readLogState(files)) : {}),
    };
  }

  compileRedactOptions(redact);
  const fingerprint = await fingerprinting;
  let wasCreated = false;
  // the session's secrets found so far are redacted in the fields too, and what the fields reveal is remembered
  const write = (redact: RedactOptions) =>
    updateEntry(
      repo,
      hash,
      (current) => {
        wasCreated = current === null;
        const base: Entry = current ?? {
          ...created!,
          title: getHeader().subject,
          intent: "",
          alternatives: "",
          diffSummary: "",
          tag: inferTag(getHeader().subject, getFacts().changedFiles),
          changedFiles: getFacts().changedFiles,
          ...(getFacts().renames.length ? { renames: getFacts().renames } : {}),
          capturedAt: now,
          committedAt: getHeader().committedAt,
          recordedAt: now,
        };
        return {
          ...base,
          title: flags.title ?? (base.title || getHeader().subject),
          intent: flags.intent ?? base.intent,
          alternatives: flags.alternatives ?? base.alternatives,
          diffSummary: flags.diffSummary ?? base.diffSummary,
          tag: (flags.tag as Tag | undefined) ?? base.tag,
          changedFiles: changedFiles ?? (base.changedFiles.length ? base.changedFiles : getFacts().changedFiles),
          agentType: agentFlag ?? base.agentType,
          claudeSessionId: base.claudeSessionId || sessionId,
          conversationSnippet: current && flags.conversationSnippet !== undefined ? flags.conversationSnippet : base.conversationSnippet,
          capturedAt: now,
          committedAt: base.committedAt ?? getHeader().committedAt,
          author: base.author ?? (getHeader().committer || undefined),
          summaryStatus: "written",
          ...(fingerprint ? { fingerprint } : {}),
        };
      },
      { redact, read },
    );
  const entry = await (files ? withSessionSecrets(files, redact, write) : write(redact));
  if (files && delta !== NO_DELTA && delta.end > 0) commitCut(files, delta);
  if (files && readLogState(files).pending.includes(hash)) {
    try {
      updateLogState(files, (s) => ({ pending: s.pending.filter((h) => h !== hash) }));
    } catch {
      // the reminder list is a convenience: a capture never fails over it
    }
  }
  // what killed writers left (a temporary object, a half-made index) goes within minutes, not in gc's two weeks
  removeStaleTempFilesIfDue(repo.commonDir);
  return { entry: entry!, created: wasCreated, warnings };
}
