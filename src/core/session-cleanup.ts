import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { writeOwnFile } from "./fsutil.ts";
import { dueAndMarked } from "../util/due.ts";
import { CONTEXT_DIR, SESSION_FILE_KINDS, type AgentName } from "./session.ts";

/** Live files of a session untouched for this long belong to a session that is over. */
export const STALE_SESSION_MS = 7 * 24 * 3600 * 1000;

/**
 * How often session-start looks for stale sessions: a session goes stale after a week, so a look once an hour
 * finds it in time, and the starts in between cost one lstat instead of a stat of every live file.
 */
export const CLEANUP_EVERY_MS = 3600 * 1000;

/**
 * True when `agent`'s live sessions were last looked over more than CLEANUP_EVERY_MS ago (or never, or as long in
 * the future: a clock set back); then marks the last look (`.context-capture/.cleanup-<agent>`, by its time).
 */
export function staleCleanupDue(root: string, agent: AgentName, now = Date.now()): boolean {
  return dueAndMarked(join(root, CONTEXT_DIR, `.cleanup-${agent}`), CLEANUP_EVERY_MS, now, writeOwnFile);
}

/**
 * Removes `agent`'s session files (and those sessions' pending-question markers) in `.context-capture/`
 * that were last written more than `maxAgeMs` ago. For agents without a SessionEnd hook (Codex), called
 * from session-start: one readdir, and a stat only of that agent's files. Returns the session ids removed.
 */
export function cleanupStaleSessions(
  root: string,
  agent: AgentName,
  now = Date.now(),
  maxAgeMs = STALE_SESSION_MS,
  /** a session whose files must stay (say, holding conversation not stored yet) */
  keep: (sessionId: string) => boolean = () => false,
): string[] {
  const dir = join(root, CONTEXT_DIR);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const prefix = `.${agent}-`;
  const bySession = new Map<string, { files: string[]; newest: number }>();
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const rest = name.slice(prefix.length);
    // a loop rather than find(), which the engine compiles on first use (src/README.md, hot paths)
    let kind: string | undefined;
    for (const k of SESSION_FILE_KINDS) {
      if (rest.startsWith(`${k}-`)) {
        kind = k;
        break;
      }
    }
    if (!kind) continue;
    const id = rest.slice(kind.length + 1);
    let mtime: number;
    try {
      mtime = statSync(join(dir, name)).mtimeMs;
    } catch {
      continue;
    }
    const s = bySession.get(id) ?? { files: [], newest: 0 };
    s.files.push(name);
    s.newest = Math.max(s.newest, mtime);
    bySession.set(id, s);
  }
  const removed: string[] = [];
  for (const [id, s] of bySession) {
    if (now - s.newest <= maxAgeMs || keep(id)) continue;
    for (const f of [...s.files, `.pending-question-${id}`]) rmSync(join(dir, f), { force: true });
    removed.push(id);
  }
  return removed;
}
