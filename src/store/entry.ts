import * as v from "valibot";
import { FULL_HASH_RE } from "../util/ids.ts";

/** The kinds of change an entry is tagged with (SPEC §4). */
export const TAGS = ["FEATURE", "BUGFIX", "REFACTORING", "TEST", "DOCS"] as const;
/** The agents an entry can come from (SPEC §4). */
export const AGENT_TYPES = ["CLAUDE_CODE", "CODEX", "GEMINI_CLI", "OTHER"] as const;

const Hash = v.pipe(v.string(), v.regex(FULL_HASH_RE, "a full 40-hex commit hash"));

/** A timeline entry (SPEC §4). Unknown extra fields are kept. */
export const EntrySchema = v.looseObject({
  commitHash: Hash,
  title: v.string(),
  intent: v.string(),
  alternatives: v.string(),
  diffSummary: v.string(),
  tag: v.picklist(TAGS),
  changedFiles: v.array(v.string()),
  agentType: v.picklist(AGENT_TYPES),
  claudeSessionId: v.string(),
  branch: v.string(),
  conversationSnippet: v.string(),
  continuation: v.boolean(),
  groupRootId: v.nullable(Hash),
  capturedAt: v.string(),
});

export type Entry = v.InferOutput<typeof EntrySchema>;
export type Tag = (typeof TAGS)[number];
export type AgentType = (typeof AGENT_TYPES)[number];
