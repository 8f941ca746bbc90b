/**
 * The fingerprint of a commit's change (SPEC §13): what recognises the change once the commit itself is gone (a
 * squash merge, a rebase-merge, a branch deleted and garbage-collected).
 *
 * - `patchId`: git's stable patch id of the commit's diff against its first parent (identical for a cherry-pick
 *   or a rebased copy of the same change). It costs two git processes, so the commit hook leaves it to the capture
 *   worker, which writes the commit's first entry with the fingerprint made from the commit's patch, patch id
 *   included; `aiflare capture` (or the first link computed while the commit exists) makes it for an entry without.
 * - `files`: per changed file, the hashes of the normalised lines the commit added (`add`) and removed (`del`):
 *   the commit hook reads the two versions of each file in-process (a line counts as added when the new version
 *   has it more often than the old one); from the patch, lines that only moved count too.
 *   Each line with all its whitespace removed, lines shorter than {@link MIN_LINE_CHARS} left out (braces, blank
 *   lines: they say nothing about who wrote them), hashed to the first 24 bits of its SHA-1, cut to the top `bits`
 *   bits, and stored as a Golomb-Rice coded set ({@link encodeSet}): every added line is kept, at about
 *   bits − log2(lines) + 1.5 bits each, so the line attribution of a squash sees each line of each part.
 * - `bits` is the largest (24 down to {@link MIN_BITS}) that keeps the fingerprint within its size cap; removed
 *   lines, which only help recognise a part, keep at most {@link MAX_REMOVED} hashes (`delMax`: up to which value
 *   the set is complete). Only a change too large even at {@link MIN_BITS} keeps its smallest added hashes (`addMax`).
 */
import { findTreeEntry, MODE_TREE, ObjectStore, parseCommit } from "../../store/objects.ts";
import { execGit, execGitCapped } from "../../util/git.ts";
import { diffTrees } from "../capture/facts.ts";

/** Version of the fingerprint's form. */
export const FINGERPRINT_VERSION = 2;
/** A normalised line shorter than this is not fingerprinted. */
export const MIN_LINE_CHARS = 4;
/** At most this many removed-line hashes per entry. */
export const MAX_REMOVED = 24;
/** Files larger than this are not read for their lines. */
const MAX_FILE_BYTES = 1 << 20;

/** One file's fingerprint: the sets of its added and removed lines' hashes (see {@link encodeSet}). */
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
  /** how many top bits of each line's 24-bit hash are kept (version 2; version 1 kept all 24) */
  bits?: number;
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

/** Packs sorted hashes as base64url, 3 bytes each (version 1's form, still read). */
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

/**
 * Encodes sorted distinct values as a Golomb-Rice coded set, in base64url: one byte for the Rice parameter k, the
 * count as a varint, then each gap to the previous value as its quotient (gap >> k) in unary and its k low bits.
 * A set of n values below 2^b costs about b − log2(n) + 1.5 bits a value.
 */
export function encodeSet(values: number[]): string {
  const n = values.length;
  if (n === 0) return "";
  const gaps = values.map((x, i) => x - (i ? values[i - 1]! : 0));
  let k = 0;
  let best = Infinity;
  for (let t = 0; t < 25; t++) {
    let cost = 0;
    for (const g of gaps) cost += (g >>> t) + 1 + t;
    if (cost < best) [best, k] = [cost, t];
  }
  const head: number[] = [k];
  for (let c = n; ; c >>>= 7) {
    if (c < 128) {
      head.push(c);
      break;
    }
    head.push((c & 127) | 128);
  }
  const bytes = new Uint8Array(head.length + Math.ceil(best / 8));
  bytes.set(head);
  let bit = head.length * 8;
  const one = () => {
    bytes[bit >>> 3]! |= 128 >>> (bit & 7);
  };
  for (const g of gaps) {
    for (let q = g >>> k; q > 0; q--, bit++) one();
    bit++; // the unary's closing 0
    for (let b = k - 1; b >= 0; b--, bit++) if ((g >>> b) & 1) one();
  }
  return Buffer.from(bytes).toString("base64url");
}

