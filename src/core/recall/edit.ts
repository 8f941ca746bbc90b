/**
 * Recall at the point of edit (`hook pre-tool-use`): before a file-editing tool runs, the recorded why of that
 * file, once per file per session, as `additionalContext`. It never decides whether the edit may run.
 *
 * Kept light for the hook path: `node:fs`, `node:path` and the index's `bun:sqlite` queries load statically;
 * the settings parser and git (renames, line ranking) are imported only when a path needs them.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { earlierPaths, entriesChangingPaths, linkedParts, oldestEntryMs, type RecallEntry } from "../../store/index/recall.ts";
import { recallWithoutFiles } from "../config-files.ts";
import { appendWhole, readOwnFile } from "../fsutil.ts";
import { editContext, hasReason } from "./format.ts";
import { readRecallIndex } from "./index-access.ts";
import { cachedEarlierNames, followInBackground } from "./renames.ts";
import { isEditTool } from "./tools.ts";


/** Entries considered before ranking; at most this many are shown. */
const CANDIDATES = 20;
const SHOWN = 3;
/** git is given this long to blame lines; past it the hook goes on without. */
const GIT_BUDGET_MS = 800;

/** A file an edit is about to change, with the text it replaces when the tool says. */
export interface EditTarget {
  path: string;
  oldText?: string;
}

const str = (x: unknown): string | undefined => (typeof x === "string" && x !== "" ? x : undefined);

/**
 * The files a tool call edits: `file_path` (+ `old_string`, or each of MultiEdit's `edits`), `notebook_path`,
 * or the `*** Update File:` / `*** Delete File:` sections of a Codex patch (`command` or `input`).
 */
export function editTargets(toolName: string | undefined, toolInput: unknown): EditTarget[] {
  if (!isEditTool(toolName) || !toolInput || typeof toolInput !== "object") return [];
  const input = toolInput as Record<string, unknown>;
  if (toolName === "apply_patch") return patchTargets(str(input.command) ?? str(input.input) ?? str(input.patch) ?? "");
  const path = str(input.file_path) ?? str(input.notebook_path);
  if (!path) return patchTargets(str(input.command) ?? "");
  if (toolName === "MultiEdit" && Array.isArray(input.edits)) {
    const first = input.edits.find((e) => e && typeof e === "object" && str((e as Record<string, unknown>).old_string));
    return [{ path, oldText: first ? str((first as Record<string, unknown>).old_string) : undefined }];
  }
  return [{ path, oldText: str(input.old_string) }];
}

/** The files a Codex patch updates or deletes (added files have no past), with the first lines it replaces. */
export function patchTargets(patch: string): EditTarget[] {
  const out: EditTarget[] = [];
  let current: { path: string; old: string[] } | undefined;
  const flush = () => {
    if (current) out.push({ path: current.path, oldText: current.old.length ? current.old.join("\n") : undefined });
    current = undefined;
  };
  for (const line of patch.split("\n").slice(0, 20_000)) {
    const m = /^\*\*\* (Update|Delete|Add) File: (.+)$/.exec(line);
    if (m) {
      flush();
      if (m[1] !== "Add") current = { path: m[2]!.trim(), old: [] };
      continue;
    }
    if (current && current.old.length < 40 && line.startsWith("-") && !line.startsWith("---")) current.old.push(line.slice(1));
  }
  flush();
  return out.slice(0, 5);
}

/** What the handler needs; everything is passed in, so a lean entry point can call it directly. */
export interface EditRecallInput {
  root: string;
  gitDir: string;
  commonDir: string;
  /** already validated */
  sessionId: string;
  toolName?: string;
  toolInput: unknown;
  /** the payload's cwd, against which relative paths are read */
  cwd?: string;
  /** this session's marker file: the paths already given context */
  markerPath: string;
  env: Record<string, string | undefined>;
}

/** The repository-relative path of `path`, or null when it lies outside the working tree or in `.git`. */
function repoRelative(root: string, cwd: string, path: string): string | null {
  const abs = isAbsolute(path) ? path : resolve(cwd, path);
  let rel = relative(root, abs);
  if (rel.startsWith("..") || isAbsolute(rel)) {
    // The same place through a symlinked prefix (macOS's /var → /private/var, a linked home directory).
    try {
      rel = relative(realpathSync(root), join(realpathSync(dirname(abs)), basename(abs)));
    } catch {
      return null;
    }
  }
  if (!rel || rel.startsWith("..") || isAbsolute(rel)) return null;
  const posix = rel.split(sep).join("/");
  return posix === ".git" || posix.startsWith(".git/") ? null : posix;
}

function readMarker(path: string): Set<string> {
  return new Set((readOwnFile(path) ?? "").split("\n").filter(Boolean));
}

/**
 * The PreToolUse output for an edit: context for each edited file that has recorded history and was not
 * given context earlier in this session, or undefined. Throws only on unexpected failures (the runner logs them).
 */
