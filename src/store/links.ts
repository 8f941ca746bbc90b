/**
 * Links from a landed commit with no entry of its own (a squash merge, a rebase-merge or cherry-pick copy, a
 * forge's web merge) to the entries whose changes it contains. One compact JSON file per commit on the timeline
 * branch at `links/<2 hex>/<38 hex>.json`, written like entries (one atomic timeline commit, under the ref lock).
 */
import * as v from "valibot";
import { FULL_HASH_RE, isFullHash } from "../util/ids.ts";
import { commitPlan, snapshot, type StoreRepo } from "./branch.ts";
import { MODE_TREE, ObjectStore } from "./objects.ts";
import { TIMELINE_REF } from "./refs.ts";

const Hash = v.pipe(v.string(), v.regex(FULL_HASH_RE, "a full 40-hex commit hash"));

/** How a part was recognised: the same patch (rebase, cherry-pick) or its lines (squash). */
export const LINK_METHODS = ["patch-id", "lines"] as const;

/** A link: the commit, the entries it contains (oldest first), and how much of its added lines they explain. */
export const LinkSchema = v.looseObject({
  commitHash: Hash,
  /** "patch-id" when every part is an identical patch, "squash" when lines matched, "none" when nothing did */
  method: v.picklist(["patch-id", "squash", "none"]),
  parts: v.array(
    v.looseObject({
      commitHash: Hash,
      method: v.picklist(LINK_METHODS),
      /** how many of the commit's added lines this part wrote */
      lines: v.number(),
    }),
  ),
  /** share of the commit's fingerprinted added lines the parts explain, 0..1 */
  coverage: v.number(),
  computedAt: v.string(),
});

export type Link = v.InferOutput<typeof LinkSchema>;

/** Path of a commit's link inside the timeline tree. */
export function linkPath(commitHash: string): string {
  return `links/${commitHash.slice(0, 2)}/${commitHash.slice(2)}.json`;
}

/** Matches a link path: the commit's hash in groups 1 and 2. */
export const LINK_PATH_RE = /^links\/([0-9a-f]{2})\/([0-9a-f]{38})\.json$/;

/** Reads a link JSON text; null when it is not one. */
export function parseLink(text: string): Link | null {
  try {
    const r = v.safeParse(LinkSchema, JSON.parse(text));
    return r.success ? r.output : null;
  } catch {
    return null;
  }
}

/** The link of a commit stored on the timeline branch, or null. */
export function readLink(repo: StoreRepo, commitHash: string): Link | null {
  if (!isFullHash(commitHash)) return null;
  const store = new ObjectStore(repo.commonDir);
  try {
    const buf = snapshot(store, TIMELINE_REF).readBlob(linkPath(commitHash));
    return buf ? parseLink(buf.toString("utf8")) : null;
  } finally {
    store.close();
  }
}

/** Writes a link (insert or replace) as one timeline commit. Link files hold hashes and numbers only. */
export async function writeLink(repo: StoreRepo, link: Link): Promise<void> {
  const parsed = v.parse(LinkSchema, link);
  await commitPlan(repo, TIMELINE_REF, (snap) => {
    const text = `${JSON.stringify(parsed)}\n`;
    if (snap.readBlob(linkPath(parsed.commitHash))?.toString("utf8") === text) return null;
    return {
      edits: new Map([[linkPath(parsed.commitHash), text]]),
      message: `aiflare: link ${parsed.commitHash.slice(0, 12)} to ${parsed.parts.length} entr${parsed.parts.length === 1 ? "y" : "ies"}\n\nLink: ${parsed.commitHash}\nAction: link\n`,
    };
  });
}

/**
 * Every link on the timeline branch as stored JSON text, with the version of the whole `links/` tree (its tree id;
 * "" when there are none): what `sync` sends, and how it tells whether anything changed since.
 */
export function listLinks(repo: StoreRepo): { version: string; texts: string[] } {
  const store = new ObjectStore(repo.commonDir);
  try {
    const snap = snapshot(store, TIMELINE_REF);
    const top = snap.treeAt("").find((e) => e.name === "links" && e.mode === MODE_TREE);
    if (!top) return { version: "", texts: [] };
    const texts: string[] = [];
    for (const dir of store.readTree(top.hash)) {
      if (dir.mode !== MODE_TREE) continue;
      for (const f of store.readTree(dir.hash)) {
        if (!f.name.endsWith(".json")) continue;
        const obj = store.tryRead(f.hash);
        if (obj?.type === "blob") texts.push(obj.content.toString("utf8").trim());
      }
    }
    return { version: top.hash, texts };
  } finally {
    store.close();
  }
}
