/**
 * The file engine behind install/uninstall: each file aiflare edits is a rule (how to add aiflare's part,
 * how to take it out). Install backs up the previous version and writes atomically; uninstall restores the
 * backup byte for byte when the file is still exactly what install made of it, and otherwise takes out
 * only aiflare's part.
 */
import { readFileSync, readdirSync, rmSync, rmdirSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { isAiflareError } from "../../errors.ts";
import { atomicWrite, ensureContextDir, ensureOwnDir, readOwnFile, realTarget, resolveTarget, type TargetScope } from "../fsutil.ts";
import { CONTEXT_DIR } from "../session.ts";

/** One file install edits. */
export interface FileRule {
  /** absolute path */
  path: string;
  /** what it is, for messages ("Claude Code hooks") */
  label: string;
  /** the content after install, given the content before (null: no file). Returns `before` when nothing changes. */
  apply(before: string | null): string | null;
  /**
   * takes aiflare's part out of `current`. `original` is the pre-install text, null when install created
   * the file, undefined when unknown. Returns null to delete the file.
   */
  remove(current: string, original: string | null | undefined): string | null;
  /** true when the text holds aiflare's part */
  hasOurs(text: string): boolean;
  /**
   * true when `hasOurs` cannot tell aiflare's part from the same text written by the user (plain
   * `.gitignore` lines): such a file is only edited by uninstall when install recorded that it changed it.
   */
  ambiguous?: boolean;
  /**
   * why part of aiflare's text must stay for now (the `aiflare.yml` ignore line while that file exists): uninstall
   * then neither restores the file nor deletes it, and `remove` keeps that part
   */
  pinned?: string;
  /** the text of the file with nothing in it, written instead of deleting a file git tracks ("" unless set) */
  empty?: string;
}

/** A JSON settings file with nothing in it: what a tracked one holds once aiflare's part is out. */
export const EMPTY_JSON = "{}\n";

export type ChangeAction = "create" | "update" | "unchanged" | "delete" | "restore" | "remove" | "keep";

/** One planned step: what happens to one path, and the function that does it. */
export interface Change {
  path: string;
  action: ChangeAction;
  detail: string;
  /** true when the path does not exist and nothing will create it (left out of reports) */
  absent?: boolean;
  /** performs the change; absent when there is nothing to do */
  run?: () => void;
  /** the file is tracked by git: the change is the user's to commit */
  tracked?: boolean;
}

/** Reads a text file, null when it does not exist. */
export function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "ENOTDIR") return null;
    throw err;
  }
}

/** Files install edits in a working tree may be links, but only to places inside it and outside its `.git`. */
export function workingTreeScope(root: string): TargetScope {
  return { inside: [root], notInside: [join(root, ".git")], label: "the repository" };
}

/**
 * The backup (or created-marker) at `path` under `.context-capture/backup/`: null when absent. Throws UNSAFE_PATH
 * when a directory on the way is a symlink or someone else's, so neither install nor uninstall ever follows one.
 */
function readBackup(root: string, path: string): string | null {
  if (!ensureOwnDir(root, dirname(path), false)) return null;
  return readOwnFile(path);
}

/** Writes a backup file, creating `.context-capture/backup/…` as real owner-only directories. */
function writeBackup(root: string, path: string, text: string): void {
  ensureContextDir(root);
  ensureOwnDir(root, dirname(path));
  atomicWrite(path, text, 0o600);
}

/** True when `path` leads to `target` through a symlink (on itself or on a directory above it). */
function viaLink(root: string, path: string, target: string): boolean {
  return target !== join(realTarget(root), relative(root, path));
}

/** Where install keeps the previous version of a file: under `.context-capture/backup/`, which git ignores. */
export function backupPath(root: string, path: string): string {
  return join(root, CONTEXT_DIR, "backup", relative(root, path));
}

/** Removes `dir` and its parents while they are empty, never going above `stop`. */
export function pruneEmptyDirs(dir: string, stop: string): void {
  let d = dir;
  while (d.startsWith(stop + sep) && d !== stop) {
    try {
      if (readdirSync(d).length > 0) return;
      rmdirSync(d);
    } catch {
      return;
    }
    d = dirname(d);
  }
}

/** Marker recording that install created the file (so uninstall may delete it). */
function createdMarker(root: string, path: string): string {
  return `${backupPath(root, path)}.aiflare-created`;
}

