/** The entries a clone knows of its commits: its own capture first, else the team's. */
import type { Database } from "bun:sqlite";
import type { Entry } from "../../store/entry.ts";
import type { RepoPaths } from "../repo.ts";
import { teamEntries } from "../team/index.ts";
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
