/** The entries a clone knows of its commits: its own capture first, else the team's. */
import type { Database } from "bun:sqlite";
import type { Entry } from "../../store/entry.ts";
import type { RepoPaths } from "../repo.ts";
import { partsForLines } from "../links/match.ts";
import { teamEntries, teamLinkedViews } from "../team/index.ts";
import { linkedViews } from "./linked.ts";
import type { LinkedView } from "./render-links.ts";
import { getEntries } from "./query.ts";

/** An entry and whether it is a teammate's (from the team server or its cache) rather than this clone's capture. */
export interface KnownEntry {
  entry: Entry;
  team?: boolean;
}

/**
 * The entries of these commits as this clone knows them: its own, else the team's (the team server within a short
 * deadline, or its cache), marked `team`.
 */
export async function knownEntries(db: Database, repo: RepoPaths, hashes: string[]): Promise<Map<string, KnownEntry>> {
  const out = new Map<string, KnownEntry>();
  for (const [h, entry] of getEntries(db, hashes)) out.set(h, { entry });
  const team = await teamEntries(repo, hashes.filter((h) => !out.has(h)));
  for (const [h, entry] of team) out.set(h, { entry, team: true });
  return out;
}

/**
 * The parts of commits without an entry (squash, rebase-merge): through this clone's links, else matched to the
 * team's cached entries.
 */
export async function knownLinks(db: Database, repo: RepoPaths, hashes: string[]): Promise<Map<string, LinkedView>> {
  const linked = await linkedViews(db, repo.commonDir, hashes);
  for (const [h, view] of await teamLinkedViews(db, repo, hashes.filter((h) => !linked.has(h)))) linked.set(h, view);
  return linked;
}

/** The part of a linked commit that wrote line `line` (1-based) of `lines`, the file's text at that commit, or null. */
export function partOfLine(view: LinkedView, path: string, lines: string[], line: number): Entry | null {
  return partsForLines(path, lines, line, line, view.parts)[0] ?? null;
}