export async function recallForEdit(input: EditRecallInput): Promise<Record<string, unknown> | undefined> {
  const targets = editTargets(input.toolName, input.toolInput);
  if (targets.length === 0) return undefined;
  const seen = readMarker(input.markerPath);
  const todo: (EditTarget & { rel: string })[] = [];
  for (const t of targets) {
    const rel = repoRelative(input.root, input.cwd ?? input.root, t.path);
    if (rel && !seen.has(rel) && !todo.some((x) => x.rel === rel)) todo.push({ ...t, rel });
  }
  if (todo.length === 0) return undefined;

  const settings = recallWithoutFiles(input.root, input.env) ?? (await import("../config.ts")).loadRecallSettings(input.root, input.env);
  if (!settings.edit) return undefined;

  const texts: string[] = [];
  const done: string[] = [];
  const budget = Math.floor(settings.maxChars / todo.length);
  for (const t of todo) {
    const text = await contextForFile(input, t, budget);
    if (text === null) return undefined; // no timeline, or its index is being built: nothing marked, ask again later
    if (text === undefined) continue; // its earlier names are being looked up: not marked, asked again at its next edit
    done.push(t.rel);
    if (text) texts.push(text);
  }
  // Marked only once handled, so a failure above retries at the next edit.
  if (done.length) appendWhole(input.markerPath, done.map((rel) => `${rel}\n`).join(""));
  if (texts.length === 0) return undefined;
  return { hookSpecificOutput: { hookEventName: "PreToolUse", additionalContext: texts.join("\n\n") } };
}

/**
 * The context for one file ("" when it has no recorded history), null when the repository has no timeline
 * or its index is being built in the background, undefined when its earlier names are not known yet at this
 * HEAD (a background lookup is started; the file's next edit finds them).
 */
async function contextForFile(input: EditRecallInput, t: EditTarget & { rel: string }, budget: number): Promise<string | null | undefined> {
  const abs = resolve(input.root, t.rel);
  // A file that does not exist yet has no past to recall.
  if (!existsSync(abs)) return "";
  const own = (e: RecallEntry) => e.sessionId !== input.sessionId;
  const repo = { root: input.root, commonDir: input.commonDir };
  // The renames recorded with entries give the file's earlier names at once: its past under them is recalled too.
  const first = await readRecallIndex(repo, input.env, (db) => {
    const names = earlierPaths(db, t.rel);
    return { entries: entriesChangingPaths(db, [t.rel, ...names], CANDIDATES), oldest: oldestEntryMs(db), names };
  });
  if (!first) return null;
  // This session's own commits are in its context already.
  let entries = first.entries.filter(own);
  let renamedFrom: string[] | undefined = first.names.length ? first.names : undefined;
  if (first.entries.length > 0 && entries.length === 0) return "";
  if (entries.length === 0) {
    // A file with no entries may have them under an earlier name no entry recorded (a rename made outside a session).
    if (first.oldest === null || renamedFrom) return "";
    renamedFrom = cachedEarlierNames({ root: input.root, gitDir: input.gitDir, commonDir: input.commonDir }, t.rel);
    if (renamedFrom === undefined) {
      // git log --follow takes longer than an edit may wait: asked in the background, for the next edit.
      await followInBackground(input.root, t.rel, first.oldest, input.env);
      return undefined;
    }
    if (renamedFrom.length === 0) return "";
    const names = renamedFrom;
    entries = (await readRecallIndex(repo, input.env, (db) => entriesChangingPaths(db, names, CANDIDATES)))?.filter(own) ?? [];
    if (entries.length === 0) return "";
  }
  let hit = new Set<string>();
  if (entries.length > SHOWN && t.oldText) {
    // git blame needs to look back only to the oldest candidate (an hour's margin for clock differences).
    const since = Math.min(...entries.map((e) => Date.parse(e.date)).filter(Number.isFinite)) - 3_600_000;
    if (Number.isFinite(since)) hit = await commitsOfLines(input.root, t.rel, abs, t.oldText, since);
    hit = await throughLinks(input, hit);
  }
  // Most relevant first: the commits behind the edited lines, then those with a recorded reason; newest first within.
  const rank = (e: RecallEntry) => (hit.has(e.commitHash) ? 0 : hasReason(e) ? 1 : 2);
  entries = entries.map((e, i) => ({ e, i })).sort((a, b) => rank(a.e) - rank(b.e) || a.i - b.i).map((x) => x.e);
  return editContext(t.rel, entries.slice(0, SHOWN), hit, budget, renamedFrom);
}

/** Blamed commits with no entry of their own (a squash, a rebase-merge copy) stand for their linked parts. */
async function throughLinks(input: EditRecallInput, hit: Set<string>): Promise<Set<string>> {
  if (hit.size === 0) return hit;
  const parts = await readRecallIndex({ root: input.root, commonDir: input.commonDir }, input.env, (db) => linkedParts(db, [...hit]));
  if (!parts || parts.size === 0) return hit;
  const out = new Set(hit);
  for (const list of parts.values()) for (const h of list) out.add(h);
  return out;
}

/** `ms` as git's `--since`. */
const sinceArg = (ms: number) => `--since=${new Date(ms).toISOString()}`;

/** The commits that last changed the lines `oldText` occupies in the file (git blame), empty when not found. */
async function commitsOfLines(root: string, rel: string, abs: string, oldText: string, sinceMs: number): Promise<Set<string>> {
  let content: string;
  try {
    content = readFileSync(abs, "utf8");
  } catch {
    return new Set();
  }
  const at = content.indexOf(oldText);
  if (at < 0) return new Set();
  const start = content.slice(0, at).split("\n").length;
  const end = start + oldText.replace(/\n$/, "").split("\n").length - 1;
  const { execGit } = await import("../../util/git.ts");
  const r = await execGit(["blame", "--porcelain", `-L${start},${end}`, sinceArg(sinceMs), "--", rel], {
    cwd: root,
    timeoutMs: GIT_BUDGET_MS,
  });
  const out = new Set<string>();
  if (r.code !== 0) return out;
  for (const line of new TextDecoder().decode(r.stdout).split("\n")) {
    const m = /^([0-9a-f]{40}) \d+ \d+/.exec(line);
    if (m) out.add(m[1]!);
  }
  return out;
}
