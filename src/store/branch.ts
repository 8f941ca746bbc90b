import { updateRefLocked, type LockOptions } from "./lock.ts";
import {
  findTreeEntry,
  MODE_BLOB,
  MODE_TREE,
  ObjectStore,
  parseCommit,
  serializeCommit,
  spliceTree,
  type CommitInfo,
  type TreeEntry,
} from "./objects.ts";
import { readRef } from "./refs.ts";

/*
 * Writing to aiflare's orphan branches: every write is one commit whose tree differs from its parent's only along
 * the edited paths, built from git objects alone (never the working tree, the index or HEAD).
 */

/** Where aiflare's branches live; the store only needs the common git dir. */
export interface StoreRepo {
  commonDir: string;
}

/** A change to a branch's tree: a path mapped to blob content (a string or bytes), or null to delete it. */
export type Edits = Map<string, string | Uint8Array | null>;

export interface Plan {
  edits: Edits;
  message: string;
}

/** A read-only view of a branch at one commit. */
export class Snapshot {
  constructor(
    readonly store: ObjectStore,
    readonly tip: string | null,
    readonly rootTree: string | null,
  ) {}

  /** The entries of the tree at `path` ("" for the root), or [] when it does not exist. */
  treeAt(path: string): readonly TreeEntry[] {
    const e = this.entryAt(path);
    return e?.mode === MODE_TREE ? this.store.readTree(e.hash) : [];
  }

  /** The hash of the blob at `path`, or null. */
  blobHashAt(path: string): string | null {
    const e = this.entryAt(path);
    return e && e.mode !== MODE_TREE ? e.hash : null;
  }

  /**
   * The entry at `path` ("" for the root tree), or null. Each tree on the way is only searched by name in its raw
   * bytes: nothing is parsed.
   */
  private entryAt(path: string): TreeEntry | null {
    if (!this.rootTree) return null;
    let e: TreeEntry | null = { mode: MODE_TREE, name: "", hash: this.rootTree };
    for (const part of path ? path.split("/") : []) {
      if (e.mode !== MODE_TREE) return null;
      e = findTreeEntry(this.store.read(e.hash, "tree").content, part);
      if (!e) return null;
    }
    return e;
  }

  /** The content of the blob at `path`, or null. */
  readBlob(path: string): Buffer | null {
    const hash = this.blobHashAt(path);
    return hash ? this.store.read(hash, "blob").content : null;
  }

  /** Commits from the tip backwards along first parents, at most `limit`. */
  *log(limit: number): Generator<CommitInfo & { hash: string }> {
    let hash = this.tip;
    for (let i = 0; hash && i < limit; i++) {
      const c = parseCommit(this.store.read(hash, "commit").content);
      yield { ...c, hash };
      hash = c.parents[0] ?? null;
    }
  }
}

/** Opens a snapshot of `ref` at its current tip. */
export function snapshot(store: ObjectStore, ref: string): Snapshot {
  const tip = readRef(store.commonDir, ref);
  return snapshotAt(store, tip);
}

/** Opens a snapshot of a branch at a given commit (null: the empty branch). */
export function snapshotAt(store: ObjectStore, tip: string | null): Snapshot {
  const rootTree = tip ? parseCommit(store.read(tip, "commit").content).tree : null;
  return new Snapshot(store, tip, rootTree);
}

/**
 * Applies path edits below a tree; returns the new tree hash, or null when the tree ends up empty. Each tree on
 * the way is changed in its raw bytes (`spliceTree`), so a large fan-out tree costs a scan, not a rewrite.
 */
function editTree(store: ObjectStore, treeHash: string | null, edits: [string[], string | null][]): string | null {
  const content = treeHash ? store.read(treeHash, "tree").content : EMPTY_TREE;
  const groups = new Map<string, [string[], string | null][]>();
  for (const [parts, blob] of edits) {
    const [head, ...rest] = parts;
    if (!head) continue;
    let g = groups.get(head);
    if (!g) groups.set(head, (g = []));
    g.push([rest, blob]);
  }
  const changes = new Map<string, TreeEntry | null>();
  for (const [name, group] of groups) {
    const leaf = group.find(([rest]) => rest.length === 0);
    if (leaf) {
      changes.set(name, leaf[1] === null ? null : { mode: MODE_BLOB, name, hash: leaf[1] });
      continue;
    }
    const current = findTreeEntry(content, name);
    const sub = editTree(store, current?.mode === MODE_TREE ? current.hash : null, group);
    changes.set(name, sub === null ? null : { mode: MODE_TREE, name, hash: sub });
  }
  const out = spliceTree(content, changes);
  if (out.length === 0) return null;
  return store.write("tree", out);
}

const EMPTY_TREE = Buffer.alloc(0);

/** Builds the commit a plan describes on top of `snap`, or null when it changes nothing. */
function buildCommit(snap: Snapshot, plan: Plan | null): string | null {
  if (!plan || plan.edits.size === 0) return null;
  const store = snap.store;
  const edits: [string[], string | null][] = [];
  for (const [path, content] of plan.edits) {
    const blob = content === null ? null : store.write("blob", typeof content === "string" ? Buffer.from(content, "utf8") : content);
    edits.push([path.split("/"), blob]);
  }
  const tree = editTree(store, snap.rootTree, edits) ?? store.write("tree", Buffer.alloc(0));
  if (tree === snap.rootTree) return null;
  return store.write("commit", serializeCommit(tree, snap.tip ? [snap.tip] : [], plan.message));
}

/**
 * Commits a plan to `ref`. The plan is made from the current tip; if another writer moved the ref meanwhile,
 * it is made again from the new tip while holding the ref's lock, so no concurrent write is lost.
 * Returns the new commit, or null when nothing changed.
 */
export async function commitPlan(
  repo: StoreRepo,
  ref: string,
  makePlan: (snap: Snapshot) => Plan | null,
  lock?: LockOptions,
): Promise<string | null> {
  const store = new ObjectStore(repo.commonDir);
  try {
    const first = snapshot(store, ref);
    const optimistic = buildCommit(first, makePlan(first));
    // objects go to disk before the lock is taken, so the lock is held only for the ref update itself
    await store.flush();
    return await updateRefLocked(
      repo.commonDir,
      ref,
      async (current) => {
        if (current === first.tip) return optimistic;
        const snap = snapshotAt(store, current);
        const rebuilt = buildCommit(snap, makePlan(snap));
        await store.flush();
        return rebuilt;
      },
      lock,
    );
  } finally {
    store.close();
  }
}
