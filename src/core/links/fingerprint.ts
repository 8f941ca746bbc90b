/**
 * The fingerprint of a commit's change (SPEC §13): what recognises the change once the commit itself is gone (a
 * squash merge, a rebase-merge, a branch deleted and garbage-collected).
 *
 * - `patchId`: git's stable patch id of the commit's diff against its first parent (identical for a cherry-pick
 *   or a rebased copy of the same change).
 * - `files`: per changed file, the hashes of the normalised lines the commit added (`add`) and removed (`del`):
 *   each line with all its whitespace removed, lines shorter than {@link MIN_LINE_CHARS} left out (braces, blank
 *   lines: they say nothing about who wrote them), hashed to the first 24 bits of its SHA-1, sorted, distinct,
 *   packed as 3 bytes each and written in base64url.
 * - When a commit adds or removes more lines than the caps, only the smallest hashes are kept (a bottom-k sketch)
 *   and `addMax` / `delMax` say up to which hash value the sets are complete.
 */
import { execGit } from "../../util/git.ts";

/** Version of the fingerprint's form. */
export const FINGERPRINT_VERSION = 1;
/** A normalised line shorter than this is not fingerprinted. */
export const MIN_LINE_CHARS = 4;
/** At most this many added-line hashes per entry (about 4 characters each). */
export const MAX_ADDED = 144;
/** At most this many removed-line hashes per entry. */
export const MAX_REMOVED = 48;

/** One file's fingerprint: packed sorted 24-bit hashes of its added and removed lines. */
export interface FileFingerprint {
  path: string;
  add: string;
  del: string;
}

/** What an entry stores as `fingerprint`. */
export interface Fingerprint {
  v: number;
  patchId: string;
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

/** The stored fingerprint of a change: its patch id and the (capped) line hashes per file. */
export function fingerprintOf(patchId: string, lines: ChangeLines): Fingerprint {
  const entries = [...lines.files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const add = bottomK(entries.map(([, f]) => f.add), MAX_ADDED);
  const del = bottomK(entries.map(([, f]) => f.del), MAX_REMOVED);
  const files: FileFingerprint[] = [];
  for (const [path, f] of entries) {
    const a = [...f.add].filter((h) => add.keep.has(h)).sort((x, y) => x - y);
    const d = [...f.del].filter((h) => del.keep.has(h)).sort((x, y) => x - y);
    if (a.length || d.length) files.push({ path, add: packHashes(a), del: packHashes(d) });
  }
  return {
    v: FINGERPRINT_VERSION,
    patchId,
    files,
    ...(add.max !== undefined ? { addMax: add.max } : {}),
    ...(del.max !== undefined ? { delMax: del.max } : {}),
  };
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

/** The whole change of a commit: its patch id and every added and removed line's hash. Null when the commit is gone. */
export async function readChange(commonDir: string, hash: string): Promise<{ patchId: string; lines: ChangeLines } | null> {
  const patch = await commitPatch(commonDir, hash);
  if (patch === null) return null;
  return { patchId: await patchIdOf(patch), lines: linesOfPatch(patch) };
}

/** The fingerprint an entry of `hash` stores; null when the commit cannot be read. Two git processes. */
export async function fingerprintCommit(commonDir: string, hash: string): Promise<Fingerprint | null> {
  const change = await readChange(commonDir, hash);
  return change ? fingerprintOf(change.patchId, change.lines) : null;
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
