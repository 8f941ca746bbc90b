import { statSync } from "node:fs";
import { basename, resolve } from "node:path";
import { AiflareError } from "../../errors.ts";
import type { Entry } from "../../store/entry.ts";
import { ObjectStore } from "../../store/objects.ts";
import { addSessionEntries, listEntryHashes, readEntry } from "../../store/timeline.ts";
import { appendSessionSegment, readSessionTranscript } from "../../store/sessions.ts";
import { isValidSessionId } from "../../util/ids.ts";
import { commitFacts, inferTag } from "../capture/facts.ts";
import { fingerprintField } from "../links/fingerprint.ts";
import { groupRootFor } from "../capture/grouping.ts";
import { aboutFields, appendSnippet } from "../capture/record.ts";
import { parseTimeSpec } from "../history/filters.ts";
import { createLogger, type Logger } from "../log.ts";
import { redactOptionsFor } from "../config-files.ts";
import { findRepo } from "../repo.ts";
import { AGENT_TYPE } from "../session.ts";
import { readClaudeTranscript } from "./claude.ts";
import { readCodexRollout } from "./codex.ts";
import { CommitCatalog } from "./commits.ts";
import { MAX_TRANSCRIPT_LINE, type OnLongLine, type PastEvent, type PastSessionMeta } from "./events.ts";
import {
  findClaudeTranscripts,
  findCodexRollouts,
  findCopilotSessions,
  findCursorTranscripts,
  findDroidSessions,
  findGeminiChats,
  findQwenChats,
  sniffAgent,
  worktreeRoots,
  type FoundTranscript,
} from "./locate.ts";
import { readGeminiChat } from "./gemini.ts";
import { readCopilotEvents } from "./copilot.ts";
import { readQwenChat } from "./qwen.ts";
import { readCursorTranscript } from "./cursor.ts";
import { readDroidSession } from "./droid.ts";
import type { AgentName } from "../../agents/types.ts";
import { replaySession } from "./replay.ts";

/*
 * `aiflare import`: entries for the commits agents made before aiflare was installed, built from the agents'
 * own transcripts as the live hooks would have built them, marked `summaryStatus: "imported"` (no agent summary
 * was written). Entries that exist are never replaced, so running it again adds nothing.
 */

/** The agents with an importer. */
export type ImportAgent = Extract<AgentName, "claude" | "codex" | "gemini" | "copilot" | "qwen" | "cursor" | "droid" | "opencode">;

export interface ImportOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  agent: ImportAgent | "all";
  since?: string;
  dryRun: boolean;
  /** explicit transcript files; when empty, the agents' own folders are searched */
  paths: string[];
  onProgress?: (p: { scanned: number; total: number; matched: number }) => void;
  now?: Date;
}

export interface ImportedSession {
  sessionId: string;
  path: string;
  agent: AgentName;
  commits: { hash: string; subject: string; status: "imported" | "recorded" | "would-import" }[];
  unmatched: { command: string; time: string | null }[];
  error?: string;
}

export interface ImportSummary {
  dryRun: boolean;
  transcripts: number;
  sessions: ImportedSession[];
  matched: number;
  /** entries written (with --dry-run: entries that would be written) */
  imported: number;
  alreadyRecorded: number;
  unmatched: number;
  failed: number;
}

type Read = { meta: PastSessionMeta; events: PastEvent[] };

/**
 * Each agent `aiflare import` reads: where its sessions of the repository are, and how one is read. A new agent
 * joins here.
 */
const IMPORTERS: Record<ImportAgent, {
  find: (roots: string[], env: Record<string, string | undefined>, sinceMs?: number) => FoundTranscript[] | Promise<FoundTranscript[]>;
  read: (t: FoundTranscript, onLongLine: OnLongLine) => Promise<Read>;
}> = {
  claude: { find: findClaudeTranscripts, read: (t, long) => readClaudeTranscript(t.path, long) },
  codex: { find: findCodexRollouts, read: (t, long) => readCodexRollout(t.path, long) },
  gemini: { find: findGeminiChats, read: (t, long) => readGeminiChat(t.path, t.cwd ?? null, long) },
  copilot: { find: findCopilotSessions, read: (t, long) => readCopilotEvents(t.path, long) },
  qwen: { find: findQwenChats, read: (t, long) => readQwenChat(t.path, long) },
  cursor: { find: findCursorTranscripts, read: (t, long) => readCursorTranscript(t.path, t.mtimeMs, long) },
  droid: { find: findDroidSessions, read: (t, long) => readDroidSession(t.path, long) },
  // OpenCode keeps its sessions in one SQLite database: the module (and bun:sqlite) loads only when it is asked for
  opencode: {
    find: async (roots, env) => (await import("./opencode.ts")).findOpenCodeSessions(roots, env),
    read: async (t) => (await import("./opencode.ts")).readOpenCodeSession(t.path, t.sessionId ?? "", t.cwd ?? null),
  },
};

