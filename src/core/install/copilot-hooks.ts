/**
 * GitHub Copilot CLI's hook files (`.github/hooks/*.json`): `{version: 1, hooks: {event: [handler, …]}}`, each
 * handler `{type: "command", bash, timeoutSec}` with no matcher groups. aiflare's handlers are the ones whose
 * `bash` calls `aiflare hook …`; every other key, event and handler is kept where it was.
 */
import copilotHooks from "../../../hooks/copilot-hooks.json";
import { hookEventOf, isAiflareCommand } from "./binary.ts";
import { parseHooksFile, serialize, type HooksAudit } from "./hooks-json.ts";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

/** One Copilot command hook as aiflare writes it. */
interface CopilotHandler {
  type: "command";
  bash: string;
  timeoutSec: number;
}

const isObject = (x: unknown): x is JsonObject => typeof x === "object" && x !== null && !Array.isArray(x);
const isOurs = (h: unknown): boolean => isObject(h) && isAiflareCommand(h.bash);
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** aiflare's Copilot hooks, calling `bin` (already shell-quoted), by event. */
export function copilotHandlers(bin: string): Record<string, CopilotHandler[]> {
  const hooks = (copilotHooks as { hooks: Record<string, CopilotHandler[]> }).hooks;
  return Object.fromEntries(Object.entries(hooks).map(([event, hs]) => [event, hs.map((h) => ({ ...h, bash: h.bash.replace("{{aiflare}}", bin) }))]));
}

const parse = parseHooksFile;

/** `before` with aiflare's Copilot hooks merged in; `before` itself when nothing changes. */
export function mergeCopilotHooks(before: string | null, bin: string, label: string): string {
  const doc = parse(before, label);
  const hooks: JsonObject = isObject(doc.hooks) ? { ...doc.hooks } : {};
  for (const [event, ours] of Object.entries(copilotHandlers(bin))) {
    const list = (hooks[event] as Json[] | undefined) ?? [];
    const at = list.findIndex(isOurs);
    const rest = list.filter((h) => !isOurs(h));
    const insert = ours as unknown as Json[];
    hooks[event] = at < 0 ? [...rest, ...insert] : [...rest.slice(0, at), ...insert, ...rest.slice(at)];
  }
  const next: JsonObject = { version: 1, ...doc, hooks };
  if (before !== null && same(next, doc)) return before;
  return serialize(next, before);
}

/** Takes aiflare's handlers out; null when nothing but the version is left (the file can go). */
export function removeCopilotHooks(text: string, label: string): string | null {
  const doc = parse(text, label);
  if (!isObject(doc.hooks)) return text;
  const hooks: JsonObject = {};
  let changed = false;
  for (const [event, list] of Object.entries(doc.hooks)) {
    const kept = (list as Json[]).filter((h) => !isOurs(h));
    if (kept.length !== (list as Json[]).length) changed = true;
    if (kept.length > 0 || (list as Json[]).length === 0) hooks[event] = kept;
  }
  if (!changed) return text;
  const next: JsonObject = { ...doc };
  if (Object.keys(hooks).length > 0) next.hooks = hooks;
  else delete next.hooks;
  if (Object.keys(next).every((k) => k === "version")) return null;
  return serialize(next, text);
}

/** True when the text holds at least one of aiflare's Copilot handlers. */
export function hasCopilotHooks(text: string): boolean {
  try {
    const doc = parse(text, "file");
    return isObject(doc.hooks) && Object.values(doc.hooks).some((list) => (list as Json[]).some(isOurs));
  } catch {
    return false;
  }
}

/** What a Copilot hooks file lacks against what install writes for `bin`. */
export function auditCopilotHooks(text: string, bin: string, label: string): HooksAudit {
  const doc = parse(text, label);
  const hooks = isObject(doc.hooks) ? doc.hooks : {};
  const audit: HooksAudit = { missing: [], outdated: [], commands: [] };
  for (const list of Object.values(hooks)) for (const h of list as Json[]) if (isOurs(h)) audit.commands.push(String((h as JsonObject).bash));
  for (const [event, ours] of Object.entries(copilotHandlers(bin))) {
    for (const want of ours) {
      const found = ((hooks[event] as Json[] | undefined) ?? []).filter((h) => isOurs(h) && hookEventOf(String((h as JsonObject).bash)) === hookEventOf(want.bash));
      if (found.length === 0) audit.missing.push(event);
      else if (!found.some((h) => same(h, want))) audit.outdated.push(event);
    }
  }
  return audit;
}
