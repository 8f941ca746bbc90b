/**
 * The fingerprint of a commit's change (SPEC §13): what recognises the change once the commit itself is gone (a
 * squash merge, a rebase-merge, a branch deleted and garbage-collected).
 *
 * - `patchId`: git's stable patch id of the commit's diff against its first parent (identical for a cherry-pick
 *   or a rebased copy of the same change). It costs two git processes, so the commit hook leaves it out and
 *   `aiflare capture` (or the first link computed while the commit exists) makes the fingerprint again from
 *   the commit's patch, patch id included.
 * - `files`: per changed file, the hashes of the normalised lines the commit added (`add`) and removed (`del`):
 *   the commit hook reads the two versions of each file in-process (a line counts as added when the new version
 *   has it more often than the old one); from the patch, lines that only moved count too.
 *   each line with all its whitespace removed, lines shorter than {@link MIN_LINE_CHARS} left out (braces, blank
 *   lines: they say nothing about who wrote them), hashed to the first 24 bits of its SHA-1, sorted, distinct,
 *   packed as 3 bytes each and written in base64url.
 * - When a commit adds or removes more lines than the caps, only the smallest hashes are kept (a bottom-k sketch)
 *   and `addMax` / `delMax` say up to which hash value the sets are complete.
 */
import { findTreeEntry, MODE_TREE, ObjectStore, parseCommit } from "../../store/objects.ts";
import { execGit } from "../../util/git.ts";
import { diffTrees } from "../capture/facts.ts";

/** Version of the fingerprint's form. */
export const FINGERPRINT_VERSION = 1;
/** A normalised line shorter than this is not fingerprinted. */
export const MIN_LINE_CHARS = 4;
/** At most this many added-line hashes per entry (about 4 characters each). */
export const MAX_ADDED = 120;
/** At most this many removed-line hashes per entry. */
export const MAX_REMOVED = 24;
/** Files larger than this are not read for their lines. */
const MAX_FILE_BYTES = 1 << 20;

/** One file's fingerprint: packed sorted 24-bit hashes of its added and removed lines. */
export interface FileFingerprint {
  path: string;
  add: string;
  del: string;
}

/** What an entry stores as `fingerprint`. */
export interface Fingerprint {
  v: number;
  /** absent until computed (see above) */
  patchId?: string;
  files: FileFingerprint[];
  /** the largest hash kept when the added lines were sampled (absent: every added line is there) */
  addMax?: number;
  delMax?: number;
}

/** A commit's change read in full: the lines it added and removed, per file, as hashes. */
export interface ChangeLines {
  files: Map<string, { add: Set<number>; del: Set<number> }>;
}

/** A line as fingerprinted: without any whitespace; "" when too short to say anything. */
export function normaliseLine(line: string): string {
  const s = line.replace(/\s+/g, "");
  return s.length >= MIN_LINE_CHARS ? s : "";
}

/** The 24-bit hash of a normalised line. */
export function lineHash(normalised: string): number {
  const d = new Bun.CryptoHasher("sha1").update(normalised).digest();
  return (d[0]! << 16) | (d[1]! << 8) | d[2]!;
}

/** The hash of a raw line, or null when the line is too short to fingerprint. */
export function hashOfLine(line: string): number | null {
  const n = normaliseLine(line);
  return n ? lineHash(n) : null;
}

/** git's C-quoted path form (`"a\tb"`) undone for the common cases; plain paths as they are. */
function diffPath(raw: string, prefix: string): string {
  let p = raw;
  if (p.startsWith('"') && p.endsWith('"')) p = JSON.parse(p.replace(/\\([0-7]{3})/g, (_, o) => `\\u00${parseInt(o, 8).toString(16).padStart(2, "0")}`)) as string;
  return p.startsWith(prefix) ? p.slice(prefix.length) : p;
}

/** Reads a unified diff (`git diff-tree -p`) into per-file sets of added and removed line hashes. */
export function linesOfPatch(patch: string): ChangeLines {
  const files = new Map<string, { add: Set<number>; del: Set<number> }>();
  let current: { add: Set<number>; del: Set<number> } | null = null;
  let inHunk = false;
  let minus = "";
  for (const line of patch.split("\n")) {
    if (line.startsWith("diff --git ")) {
      current = null;
      inHunk = false;
      continue;
    }
    if (!inHunk) {
      if (line.startsWith("--- ")) minus = line.slice(4);
      else if (line.startsWith("+++ ")) {
        const plus = line.slice(4);
        const path = plus === "/dev/null" ? diffPath(minus, "a/") : diffPath(plus, "b/");
        current = files.get(path) ?? { add: new Set(), del: new Set() };
        files.set(path, current);
      } else if (line.startsWith("@@") && current) inHunk = true;
      continue;
    }
    if (line.startsWith("@@")) continue;
    const c = line[0];
    if (c === "+" || c === "-") {
      const h = hashOfLine(line.slice(1));
      if (h !== null) (c === "+" ? current!.add : current!.del).add(h);
    } else if (c !== " " && c !== "\\") {
      inHunk = false;
    }
  }
  return { files };
}

