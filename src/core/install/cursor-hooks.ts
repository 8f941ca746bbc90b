/**
 * Cursor's `.cursor/hooks.json` (`{version: 1, hooks: {event: [{command, …}]}}`): its flat handler lists are read
 * as matcher groups of one handler each, so the same merging, removal and audit serve it as Claude Code's and
 * Codex's files; what is written back is flat again, every entry that is not aiflare's left as it was.
 */
import { auditHooks, hasAiflareHooks, isObject, mergeHooks, parseHooksFile, removeHooks, serialize, type HooksAudit, type Json, type JsonObject } from "./hooks-json.ts";
import type { HooksFragment } from "./templates.ts";

/** The events Cursor's hooks.json knows; a file with others may be refused whole, so install writes only these. */
export const CURSOR_EVENTS = new Set([
  "sessionStart",
  "sessionEnd",
  "beforeSubmitPrompt",
  "beforeShellExecution",
  "afterShellExecution",
  "beforeMCPExecution",
  "afterMCPExecution",
  "beforeReadFile",
  "afterFileEdit",
  "afterAgentResponse",
  "afterAgentThought",
  "preToolUse",
  "postToolUse",
  "postToolUseFailure",
  "subagentStart",
  "subagentStop",
  "preCompact",
  "stop",
  "beforeTabFileRead",
  "afterTabFileEdit",
]);

function mapEvents(doc: JsonObject, each: (list: Json[]) => Json[]): JsonObject {
  if (!isObject(doc.hooks)) return doc;
  const hooks: JsonObject = {};
  for (const [event, list] of Object.entries(doc.hooks)) hooks[event] = each(list as Json[]);
  return { ...doc, hooks };
}

/** Each flat handler as a group of one. */
const nest = (doc: JsonObject) => mapEvents(doc, (list) => list.map((h) => (isObject(h) ? { hooks: [h] } : h)));

/** Groups back to flat handlers (a group of one handler without a matcher is that handler). */
const flatten = (doc: JsonObject) =>
  mapEvents(doc, (list) => list.flatMap((g) => (isObject(g) && Array.isArray(g.hooks) && Object.keys(g).length === 1 ? g.hooks : [g])));

const nestedText = (text: string, label: string) => JSON.stringify(nest(parseHooksFile(text, label)));

/** `before` with aiflare's Cursor hooks merged in (byte for byte `before` when nothing changes); `version: 1` kept or set. */
export function mergeCursorHooks(before: string | null, fragment: HooksFragment, label: string): string {
  const nested = before === null ? null : nestedText(before, label);
  const merged = mergeHooks(nested, fragment, label);
  if (before !== null && merged === nested) return before;
  const flat = flatten(JSON.parse(merged) as JsonObject);
  return serialize(flat.version === undefined ? { version: 1, ...flat } : flat, before);
}

/** The file without aiflare's handlers; null when nothing but `version` is left (install made it). */
export function removeCursorHooks(text: string, label: string): string | null {
  const nested = nestedText(text, label);
  const removed = removeHooks(nested, label);
  if (removed === nested) return text;
  if (removed === null) return null;
  const flat = flatten(JSON.parse(removed) as JsonObject);
  if (Object.keys(flat).every((k) => k === "version")) return null;
  return serialize(flat, text);
}

/** True when the file holds at least one aiflare handler (invalid JSON counts as none). */
export function hasCursorHooks(text: string): boolean {
  try {
    return hasAiflareHooks(nestedText(text, "file"));
  } catch {
    return false;
  }
}

/** Compares a Cursor hooks file with what install would write. */
export function auditCursorHooks(text: string, fragment: HooksFragment, label: string): HooksAudit {
  return auditHooks(nestedText(text, label), fragment, label);
}

/**
 * What Cursor would misread in the file: a `version` other than 1, event names it does not know (reported to refuse
 * the whole file), strings with `//` (its JSONC reader has cut them as comments).
 */
export function cursorFileProblems(text: string): string[] {
  const doc = parseHooksFile(text, ".cursor/hooks.json");
  const out: string[] = [];
  if (doc.version !== 1) out.push(`version is ${JSON.stringify(doc.version ?? null)}, Cursor reads version 1`);
  const unknown = Object.keys(isObject(doc.hooks) ? doc.hooks : {}).filter((e) => !CURSOR_EVENTS.has(e));
  if (unknown.length) out.push(`events Cursor does not know: ${unknown.join(", ")}`);
  if (/"[^"\n]*\/\/[^"\n]*"/.test(text)) out.push("a string holds // (Cursor's JSONC reader cuts it as a comment)");
  return out;
}
