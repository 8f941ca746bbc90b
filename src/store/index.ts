/** The store's public API: the git-ref timeline and sessions branches. */
export type { StoreRepo } from "./branch.ts";
export { EntrySchema, TAGS, AGENT_TYPES, type Entry, type Tag, type AgentType } from "./entry.ts";
export { entryPath, sessionPath, readRef, TIMELINE_REF, SESSIONS_REF } from "./refs.ts";
export {
  readEntry,
  writeEntry,
  updateEntry,
  moveEntries,
  mergeEntries,
  listEntryHashes,
  listTimeline,
  latestSessionEntry,
  writeSession,
  readSession,
  serializeEntry,
  type WriteOptions,
} from "./timeline.ts";
