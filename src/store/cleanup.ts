/**
 * Temporary files a killed aiflare process leaves behind: `objects/xx/tmp_obj_aiflare_<pid>_*` (an object being
 * written) and `aiflare/index.sqlite.tmp-<pid>-*` (an index being created). A live writer needs them for
 * milliseconds, so one whose process is gone, or that is older than an hour, is stale.
 */
import { mkdirSync, readdirSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { TMP_OBJECT_PREFIX } from "./objects.ts";
import { dueAndMarked } from "../util/due.ts";
import { processAlive } from "../util/ids.ts";

/** A temporary file younger than this is left alone even when its pid looks dead (pids are reused, clocks skew). */
const MIN_AGE_MS = 60_000;
/** Older than this it is stale whatever its pid says. */
const MAX_AGE_MS = 3_600_000;
/**
 * How often `capture` looks for them (every object folder is read): a temporary file is judged only after a minute
 * and is stale at the latest after an hour, so a look at every capture finds nothing the next one would not.
 */
export const TEMP_LOOK_EVERY_MS = 10 * 60_000;

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Removes stale temporary files of aiflare under `commonDir`; returns how many it removed. */
export function removeStaleTempFiles(commonDir: string, now = Date.now()): number {
  const candidates: { path: string; pid: number }[] = [];
  const objects = join(commonDir, "objects");
  for (const sub of list(objects)) {
    if (!/^[0-9a-f]{2}$/.test(sub)) continue;
    for (const name of list(join(objects, sub))) {
      if (name.startsWith(TMP_OBJECT_PREFIX)) candidates.push({ path: join(objects, sub, name), pid: Number(name.slice(TMP_OBJECT_PREFIX.length).split("_")[0]) });
    }
  }
  const indexDir = join(commonDir, "aiflare");
  for (const name of list(indexDir)) {
    const m = /^index\.sqlite\.tmp-(\d+)-/.exec(name);
    if (m) candidates.push({ path: join(indexDir, name), pid: Number(m[1]) });
  }
  let removed = 0;
  for (const c of candidates) {
    let age: number;
    try {
      age = now - statSync(c.path).mtimeMs;
    } catch {
      continue;
    }
    const stale = age > MAX_AGE_MS || (age > MIN_AGE_MS && (!Number.isInteger(c.pid) || c.pid <= 0 || !processAlive(c.pid)));
    if (!stale) continue;
    try {
      unlinkSync(c.path);
      removed++;
    } catch {
      // another cleaner got there first
    }
  }
  return removed;
}

/**
 * `removeStaleTempFiles`, when the last look (`aiflare/temp-cleanup` under `commonDir`, by its time) was more than
 * TEMP_LOOK_EVERY_MS ago, or never, or as far in the future (a clock set back); returns how many it removed.
 */
export function removeStaleTempFilesIfDue(commonDir: string, now = Date.now()): number {
  const mark = (path: string, text: string) => {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, text);
  };
  return dueAndMarked(join(commonDir, "aiflare", "temp-cleanup"), TEMP_LOOK_EVERY_MS, now, mark) ? removeStaleTempFiles(commonDir, now) : 0;
}
