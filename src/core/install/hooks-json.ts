/**
 * Merging aiflare's hooks into a Claude Code settings file or a Codex hooks.json, and taking them out again.
 * Every other key, event, group and handler is kept where it was; only handlers whose command is aiflare's
 * are added, updated or removed.
 */
import { AiflareError } from "../../errors.ts";
import { hookEventOf, isAiflareCommand } from "./binary.ts";
import type { HookGroupSpec, HookHandlerSpec, HooksFragment } from "./templates.ts";

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export function isObject(x: unknown): x is JsonObject {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function isOurHandler(h: unknown): boolean {
  return isObject(h) && isAiflareCommand(h.command);
}

/** Parses a hooks file; `label` names it in errors. Blank text is an empty object. */
export function parseHooksFile(text: string | null, label: string): JsonObject {
  if (text === null || text.trim() === "") return {};
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new AiflareError(
      "CONFIG",
      `${label} is not valid JSON (${(err as Error).message}). Fix it or move it away, then run the command again; nothing was changed.`,
      { cause: err },
    );
  }
  if (!isObject(doc)) throw new AiflareError("CONFIG", `${label} must hold a JSON object; nothing was changed.`);
  if (doc.hooks !== undefined && !isObject(doc.hooks)) {
    throw new AiflareError("CONFIG", `${label}: "hooks" must be an object; nothing was changed.`);
  }
  if (isObject(doc.hooks)) {
    for (const [event, groups] of Object.entries(doc.hooks)) {
      if (!Array.isArray(groups)) {
        throw new AiflareError("CONFIG", `${label}: hooks.${event} must be an array; nothing was changed.`);
      }
    }
  }
  return doc;
}

