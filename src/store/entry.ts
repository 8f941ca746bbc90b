import * as v from "valibot";
import { FULL_HASH_RE } from "../util/ids.ts";

/** The kinds of change an entry is tagged with (SPEC §4). */
export const TAGS = ["FEATURE", "BUGFIX", "REFACTORING", "TEST", "DOCS"] as const;
/** The agents an entry can come from (SPEC §4). */
export const AGENT_TYPES = [
  "CLAUDE_CODE",
  "CODEX",
  "GEMINI_CLI",
  "CURSOR",
  "QWEN_CODE",
  "FACTORY_DROID",
  "COPILOT_CLI",
  "OPENCODE",
  "OTHER",
] as const;

/** Whether an entry carries the agent's own summary (an added entry field). */
export const SUMMARY_STATUSES = ["pending", "written", "imported"] as const;
export type SummaryStatus = (typeof SUMMARY_STATUSES)[number];

/** A timeline entry (SPEC §4). Unknown extra fields are kept. */
function buildEntrySchema() {
  const Hash = v.pipe(v.string(), v.regex(FULL_HASH_RE, "a full 40-hex commit hash"));
  return v.looseObject({
    commitHash: Hash,
    title: v.string(),
    intent: v.string(),
    alternatives: v.string(),
    diffSummary: v.string(),
    /** null: untagged (the agent's summary is missing and the commit itself says nothing of its kind) */
    tag: v.nullable(v.picklist(TAGS)),
    changedFiles: v.array(v.string()),
    agentType: v.picklist(AGENT_TYPES),
    claudeSessionId: v.string(),
    branch: v.string(),
    conversationSnippet: v.string(),
    continuation: v.boolean(),
    groupRootId: v.nullable(Hash),
    capturedAt: v.string(),
    /** Added fields (SPEC §4 allows additions). Absent in entries written by older versions. */
    /** `pending`: written by the commit hook, the agent's summary not yet captured; `written`: completed by
     *  `aiflare capture`; `imported`: built by `aiflare import` from a past transcript (no agent summary). */
    summaryStatus: v.optional(v.picklist(SUMMARY_STATUSES)),
    /** The commit's committer date (ISO-8601): what history orders and dates entries by. */
    committedAt: v.optional(v.string()),
    /** When the entry was first written (capturedAt moves with every write): orders commits of the same second. */
    recordedAt: v.optional(v.string()),
    /** Who ran the session: the commit's committer identity (`Name <email>`) when the entry was first written. */
    author: v.optional(v.string()),
    /** The agent's model, when the hook payload named it. */
    model: v.optional(v.string()),
    /** The session this one continued after `/clear` (its handoff). */
    continuedFrom: v.optional(v.string()),
    /** Files the commit renamed (`from` → `to`), found when the entry was written: recall follows a file to the
     *  entries of its earlier names without asking git. Absent when there were none, or in older entries. */
    renames: v.optional(v.array(v.object({ from: v.string(), to: v.string() }))),
    /** What recognises the change after its commit is gone (see core/links/fingerprint.ts): git's stable patch id
     *  and per-file hashes of the added and removed lines. */
    fingerprint: v.optional(
      v.object({
        v: v.number(),
        patchId: v.optional(v.string()),
        files: v.array(v.object({ path: v.string(), add: v.string(), del: v.string() })),
        bits: v.optional(v.number()),
        addMax: v.optional(v.number()),
        delMax: v.optional(v.number()),
      }),
    ),
  });
}

let schema: ReturnType<typeof buildEntrySchema> | undefined;

/**
 * The entry schema, built on first use: listing history opens the index, whose refresh may parse entries, and most
 * often has none to parse.
 */
export function entrySchema(): ReturnType<typeof buildEntrySchema> {
  return (schema ??= buildEntrySchema());
}

export type Entry = v.InferOutput<ReturnType<typeof buildEntrySchema>>;
export type Tag = (typeof TAGS)[number];

/** How an untagged entry (`tag: null`) is shown, counted and kept in indexes: never a tag of the entry itself. */
export const UNTAGGED = "UNTAGGED";
export type AgentType = (typeof AGENT_TYPES)[number];

/**
 * The two times of an entry's place in the one order of every timeline (SPEC §4): its commit's date (else when
 * it was written), then when it was first recorded. Ties after both are broken by the commit hash.
 */
export function entryTimes(e: Pick<Entry, "committedAt" | "recordedAt" | "capturedAt">): { ms: number; recordedMs: number } {
  const written = Date.parse(e.recordedAt ?? e.capturedAt);
  const recordedMs = Number.isFinite(written) ? written : 0;
  const committed = e.committedAt ? Date.parse(e.committedAt) : Number.NaN;
  return { ms: Number.isFinite(committed) ? committed : recordedMs, recordedMs };
}