/** Packs sorted hashes as base64url, 3 bytes each. */
export function packHashes(hashes: number[]): string {
  const bytes = new Uint8Array(hashes.length * 3);
  hashes.forEach((h, i) => {
    bytes[i * 3] = (h >> 16) & 255;
    bytes[i * 3 + 1] = (h >> 8) & 255;
    bytes[i * 3 + 2] = h & 255;
  });
  return Buffer.from(bytes).toString("base64url");
}

/** Unpacks what {@link packHashes} wrote; a malformed text gives no hashes. */
export function unpackHashes(text: string): Set<number> {
  const out = new Set<number>();
  if (typeof text !== "string") return out;
  const bytes = Buffer.from(text, "base64url");
  for (let i = 0; i + 2 < bytes.length; i += 3) out.add((bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!);
  return out;
}

/** The `cap` smallest values of all sets together; the largest kept, or undefined when all were kept. */
function bottomK(sets: Set<number>[], cap: number): { keep: Set<number>; max?: number } {
  const all = [...new Set(sets.flatMap((s) => [...s]))].sort((a, b) => a - b);
  if (all.length <= cap) return { keep: new Set(all) };
  const keep = all.slice(0, cap);
  return { keep: new Set(keep), max: keep[keep.length - 1] };
}

/** A fingerprint is made smaller (fewer hashes kept) until its JSON is at most this long: ~15% of a 5 KB entry. */
export const MAX_FINGERPRINT_CHARS = 720;

function fingerprintCapped(patchId: string | undefined, lines: ChangeLines, maxAdded: number, maxRemoved: number): Fingerprint {
  const entries = [...lines.files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const add = bottomK(entries.map(([, f]) => f.add), maxAdded);
  const del = bottomK(entries.map(([, f]) => f.del), maxRemoved);
  const files: FileFingerprint[] = [];
  for (const [path, f] of entries) {
    const a = [...f.add].filter((h) => add.keep.has(h)).sort((x, y) => x - y);
    const d = [...f.del].filter((h) => del.keep.has(h)).sort((x, y) => x - y);
    if (a.length || d.length) files.push({ path, add: packHashes(a), del: packHashes(d) });
  }
  return {
    v: FINGERPRINT_VERSION,
    ...(patchId ? { patchId } : {}),
    files,
    ...(add.max !== undefined ? { addMax: add.max } : {}),
    ...(del.max !== undefined ? { delMax: del.max } : {}),
  };
}

/**
 * The stored fingerprint of a change: its patch id and the line hashes per file, at most {@link MAX_ADDED} and
 * {@link MAX_REMOVED} of them, fewer when many paths would make it longer than {@link MAX_FINGERPRINT_CHARS}.
 */
export function fingerprintOf(patchId: string | undefined, lines: ChangeLines): Fingerprint {
  let maxAdded = MAX_ADDED;
  let maxRemoved = MAX_REMOVED;
  for (;;) {
    const fp = fingerprintCapped(patchId, lines, maxAdded, maxRemoved);
    if (JSON.stringify(fp).length <= MAX_FINGERPRINT_CHARS || maxAdded <= 8) return fp;
    maxRemoved = Math.floor(maxRemoved / 2);
    maxAdded = Math.floor(maxAdded * 0.8);
  }
}

/** A commit's diff against its first parent (the empty tree for a root commit), as git prints it; null when gone. */
export async function commitPatch(commonDir: string, hash: string): Promise<string | null> {
  const r = await execGit(["--git-dir", commonDir, "diff-tree", "-p", "--no-color", "--no-ext-diff", "--no-textconv", "--root", "-m", "--first-parent", hash]);
  return r.code === 0 ? new TextDecoder().decode(r.stdout) : null;
}

/** git's stable patch id of a patch ("" for an empty one). */
export async function patchIdOf(patch: string): Promise<string> {
  if (!patch.includes("\ndiff --git ") && !patch.startsWith("diff --git ")) return "";
  const r = await execGit(["patch-id", "--stable"], { stdin: patch });
  return r.code === 0 ? (new TextDecoder().decode(r.stdout).split(" ", 1)[0] ?? "").trim() : "";
}

/** The blob at `path` in a tree, or null. */
function blobAt(store: ObjectStore, tree: string | null, path: string): Uint8Array | null {
  let hash = tree;
  let mode = MODE_TREE;
  for (const part of path.split("/")) {
    if (!hash || mode !== MODE_TREE) return null;
    const e = findTreeEntry(store.read(hash, "tree").content, part);
    if (!e) return null;
    hash = e.hash;
    mode = e.mode;
  }
  if (!hash || mode === MODE_TREE || mode === "160000") return null;
  return store.tryRead(hash)?.content ?? null;
}

/** Counts of a file's fingerprinted lines (hash → occurrences); empty for a binary or a very large file. */
function lineCounts(bytes: Uint8Array | null): Map<number, number> {
  const counts = new Map<number, number>();
  if (!bytes || bytes.length > MAX_FILE_BYTES || bytes.includes(0)) return counts;
  for (const line of new TextDecoder().decode(bytes).split("\n")) {
    const h = hashOfLine(line);
    if (h !== null) counts.set(h, (counts.get(h) ?? 0) + 1);
  }
  return counts;
}

/** The lines a commit added and removed against its first parent, per file, read from the objects (no git process). */
export function changeLinesOf(store: ObjectStore, hash: string): ChangeLines | null {
  const obj = store.tryRead(hash);
  if (obj?.type !== "commit") return null;
  const c = parseCommit(obj.content);
  const parentTree = c.parents[0] ? parseCommit(store.read(c.parents[0], "commit").content).tree : null;
  const files = new Map<string, { add: Set<number>; del: Set<number> }>();
  for (const path of diffTrees(store, parentTree, c.tree).sort()) {
    const before = lineCounts(blobAt(store, parentTree, path));
    const after = lineCounts(blobAt(store, c.tree, path));
    const add = new Set<number>();
    const del = new Set<number>();
    for (const [h, n] of after) if (n > (before.get(h) ?? 0)) add.add(h);
    for (const [h, n] of before) if (n > (after.get(h) ?? 0)) del.add(h);
    files.set(path, { add, del });
  }
  return { files };
}

/**
 * The whole change of a commit, from its patch: the patch id and every added and removed line's hash (a line
 * that only moved counts, as git's diff and blame see it). Null when the commit is gone.
 */
export async function readChange(commonDir: string, hash: string): Promise<{ patchId: string; lines: ChangeLines } | null> {
  const patch = await commitPatch(commonDir, hash);
  if (patch === null) return null;
  return { patchId: await patchIdOf(patch), lines: linesOfPatch(patch) };
}

/** The fingerprint the commit hook stores: the line hashes only (no git process). Null when the commit is gone. */
export function quickFingerprint(store: ObjectStore, hash: string): Fingerprint | null {
  const lines = changeLinesOf(store, hash);
  return lines ? fingerprintOf(undefined, lines) : null;
}

/** The commit hook's fingerprint as an entry field; none when the commit cannot be read (a capture goes on). */
export function fingerprintField(store: ObjectStore, hash: string): { fingerprint?: Fingerprint } {
  try {
    const fp = quickFingerprint(store, hash);
    return fp ? { fingerprint: fp } : {};
  } catch {
    return {};
  }
}

/** The whole fingerprint of `hash`, patch id included; null when the commit cannot be read. */
export async function fingerprintCommit(commonDir: string, hash: string): Promise<Fingerprint | null> {
  const change = await readChange(commonDir, hash);
  return change ? fingerprintOf(change.patchId, change.lines) : null;
}

/**
 * An entry's whole fingerprint: `current` when it has its patch id, else made again from the commit's patch (the
 * patch id, and lines that only moved, which the commit hook's quick fingerprint leaves out). `current` when the
 * commit cannot be read.
 */
export async function completeFingerprint(commonDir: string, hash: string, current?: Fingerprint): Promise<Fingerprint | undefined> {
  if (current?.patchId) return current;
  try {
    return (await fingerprintCommit(commonDir, hash)) ?? current;
  } catch {
    return current;
  }
}

/** A stored fingerprint read back into sets (unknown or malformed fields give empty sets). */
export function readFingerprint(value: unknown): (ChangeLines & { patchId: string; addMax?: number; delMax?: number }) | null {
  const fp = value as Partial<Fingerprint> | undefined;
  if (!fp || typeof fp !== "object" || !Array.isArray(fp.files)) return null;
  const files = new Map<string, { add: Set<number>; del: Set<number> }>();
  for (const f of fp.files) {
    if (!f || typeof f.path !== "string") continue;
    files.set(f.path, { add: unpackHashes(f.add), del: unpackHashes(f.del) });
  }
  return {
    files,
    patchId: typeof fp.patchId === "string" ? fp.patchId : "",
    addMax: typeof fp.addMax === "number" ? fp.addMax : undefined,
    delMax: typeof fp.delMax === "number" ? fp.delMax : undefined,
  };
}