/** Decodes what {@link encodeSet} wrote; a malformed text gives what could be read of it. */
export function decodeSet(text: string): Set<number> {
  const out = new Set<number>();
  if (typeof text !== "string" || !text) return out;
  const bytes = Buffer.from(text, "base64url");
  const k = bytes[0] ?? 0;
  if (k > 24) return out;
  let n = 0;
  let i = 1;
  for (let shift = 0; i < bytes.length && shift < 28; shift += 7) {
    const b = bytes[i++]!;
    n |= (b & 127) << shift;
    if (b < 128) break;
  }
  const end = bytes.length * 8;
  let bit = i * 8;
  const read = () => (bytes[bit >>> 3]! >>> (7 - (bit++ & 7))) & 1;
  let value = 0;
  for (let c = 0; c < n && bit < end; c++) {
    let q = 0;
    while (bit < end && read()) q++;
    let r = 0;
    for (let b = 0; b < k && bit < end; b++) r = (r << 1) | read();
    value += q * 2 ** k + r;
    out.add(value);
  }
  return out;
}

/**
 * A file's stored line hashes as read back: the {@link lineHash} values cut to their top `bits` bits. `has` takes a
 * whole 24-bit line hash; with n lines of a file kept, a line it does not hold is taken for one with a chance of
 * n / 2^bits.
 */
export class LineSketch {
  constructor(
    readonly bits: number,
    readonly values: Set<number>,
  ) {}
  has(hash: number): boolean {
    return this.values.has(hash >>> (24 - this.bits));
  }
  get size(): number {
    return this.values.size;
  }
}

/** The `cap` smallest values of all sets together; the largest kept, or undefined when all were kept. */
function bottomK(sets: Set<number>[], cap: number): { keep: Set<number>; max?: number } {
  const all = [...new Set(sets.flatMap((s) => [...s]))].sort((a, b) => a - b);
  if (all.length <= cap) return { keep: new Set(all) };
  const keep = all.slice(0, cap);
  return { keep: new Set(keep), max: keep[keep.length - 1] };
}

/** A fingerprint is made smaller (shorter hashes, then fewer) until its JSON is at most this long: ~15% of a 5 KB entry. */
export const MAX_FINGERPRINT_CHARS = 720;
/** Line hashes are cut to no fewer bits than this; a change too large even then keeps only its smallest hashes. */
export const MIN_BITS = 14;

/** Each set's values cut to `bits` bits, sorted and distinct. */
function cut(set: Set<number>, bits: number): number[] {
  return [...new Set([...set].map((h) => h >>> (24 - bits)))].sort((x, y) => x - y);
}

function fingerprintCapped(patchId: string | undefined, lines: ChangeLines, bits: number, maxAdded: number, maxRemoved: number): Fingerprint {
  const entries = [...lines.files]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([path, f]) => ({ path, add: cut(f.add, bits), del: cut(f.del, bits) }));
  const add = bottomK(entries.map((f) => new Set(f.add)), maxAdded);
  const del = bottomK(entries.map((f) => new Set(f.del)), maxRemoved);
  const files: FileFingerprint[] = [];
  for (const f of entries) {
    const a = f.add.filter((h) => add.keep.has(h));
    const d = f.del.filter((h) => del.keep.has(h));
    if (a.length || d.length) files.push({ path: f.path, add: encodeSet(a), del: encodeSet(d) });
  }
  return {
    v: FINGERPRINT_VERSION,
    ...(patchId ? { patchId } : {}),
    bits,
    files,
    ...(add.max !== undefined ? { addMax: add.max } : {}),
    ...(del.max !== undefined ? { delMax: del.max } : {}),
  };
}

/**
 * The stored fingerprint of a change: its patch id and, per file, every added line's hash and at most
 * {@link MAX_REMOVED} removed lines' hashes, as compact sets. The hashes are cut to as many bits (24 down to
 * {@link MIN_BITS}) as keep the JSON within {@link MAX_FINGERPRINT_CHARS}; only a change too large even then keeps
 * the smallest of its added lines' hashes (`addMax`).
 */