/** Plans install of one rule. Throws (before anything is written) when the file cannot be merged. */
export function planFileInstall(root: string, rule: FileRule): Change {
  // a link is written through (and stays a link) only when it leads to a place inside the working tree
  const target = resolveTarget(rule.path, workingTreeScope(root), root);
  const before = readText(target);
  const after = rule.apply(before);
  if (after === before || after === null) return { path: rule.path, action: "unchanged", detail: rule.label };
  const bak = backupPath(root, rule.path);
  const previousBackup = readBackup(root, bak);
  return {
    path: rule.path,
    action: before === null ? "create" : "update",
    detail: viaLink(root, rule.path, target) ? `${rule.label} (written through the link to ${relative(realTarget(root), target)})` : rule.label,
    run() {
      if (before === null) writeBackup(root, createdMarker(root, rule.path), "");
      // Keep the pre-aiflare version when this write only updates aiflare's own part.
      else if (!rule.hasOurs(before) || previousBackup === null) writeBackup(root, bak, before);
      atomicWrite(target, after);
    },
  };
}

/**
 * Plans uninstall of one rule. A file git tracks (`tracked`) is never deleted: aiflare's part is taken out and the
 * change is left to commit, so no `git add -A` records a deletion the user did not ask for.
 */
export function planFileUninstall(root: string, rule: FileRule, tracked = false): Change {
  let target: string;
  try {
    target = resolveTarget(rule.path, workingTreeScope(root), root);
  } catch (err) {
    if (!isAiflareError(err, "UNSAFE_PATH")) throw err;
    return { path: rule.path, action: "keep", detail: `${rule.label}: left alone, ${err.message.split(";")[0]}` };
  }
  const current = readText(target);
  const bakPath = backupPath(root, rule.path);
  const marker = createdMarker(root, rule.path);
  let backup: string | null;
  let created: boolean;
  let backupsSafe = true;
  try {
    backup = readBackup(root, bakPath);
    created = readBackup(root, marker) !== null;
  } catch (err) {
    if (!isAiflareError(err, "UNSAFE_PATH")) throw err;
    // a linked backup directory is never read, written or pruned: judge the file by itself
    [backup, created, backupsSafe] = [null, false, false];
  }
  const dropBackup = () => {
    if (!backupsSafe) return;
    rmSync(bakPath, { force: true });
    rmSync(marker, { force: true });
    pruneEmptyDirs(dirname(bakPath), join(root, CONTEXT_DIR));
  };
  if (current === null) return { path: rule.path, action: "unchanged", detail: rule.label, absent: true };
  // the whole file was aiflare's: deleted, unless git tracks it (then emptied, a deletion is not ours to stage)
  const whole = (detail: string): Change => ({
    path: rule.path,
    action: tracked ? "remove" : "delete",
    detail: `${rule.label}: ${detail}${tracked ? "; git tracks it, so it is kept, empty" : ""}`,
    tracked,
    run() {
      if (tracked) atomicWrite(target, rule.empty ?? "");
      else {
        rmSync(target, { force: true });
        pruneEmptyDirs(dirname(target), realTarget(root));
      }
      dropBackup();
    },
  });
  if (!rule.pinned && backup !== null && !rule.hasOurs(backup) && rule.apply(backup) === current) {
    return {
      path: rule.path,
      action: "restore",
      detail: `${rule.label}: put back as it was before install`,
      tracked,
      run() {
        atomicWrite(target, backup);
        dropBackup();
      },
    };
  }
  if (!rule.pinned && backup === null && (created || !rule.ambiguous) && rule.apply(null) === current) {
    return whole("created by install, nothing else in it");
  }
  const original = backup !== null && !rule.hasOurs(backup) ? backup : created ? null : undefined;
  if (!rule.hasOurs(current) || (rule.ambiguous && original === undefined)) {
    return { path: rule.path, action: "unchanged", detail: `${rule.label}: nothing of aiflare's in it` };
  }
  const next = rule.remove(current, original);
  if (next === current) return { path: rule.path, action: "unchanged", detail: rule.pinned ? `${rule.label}: ${rule.pinned}` : rule.label };
  if (next === null) return whole("aiflare's part taken out, nothing else was in it");
  return {
    path: rule.path,
    action: "remove",
    detail: `${rule.label}: aiflare's part taken out, your later changes kept${rule.pinned ? ` (${rule.pinned})` : ""}`,
    tracked,
    run() {
      atomicWrite(target, next);
      dropBackup();
    },
  };
}
