import { removeStaleTempFiles } from "../../store/cleanup.ts";
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { AiflareError } from "../../errors.ts";
import { AGENT_TYPES, TAGS, type AgentType, type Entry, type Tag } from "../../store/entry.ts";
import { ObjectStore } from "../../store/objects.ts";
import { latestSessionEntry, readEntry, updateEntry } from "../../store/timeline.ts";
import { revParseCommit } from "../../util/git.ts";
import { isFullHash } from "../../util/ids.ts";
import { findRepo, type RepoPaths } from "../repo.ts";
import { CONTEXT_DIR, isValidSessionId, sessionFiles, type AgentName } from "../session.ts";
import { deltaHasUser, takeDeltaFile } from "./delta.ts";
import { commitFacts, inferTag, type CommitFacts } from "./facts.ts";
import { groupRootFor } from "./grouping.ts";
import { redactOptionsFor } from "../redact.ts";
import { currentBranch, headCommit } from "./verify.ts";

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

const FlagsSchema = v.object({
  title: v.optional(v.pipe(v.string(), v.trim(), v.nonEmpty("--title must not be empty"))),
  intent: v.optional(v.string()),
  commitHash: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.regex(/^[^-\s]\S*$/, "--commit-hash must be a commit hash or name such as HEAD (no spaces, not starting with -)"),
    ),
  ),
  agentType: v.optional(
    v.pipe(
      v.string(),
      v.transform(upper),
      v.picklist(AGENT_TYPES, (i) => `unknown --agent-type ${JSON.stringify(i.input)}: use one of ${AGENT_TYPES.join(", ")}`),
    ),
  ),
  changedFiles: v.optional(
    v.pipe(
      v.string(),
      v.transform((s) => s.split(",").map((x) => x.trim()).filter((x) => x !== "")),
    ),
  ),
  tag: v.optional(
    v.pipe(
      v.string(),
      v.transform(upper),
      v.picklist(TAGS, (i) => `unknown --tag ${JSON.stringify(i.input)}: use one of ${TAGS.join(", ")}`),
    ),
  ),
  alternatives: v.optional(v.string()),
  diffSummary: v.optional(v.string()),
  conversationSnippet: v.optional(v.string()),
  claudeSessionId: v.optional(v.string()),
});

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
 * The session of a capture (SPEC §6): the flag, then `$CLAUDE_SESSION_ID`, then `$CLAUDE_CODE_SESSION_ID`, then the
 * newest prompts file (with a warning). Returns "" when none is known.
 */
export function resolveSession(
  flag: string | undefined,
  env: Record<string, string | undefined>,
  root: string,
  agent: AgentName,
  warnings: string[],
): string {
  const fromEnv = env.CLAUDE_SESSION_ID || env.CLAUDE_CODE_SESSION_ID;
  const id = flag ?? fromEnv;
  if (id !== undefined) {
    if (!isValidSessionId(id)) {
      throw new AiflareError(
        "INVALID_SESSION_ID",
        `session id ${JSON.stringify(id.slice(0, 60))} is invalid: use only letters, digits, '.', '_' and '-' (1-128 characters), e.g. the session_id Claude Code reports`,
      );
    }
    return id;
  }
  const newest = newestSession(root, agent);
  if (newest) {
    warnings.push(`no session given: using the most recent session ${newest} (pass --claude-session-id to choose)`);
    return newest;
  }
  return "";
}

/**
 * `aiflare capture`: completes the entry the commit hook wrote with the agent's summary, or creates it when there
 * is none. Capturing a commit again updates its entry.
 */
export async function runCapture(
  rawFlags: CaptureFlags,
  deps: { cwd: string; env: Record<string, string | undefined>; now?: Date },
): Promise<CaptureResult> {
  const parsed = v.safeParse(FlagsSchema, rawFlags);
  if (!parsed.success) throw new AiflareError("INVALID_ARGUMENT", parsed.issues[0].message);
  const flags = parsed.output;
  const repo = findRepo(deps.cwd);
  if (!repo) throw new AiflareError("NOT_A_REPO", "not inside a git repository: run aiflare capture from your project");
  const warnings: string[] = [];
  const hash = resolveCommit(repo, flags.commitHash);
  const now = (deps.now ?? new Date()).toISOString();
  const redact = redactOptionsFor(repo.root);
  const existing = await readEntry(repo, hash);

  const agentType: AgentType = (flags.agentType as AgentType | undefined) ?? existing?.agentType ?? "CLAUDE_CODE";
  const agent: AgentName = agentType === "CODEX" ? "codex" : "claude";
  let sessionId: string;
  if (flags.claudeSessionId !== undefined || !existing?.claudeSessionId) {
    sessionId = resolveSession(flags.claudeSessionId, deps.env, repo.root, agent, warnings);
  } else {
    sessionId = existing.claudeSessionId;
  }

  let facts: CommitFacts | undefined;
  const getFacts = () => {
    if (!facts) {
      const store = new ObjectStore(repo.commonDir);
      try {
        facts = commitFacts(store, hash);
      } finally {
        store.close();
      }
    }
    return facts;
  };

  // Creating: the hook did not write this entry, so take over its files (delta, pending-question marker).
  let created:
    | Pick<Entry, "commitHash" | "agentType" | "claudeSessionId" | "branch" | "conversationSnippet" | "continuation" | "groupRootId">
    | undefined;
  if (!existing) {
    const files = sessionId ? sessionFiles(repo.root, agent, sessionId) : undefined;
    const deltaText = files ? takeDeltaFile(files) : "";
    const snippet = flags.conversationSnippet ?? deltaText;
    const continuation = files ? existsSync(files.pendingQuestion) : false;
    const previous = sessionId ? await latestSessionEntry(repo, sessionId, hash) : null;
    created = {
      commitHash: hash,
      agentType,
      claudeSessionId: sessionId,
      branch: currentBranch(repo),
      conversationSnippet: snippet,
      continuation,
      groupRootId: groupRootFor(previous, deltaHasUser(snippet), continuation),
    };
    if (files) rmSync(files.pendingQuestion, { force: true });
  }

  let wasCreated = false;
  const entry = await updateEntry(
    repo,
    hash,
    (current) => {
      wasCreated = current === null;
      const base: Entry = current ?? {
        ...created!,
        title: getFacts().subject,
        intent: "",
        alternatives: "",
        diffSummary: "",
        tag: inferTag(getFacts().subject),
        changedFiles: getFacts().changedFiles,
        capturedAt: now,
      };
      return {
        ...base,
        title: flags.title ?? (base.title || getFacts().subject),
        intent: flags.intent ?? base.intent,
        alternatives: flags.alternatives ?? base.alternatives,
        diffSummary: flags.diffSummary ?? base.diffSummary,
        tag: (flags.tag as Tag | undefined) ?? base.tag,
        changedFiles: flags.changedFiles ?? (base.changedFiles.length ? base.changedFiles : getFacts().changedFiles),
        agentType: (flags.agentType as AgentType | undefined) ?? base.agentType,
        claudeSessionId: flags.claudeSessionId !== undefined ? sessionId : base.claudeSessionId || sessionId,
        conversationSnippet: current && flags.conversationSnippet !== undefined ? flags.conversationSnippet : base.conversationSnippet,
        capturedAt: now,
      };
    },
    { redact },
  );
  // what killed writers left (a temporary object, a half-made index) goes now, not in gc's two weeks
  removeStaleTempFiles(repo.commonDir);
  return { entry: entry!, created: wasCreated, warnings };
}