export function fingerprintOf(patchId: string | undefined, lines: ChangeLines): Fingerprint {
  const fits = (fp: Fingerprint) => JSON.stringify(fp).length <= MAX_FINGERPRINT_CHARS;
  for (let bits = 24; bits > MIN_BITS; bits--) {
    const fp = fingerprintCapped(patchId, lines, bits, Infinity, MAX_REMOVED);
    if (fits(fp)) return fp;
  }
  let maxAdded = Infinity;
  let maxRemoved = MAX_REMOVED;
  for (;;) {
    const fp = fingerprintCapped(patchId, lines, MIN_BITS, maxAdded, maxRemoved);
    const kept = fp.files.reduce((n, f) => n + decodeSet(f.add).size, 0);
    if (fits(fp) || kept <= 8) return fp;
    maxAdded = Math.floor(kept * 0.8);
    maxRemoved = Math.floor(maxRemoved / 2);
  }
}

/**
 * A commit's diff against its first parent (the empty tree for a root commit), as git prints it; null when gone, or
 * when longer than `maxBytes` (git is then stopped: a change of huge generated files costs no more memory than that).
 */
export async function commitPatch(commonDir: string, hash: string, maxBytes?: number): Promise<string | null> {
  const args = ["--git-dir", commonDir, "diff-tree", "-p", "--no-color", "--no-ext-diff", "--no-textconv", "--root", "-m", "--first-parent", hash];
  if (maxBytes !== undefined) {
    const r = await execGitCapped(args, maxBytes);
    return r.code === 0 && !r.truncated ? new TextDecoder().decode(r.stdout) : null;
  }
  const r = await execGit(args);
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
export async function readChange(commonDir: string, hash: string, maxBytes?: number): Promise<{ patchId: string; lines: ChangeLines } | null> {
  const patch = await commitPatch(commonDir, hash, maxBytes);
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

/** The whole fingerprint of `hash`, patch id included; null when the commit cannot be read (or its patch is over `maxBytes`). */
export async function fingerprintCommit(commonDir: string, hash: string, maxBytes?: number): Promise<Fingerprint | null> {
  const change = await readChange(commonDir, hash, maxBytes);
  return change ? fingerprintOf(change.patchId, change.lines) : null;
}

/**
 * An entry's whole fingerprint: `current` when it has its patch id, else made again from the commit's patch (the
 * patch id, and lines that only moved, which the commit hook's quick fingerprint leaves out). `current` when the
 * commit cannot be read (or its patch is over `maxBytes`).
 */
export async function completeFingerprint(commonDir: string, hash: string, current?: Fingerprint, maxBytes?: number): Promise<Fingerprint | undefined> {
  if (current?.patchId) return current;
  try {
    return (await fingerprintCommit(commonDir, hash, maxBytes)) ?? current;
  } catch {
    return current;
  }
}

/** A stored fingerprint as the matcher reads it: per file, the sketches of its added and removed lines. */
export interface StoredLines {
  files: Map<string, { add: LineSketch; del: LineSketch }>;
  patchId: string;
  addMax?: number;
  delMax?: number;
}

/** A stored fingerprint read back (version 1's packed 24-bit hashes or version 2's sets); null when it is none. */
export function readFingerprint(value: unknown): StoredLines | null {
  const fp = value as Partial<Fingerprint> | undefined;
  if (!fp || typeof fp !== "object" || !Array.isArray(fp.files)) return null;
  const v1 = fp.v === 1;
  const bits = v1 ? 24 : typeof fp.bits === "number" && fp.bits >= 1 && fp.bits <= 24 ? fp.bits : 24;
  const read = (text: string) => new LineSketch(bits, v1 ? unpackHashes(text) : decodeSet(text));
  const files = new Map<string, { add: LineSketch; del: LineSketch }>();
  for (const f of fp.files) {
    if (!f || typeof f.path !== "string") continue;
    files.set(f.path, { add: read(f.add), del: read(f.del) });
  }
  return {
    files,
    patchId: typeof fp.patchId === "string" ? fp.patchId : "",
    addMax: typeof fp.addMax === "number" ? fp.addMax : undefined,
    delMax: typeof fp.delMax === "number" ? fp.delMax : undefined,
  };
}