/** The agents whose own stores `aiflare import` reads, in the order they are searched. */
export const IMPORT_AGENTS = Object.keys(IMPORTERS) as ImportAgent[];

async function readTranscript(t: FoundTranscript, logger: Logger): Promise<Read> {
  const onLongLine: OnLongLine = (bytes, line) =>
    logger.log("warn", "import: transcript line too long, skipped", { path: t.path, line, bytes, max: MAX_TRANSCRIPT_LINE });
  return IMPORTERS[t.agent as ImportAgent].read(t, onLongLine);
}

/** The session id of a transcript: from its lines, else from its file name (`<id>.jsonl`, `rollout-…-<id>.jsonl`). */
function sessionIdOf(meta: PastSessionMeta, path: string): string | null {
  if (meta.sessionId) return meta.sessionId;
  const name = basename(path, ".jsonl");
  const uuid = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i.exec(name);
  return uuid ? uuid[1]! : name;
}

async function explicitTranscripts(paths: string[], cwd: string): Promise<FoundTranscript[]> {
  const out: FoundTranscript[] = [];
  for (const p of paths) {
    const path = resolve(cwd, p);
    let st;
    try {
      st = statSync(path);
    } catch {
      throw new AiflareError("NOT_FOUND", `no transcript at ${p}: give the path of a .jsonl file`);
    }
    if (!st.isFile()) throw new AiflareError("INVALID_ARGUMENT", `${p} is not a file: give the path of a .jsonl transcript`);
    out.push({ path, agent: await sniffAgent(path), mtimeMs: st.mtimeMs });
  }
  return out;
}