/** The indentation a JSON text uses (first indented key), two spaces when it cannot tell. */
function detectIndent(text: string | null): string {
  const m = text ? /^([ \t]+)["}\]]/m.exec(text) : null;
  return m?.[1] ?? "  ";
}

/** A hooks file's JSON in the indentation `before` used, with its trailing newline (one when there was no file). */
export function serialize(doc: JsonObject, before: string | null): string {
  const trailingNewline = before === null || before.trim() === "" || before.endsWith("\n");
  return JSON.stringify(doc, null, detectIndent(before)) + (trailingNewline ? "\n" : "");
}

const matcherOf = (g: unknown): string => (isObject(g) && typeof g.matcher === "string" ? g.matcher : "");
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Merges the groups of one event: aiflare's handlers updated in place, missing ones appended. */
function mergeEvent(existing: Json[], desired: HookGroupSpec[]): Json[] {
  const wanted = desired.flatMap((g) => g.hooks.map((h) => ({ matcher: g.matcher ?? "", handler: h })));
  const used = new Set<number>();
  const out: Json[] = [];
  for (const group of existing) {
    if (!isObject(group) || !Array.isArray(group.hooks) || !group.hooks.some(isOurHandler)) {
      out.push(group);
      continue;
    }
    const hooks: Json[] = [];
    for (const h of group.hooks) {
      if (!isOurHandler(h)) {
        hooks.push(h);
        continue;
      }
      const event = hookEventOf(String((h as JsonObject).command));
      const i = wanted.findIndex(
        (w, j) => !used.has(j) && w.matcher === matcherOf(group) && hookEventOf(w.handler.command) === event,
      );
      if (i < 0) continue; // a stale aiflare handler (older layout): dropped
      used.add(i);
      hooks.push(same(h, wanted[i]!.handler) ? h : (wanted[i]!.handler as unknown as Json));
    }
    if (hooks.length > 0) out.push({ ...group, hooks });
  }
  wanted.forEach((w, j) => {
    if (used.has(j)) return;
    const group: JsonObject = {};
    if (w.matcher) group.matcher = w.matcher;
    group.hooks = [w.handler as unknown as Json];
    out.push(group);
  });
  return out;
}

/**
 * Returns `before` with aiflare's hooks merged in. Returns `before` itself (byte for byte) when nothing
 * needs to change. Throws CONFIG on a file that is not a JSON object of the expected shape.
 */
export function mergeHooks(before: string | null, fragment: HooksFragment, label: string): string {
  const doc = parseHooksFile(before, label);
  const hooks: JsonObject = isObject(doc.hooks) ? { ...doc.hooks } : {};
  for (const [event, groups] of Object.entries(fragment.hooks)) {
    hooks[event] = mergeEvent((hooks[event] as Json[] | undefined) ?? [], groups);
  }
  const next: JsonObject = { ...doc, hooks };
  if (before !== null && same(next, doc)) return before;
  return serialize(next, before);
}

/**
 * Removes every aiflare handler, and the groups, events and `hooks` object that held only aiflare's.
 * Returns null when nothing else is left in the file (it can be deleted). Throws CONFIG on invalid JSON.
 */
export function removeHooks(text: string, label: string): string | null {
  const doc = parseHooksFile(text, label);
  if (!isObject(doc.hooks)) return Object.keys(doc).length === 0 ? null : text;
  const hooks: JsonObject = {};
  let changed = false;
  for (const [event, groups] of Object.entries(doc.hooks)) {
    const kept: Json[] = [];
    for (const group of groups as Json[]) {
      if (!isObject(group) || !Array.isArray(group.hooks) || !group.hooks.some(isOurHandler)) {
        kept.push(group);
        continue;
      }
      changed = true;
      const rest = group.hooks.filter((h) => !isOurHandler(h));
      if (rest.length > 0) kept.push({ ...group, hooks: rest });
    }
    if (kept.length > 0 || (groups as Json[]).length === 0) hooks[event] = kept;
  }
  if (!changed) return text;
  const next: JsonObject = { ...doc };
  if (Object.keys(hooks).length > 0) next.hooks = hooks;
  else delete next.hooks;
  if (Object.keys(next).length === 0) return null;
  return serialize(next, text);
}

/** True when the text holds at least one aiflare handler (invalid JSON counts as none). */
export function hasAiflareHooks(text: string): boolean {
  try {
    const doc = parseHooksFile(text, "file");
    return isObject(doc.hooks) && Object.values(doc.hooks).some((gs) => (gs as Json[]).some((g) => isObject(g) && Array.isArray(g.hooks) && g.hooks.some(isOurHandler)));
  } catch {
    return false;
  }
}

/** What a hooks file lacks against the fragment: `Event` or `Event (matcher)` labels. */
export interface HooksAudit {
  missing: string[];
  /** aiflare handlers present but different from what install writes now (other binary, timeout…) */
  outdated: string[];
  /** the aiflare command lines found, for checking the binary they call */
  commands: string[];
}

/** Compares a parsed hooks file with the fragment install would write. */
export function auditHooks(text: string, fragment: HooksFragment, label: string): HooksAudit {
  const doc = parseHooksFile(text, label);
  const hooks = isObject(doc.hooks) ? doc.hooks : {};
  const audit: HooksAudit = { missing: [], outdated: [], commands: [] };
  for (const groups of Object.values(hooks)) {
    for (const g of groups as Json[]) {
      if (isObject(g) && Array.isArray(g.hooks)) {
        for (const h of g.hooks) if (isOurHandler(h)) audit.commands.push(String((h as JsonObject).command));
      }
    }
  }
  for (const [event, groups] of Object.entries(fragment.hooks)) {
    for (const want of groups) {
      const name = want.matcher ? `${event} (${want.matcher})` : event;
      for (const handler of want.hooks) {
        const candidates = ((hooks[event] as Json[] | undefined) ?? [])
          .filter((g) => matcherOf(g) === (want.matcher ?? "") && isObject(g) && Array.isArray(g.hooks))
          .flatMap((g) => ((g as JsonObject).hooks as Json[]).filter(isOurHandler))
          .filter((h) => hookEventOf(String((h as JsonObject).command)) === hookEventOf(handler.command));
        if (candidates.length === 0) audit.missing.push(name);
        else if (!candidates.some((h) => same(h, handler))) audit.outdated.push(name);
      }
    }
  }
  return audit;
}

export type { HookHandlerSpec };
