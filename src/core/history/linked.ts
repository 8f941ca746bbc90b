/** The views' access to links: a commit without an entry, looked up (or matched once) and shown through its parts. */
import type { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { linkOf, linkParts, partsForLines } from "../links/match.ts";
import type { LinkedView } from "./render-links.ts";
import { getEntries } from "./query.ts";

/** At most this many commits without an entry are matched in one view (the rest are shown plainly). */
export const MAX_LINKS_PER_VIEW = 20;

/** The linked view of a commit without an entry, or null when it contains no recorded change. */
export async function linkedView(db: Database, commonDir: string, hash: string): Promise<LinkedView | null> {
  const link = await linkOf({ db, commonDir }, hash);
  if (!link) return null;
  const entries = getEntries(db, link.parts.map((p) => p.commitHash));
  const parts = linkParts(link, entries).map((p) => p.entry);
  return parts.length ? { link, parts, forLines: null } : null;
}

/** The same, narrowed to the parts that wrote lines `start`..`end` of the working-tree file (repository path `path`). */
export function narrowToLines(view: LinkedView, path: string, absolute: string, start: number, end: number): LinkedView {
  let lines: string[];
  try {
    lines = readFileSync(absolute, "utf8").split("\n");
  } catch {
    return view;
  }
  return { ...view, forLines: partsForLines(path, lines, start, end, view.parts) };
}

/** Links for the commits of a view that have no entry, at most {@link MAX_LINKS_PER_VIEW} of them. */
export async function linkedViews(db: Database, commonDir: string, hashes: string[]): Promise<Map<string, LinkedView>> {
  const out = new Map<string, LinkedView>();
  for (const h of hashes.slice(0, MAX_LINKS_PER_VIEW)) {
    const view = await linkedView(db, commonDir, h);
    if (view) out.set(h, view);
  }
  return out;
}