/** Finds the repository's past sessions and writes an entry for every commit they made that has none. */
export async function runImport(opts: ImportOptions): Promise<ImportSummary> {
  const repo = findRepo(opts.cwd);
  if (!repo) throw new AiflareError("NOT_A_REPO", "not inside a git repository: run aiflare import in the repository the sessions worked in");
  const now = opts.now ?? new Date();
  let sinceMs: number | undefined;
  if (opts.since !== undefined) {
    const t = parseTimeSpec(opts.since, now, "since");
    if (t === null) throw new AiflareError("INVALID_ARGUMENT", `--since ${opts.since}: use a date (2026-11-01), a date and time, or an age (30d, 12h)`);
    sinceMs = t;
  }
  const logger = createLogger({ root: repo.root, component: "import" });
  const roots = worktreeRoots(repo.root);
  let found: FoundTranscript[];
  if (opts.paths.length) found = await explicitTranscripts(opts.paths, opts.cwd);
  else {
    found = [];
    for (const agent of IMPORT_AGENTS) {
      if (opts.agent === "all" || opts.agent === agent) found.push(...(await IMPORTERS[agent].find(roots, opts.env, sinceMs)));
    }
  }
  if (sinceMs !== undefined) found = found.filter((t) => t.mtimeMs >= sinceMs!);
  // oldest first, so a commit is given to the session that made it before a later one mentions it
  found.sort((a, b) => a.mtimeMs - b.mtimeMs || a.path.localeCompare(b.path) || (a.sessionId ?? "").localeCompare(b.sessionId ?? ""));

  const catalog = CommitCatalog.load(repo.root);
  const existing = new Set(await listEntryHashes(repo));
  const claimed = new Set<string>();
  const redact = await redactOptionsFor(repo.root, logger);
  const store = new ObjectStore(repo.commonDir);
  const summary: ImportSummary = {
    dryRun: opts.dryRun,
    transcripts: found.length,
    sessions: [],
    matched: 0,
    imported: 0,
    alreadyRecorded: 0,
    unmatched: 0,
    failed: 0,
  };
  const capturedAt = now.toISOString();
  try {
    let scanned = 0;
    for (const t of found) {
      scanned++;
      // each session leaves its events, deltas and transcript text behind, and Bun collects them late in a loop like this: a full
      // collection every 100 sessions keeps the peak down (about 310 MB instead of 410 MB over 5,000 commits)
      if (scanned % 100 === 0) Bun.gc(true);
      let read;
      try {
        read = await readTranscript(t, logger);
      } catch (err) {
        logger.log("warn", "import: transcript unreadable", { path: t.path, error: (err as Error).message });
        continue;
      }
      const sessionId = sessionIdOf(read.meta, t.path);
      if (!sessionId || !isValidSessionId(sessionId)) {
        logger.log("warn", "import: transcript has no usable session id", { path: t.path });
        continue;
      }
      // a transcript without times (Cursor) matches its commits up to when its file was last written
      const replay = replaySession(read.events, catalog, claimed, read.meta.lastTime ?? t.mtimeMs);
      const commits = sinceMs === undefined ? replay.commits : replay.commits.filter((c) => c.commit.time * 1000 >= sinceMs!);
      const session: ImportedSession = {
        sessionId,
        path: t.path,
        agent: t.agent,
        commits: [],
        unmatched: replay.unmatched.map((u) => ({
          command: u.command,
          time: Number.isFinite(u.time) ? new Date(u.time).toISOString() : null,
        })),
      };
      summary.unmatched += session.unmatched.length;
      if (commits.length === 0 && session.unmatched.length === 0) {
        opts.onProgress?.({ scanned, total: found.length, matched: summary.matched });
        continue;
      }
      summary.sessions.push(session);
      const entries: Entry[] = [];
      let previous: Pick<Entry, "commitHash" | "groupRootId"> | null = null;
      for (const [n, c] of commits.entries()) {
        summary.matched++;
        // commit dates have whole seconds: when the session recorded each commit orders those of one second
        const recordedAt = new Date(Number.isFinite(c.at) ? c.at : now.getTime() + n).toISOString();
        if (existing.has(c.commit.hash)) {
          if (c.amend && entries.length && entries.at(-1) === previous) {
            // the commit this amend replaced was folded into the amended commit's entry by an earlier run
            entries.pop();
            session.commits.pop();
          }
          session.commits.push({ hash: c.commit.hash, subject: c.commit.subject, status: "recorded" });
          summary.alreadyRecorded++;
          previous = (await readEntry(repo, c.commit.hash)) ?? previous;
          continue;
        }
        const facts = commitFacts(store, c.commit.hash);
        const last = entries.at(-1);
        if (c.amend && last && last === previous) {
          // the amend replaced the commit just imported: one entry, at the new hash, with both deltas
          const merged: Entry = {
            ...last,
            commitHash: c.commit.hash,
            title: facts.subject,
            tag: inferTag(facts.subject, facts.changedFiles),
            changedFiles: facts.changedFiles,
            conversationSnippet: appendSnippet(last.conversationSnippet, c.delta),
            continuation: last.continuation || c.continuation,
            committedAt: c.commit.committedAt || undefined,
            recordedAt,
            ...fingerprintField(store, c.commit.hash),
          };
          entries[entries.length - 1] = merged;
          previous = merged;
          session.commits[session.commits.length - 1] = {
            hash: c.commit.hash,
            subject: c.commit.subject,
            status: opts.dryRun ? "would-import" : "imported",
          };
          continue;
        }
        const entry: Entry = {
          commitHash: c.commit.hash,
          title: facts.subject,
          intent: "",
          alternatives: "",
          diffSummary: "",
          tag: inferTag(facts.subject, facts.changedFiles),
          changedFiles: facts.changedFiles,
          agentType: AGENT_TYPE[t.agent],
          claudeSessionId: sessionId,
          branch: c.branch || read.meta.branch || "",
          conversationSnippet: c.delta,
          continuation: c.continuation,
          groupRootId: groupRootFor(previous, c.newRequest),
          capturedAt,
          committedAt: c.commit.committedAt || undefined,
          recordedAt,
          ...aboutFields(facts.committer),
          summaryStatus: "imported",
          ...fingerprintField(store, c.commit.hash),
        };
        entries.push(entry);
        previous = entry;
        session.commits.push({ hash: c.commit.hash, subject: c.commit.subject, status: opts.dryRun ? "would-import" : "imported" });
      }
      if (!opts.dryRun && entries.length) {
        try {
          const stored = await addSessionEntries(repo, sessionId, entries, { redact });
          for (const e of stored) existing.add(e.commitHash);
          summary.imported += stored.length;
          if (readSessionTranscript(repo, sessionId) === null && replay.transcript) {
            await appendSessionSegment(repo, sessionId, replay.transcript, { redact });
          }
        } catch (err) {
          session.error = (err as Error).message;
          summary.failed += entries.length;
          for (const c of session.commits) if (c.status === "imported") c.status = "would-import";
          logger.log("warn", "import: session not written", { session: sessionId, error: (err as Error).message });
        }
      } else if (opts.dryRun) summary.imported += entries.length;
      opts.onProgress?.({ scanned, total: found.length, matched: summary.matched });
    }
  } finally {
    store.close();
  }
  if (!opts.dryRun && summary.imported > 0) {
    const { withIndex } = await import("../../store/index-db.ts");
    await withIndex(repo.commonDir, () => undefined);
  }
  logger.log("info", "import done", {
    transcripts: summary.transcripts,
    matched: summary.matched,
    imported: summary.imported,
    dryRun: summary.dryRun,
  });
  return summary;
}

