import {
  closeSync,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { AiflareError } from "../errors.ts";
import { gitSyncRaw, parseCatFileBatch } from "../util/git.ts";
import { isFullHash } from "../util/ids.ts";

/*
 * The git object database of a repository (`<common dir>/objects`).
 *
 * Objects are written here too, atomically the way git does it (a temporary file, then linked into place),
 * so a process killed mid-write never leaves a truncated object that later writes would skip as "already
 * there". New objects of one change are staged in memory and flushed together before the ref moves.
 *
 * Objects are read here rather than with isomorphic-git's readObject, which loads a whole packfile into
 * memory on first access (hundreds of MB in a large repository): loose objects directly, packed ones with
 * positioned reads through the pack index, so memory does not grow with the size of the user's packs.
 */

export type ObjectType = "commit" | "tree" | "blob" | "tag";

export interface GitObject {
  type: ObjectType;
  content: Buffer;
}

const TYPE_BY_CODE: Record<number, ObjectType> = { 1: "commit", 2: "tree", 3: "blob", 4: "tag" };

/**
 * Inflates a zlib stream (bytes after its end are ignored); throws on a truncated or corrupt one. Bun's own
 * zlib binding: node:zlib costs tens of milliseconds to load, on every hook that reads an object.
 */
function inflate(data: Uint8Array): Buffer {
  const out = Bun.inflateSync(data as Uint8Array<ArrayBuffer>, { windowBits: 15 });
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}

/** SHA-1 of a git object with the given type and content. */
export function hashObject(type: ObjectType, content: Uint8Array): string {
  const h = new Bun.CryptoHasher("sha1");
  h.update(`${type} ${content.byteLength}\0`);
  h.update(content);
  return h.digest("hex");
}

interface PackIndex {
  idxPath: string;
  packPath: string;
  fd: number;
  packFd: number;
  count: number;
  fanout: Uint32Array;
  /** the sorted names of each first byte, read on first use (one read per bucket) */
  buckets: Map<number, Buffer>;
}

/**
 * What one process has read of a repository's objects, shared by every ObjectStore on it: open packs,
 * trees and commits by hash, and resolved pack entries by position (delta bases are read once).
 */
interface RepoCache {
  packs: PackIndex[] | undefined;
  /** parsed trees by hash (callers do not modify them), sized by their entries */
  trees: CappedCache<readonly TreeEntry[]>;
  /** trees and commits by hash, sized in bytes */
  objects: CappedCache<GitObject>;
  /** resolved pack entries by pack and offset, sized in bytes */
  packed: CappedCache<GitObject>;
}

/** A map emptied at once when what it holds would grow past `cap` (each value's size is the caller's measure). */
class CappedCache<V> {
  private readonly map = new Map<string, V>();
  private held = 0;
  constructor(private readonly cap: number) {}

  get(key: string): V | undefined {
    return this.map.get(key);
  }

  set(key: string, value: V, size: number): void {
    if (this.held + size > this.cap) this.clear();
    this.map.set(key, value);
    this.held += size;
  }

  clear(): void {
    this.map.clear();
    this.held = 0;
  }
}

/** Caps on what the caches hold; each is emptied when it would grow past its cap. */
const OBJECT_CACHE_BYTES = 32 * 1024 * 1024;
const PACKED_CACHE_BYTES = 32 * 1024 * 1024;
/** Parsed tree entries kept (about 150 bytes each in memory). */
const TREE_CACHE_ENTRIES = 100_000;
/** Larger pack entries are not kept (a big blob is read once, not used as a base again and again). */
const PACKED_ENTRY_MAX = 4 * 1024 * 1024;

const CACHES = new Map<string, RepoCache>();

function repoCache(objectsDir: string): RepoCache {
  let c = CACHES.get(objectsDir);
  if (!c) {
    c = {
      packs: undefined,
      trees: new CappedCache(TREE_CACHE_ENTRIES),
      objects: new CappedCache(OBJECT_CACHE_BYTES),
      packed: new CappedCache(PACKED_CACHE_BYTES),
    };
    CACHES.set(objectsDir, c);
  }
  return c;
}

/** Reads of a zlib stream start with this much beyond the object's size; deflate grows data by less. */
function compressedBound(size: number): number {
  return size + (size >> 10) + 64;
}

/** Reads from a file at a position, returning the bytes actually read. */
function pread(fd: number, length: number, position: number): Buffer {
  const buf = Buffer.alloc(length);
  let off = 0;
  while (off < length) {
    const n = readSync(fd, buf, off, length - off, position + off);
    if (n <= 0) break;
    off += n;
  }
  return off === length ? buf : buf.subarray(0, off);
}

/** Applies a git delta to its base. */
export function applyDelta(base: Buffer, delta: Buffer): Buffer {
  let pos = 0;
  const varint = () => {
    let result = 0;
    let shift = 0;
    let byte;
    do {
      byte = delta[pos++]!;
      result += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return result;
  };
  const baseSize = varint();
  if (baseSize !== base.length) throw new Error("delta base size mismatch");
  const out = Buffer.alloc(varint());
  let o = 0;
  while (pos < delta.length) {
    const op = delta[pos++]!;
    if (op & 0x80) {
      let off = 0;
      let size = 0;
      for (let i = 0; i < 4; i++) if (op & (1 << i)) off += delta[pos++]! * 2 ** (8 * i);
      for (let i = 0; i < 3; i++) if (op & (1 << (4 + i))) size += delta[pos++]! << (8 * i);
      if (size === 0) size = 0x10000;
      base.copy(out, o, off, off + size);
      o += size;
    } else if (op > 0) {
      delta.copy(out, o, pos, pos + op);
      o += op;
      pos += op;
    } else {
      throw new Error("invalid delta opcode");
    }
  }
  if (o !== out.length) throw new Error("delta result size mismatch");
  return out;
}

/**
 * Reads and writes objects of one repository. Open packs and what was read are shared by all stores of the
 * repository in this process (see RepoCache).
 */
export class ObjectStore {
  readonly objectsDir: string;
  private shared: RepoCache;
  /** written by `write`, not yet on disk until `flush` */
  private staged = new Map<string, GitObject>();

  constructor(readonly commonDir: string) {
    this.objectsDir = join(commonDir, "objects");
    this.shared = repoCache(this.objectsDir);
  }

  /** Kept for callers that release a store; packs stay open for the process's other stores. */
  close(): void {}

  /** Closes the packs and forgets the list, so that the next read lists them again (a pack may have appeared). */
  private reopenPacks(): void {
    for (const p of this.shared.packs ?? []) {
      closeSync(p.fd);
      closeSync(p.packFd);
    }
    this.shared.packs = undefined;
    this.shared.packed.clear();
  }

  private loosePath(hash: string): string {
    return join(this.objectsDir, hash.slice(0, 2), hash.slice(2));
  }

  private readLoose(hash: string): GitObject | null {
    let raw: Buffer;
    try {
      raw = readFileSync(this.loosePath(hash));
    } catch {
      return null;
    }
    const data = inflate(raw);
    const nul = data.indexOf(0);
    const [type, size] = data.subarray(0, nul).toString("latin1").split(" ");
    const content = data.subarray(nul + 1);
    if (Number(size) !== content.length) throw new Error(`loose object ${hash} is corrupt`);
    return { type: type as ObjectType, content };
  }

  private loadPacks(): PackIndex[] {
    if (this.shared.packs) return this.shared.packs;
    const packs: PackIndex[] = [];
    const dir = join(this.objectsDir, "pack");
    let names: string[] = [];
    try {
      names = readdirSync(dir).filter((n) => n.endsWith(".idx"));
    } catch {
      names = [];
    }
    for (const name of names) {
      const idxPath = join(dir, name);
      const packPath = idxPath.replace(/\.idx$/, ".pack");
      let fd = -1;
      try {
        fd = openSync(idxPath, "r");
        const head = pread(fd, 8 + 256 * 4, 0);
        // version 2 only: "\377tOc" + 2; anything else is left to git
        if (head.readUInt32BE(0) !== 0xff744f63 || head.readUInt32BE(4) !== 2) {
          closeSync(fd);
          continue;
        }
        const fanout = new Uint32Array(256);
        for (let i = 0; i < 256; i++) fanout[i] = head.readUInt32BE(8 + i * 4);
        const packFd = openSync(packPath, "r");
        packs.push({ idxPath, packPath, fd, packFd, count: fanout[255]!, fanout, buckets: new Map() });
      } catch {
        if (fd >= 0) closeSync(fd);
      }
    }
    this.shared.packs = packs;
    return packs;
  }

  /** Finds an object's offset in a pack by binary search over the index's names that share its first byte. */
  private findInPack(p: PackIndex, hash: string): number | null {
    const want = Buffer.from(hash, "hex");
    const first = want[0]!;
    const start = first === 0 ? 0 : p.fanout[first - 1]!;
    const namesAt = 8 + 1024;
    let names = p.buckets.get(first);
    if (!names) {
      names = pread(p.fd, (p.fanout[first]! - start) * 20, namesAt + start * 20);
      p.buckets.set(first, names);
    }
    let lo = 0;
    let hi = names.length / 20;
    while (lo < hi) {
      const m = (lo + hi) >>> 1;
      const cmp = Buffer.compare(names.subarray(m * 20, m * 20 + 20), want);
      const mid = start + m;
      if (cmp === 0) {
        const offAt = namesAt + p.count * 24 + mid * 4;
        const off = pread(p.fd, 4, offAt).readUInt32BE(0);
        if (!(off & 0x80000000)) return off;
        const bigAt = namesAt + p.count * 28 + (off & 0x7fffffff) * 8;
        const big = pread(p.fd, 8, bigAt);
        return big.readUInt32BE(0) * 2 ** 32 + big.readUInt32BE(4);
      }
      if (cmp < 0) lo = m + 1;
      else hi = m;
    }
    return null;
  }

  /** Reads the object at `offset` of a pack, resolving delta chains; entries read before come from the cache. */
  private readPacked(p: PackIndex, offset: number, depth = 0): GitObject {
    const key = `${p.packPath}\0${offset}`;
    const hit = this.shared.packed.get(key);
    if (hit) return hit;
    const obj = this.readPackedUncached(p, offset, depth);
    if (obj.content.length <= PACKED_ENTRY_MAX) this.shared.packed.set(key, obj, obj.content.length);
    return obj;
  }

  private readPackedUncached(p: PackIndex, offset: number, depth: number): GitObject {
    if (depth > 64) throw new Error("delta chain too deep");
    // The entry header is at most 10 size bytes plus a 20-byte base name or a 10-byte base offset.
    const head = pread(p.packFd, 32, offset);
    let pos = 0;
    let byte = head[pos++]!;
    const code = (byte >> 4) & 7;
    let size = byte & 15;
    let shift = 4;
    while (byte & 0x80) {
      byte = head[pos++]!;
      size += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    }
    let baseOffset = -1;
    let baseHash = "";
    if (code === 6) {
      byte = head[pos++]!;
      let rel = byte & 0x7f;
      while (byte & 0x80) {
        byte = head[pos++]!;
        rel = (rel + 1) * 128 + (byte & 0x7f);
      }
      baseOffset = offset - rel;
    } else if (code === 7) {
      baseHash = head.subarray(pos, pos + 20).toString("hex");
      pos += 20;
    }
    // Read the zlib stream: its compressed size is not recorded, but deflate never grows data by much.
    let window = compressedBound(size);
    let data: Buffer;
    for (;;) {
      const chunk = pread(p.packFd, window, offset + pos);
      try {
        data = inflate(chunk);
        break;
      } catch (err) {
        if (chunk.length < window) throw err; // end of file: the pack is corrupt
        window *= 2;
      }
    }
    if (code === 6 || code === 7) {
      const base = code === 6 ? this.readPacked(p, baseOffset, depth + 1) : this.read(baseHash);
      return { type: base.type, content: applyDelta(base.content, data) };
    }
    const type = TYPE_BY_CODE[code];
    if (!type) throw new Error(`unknown pack object type ${code}`);
    return { type, content: data };
  }

  /** Last resort for objects this reader cannot find (alternates, other index versions): ask git. */
  private readWithGit(hash: string): GitObject | null {
    const r = gitSyncRaw(["--git-dir", this.commonDir, "cat-file", "--batch"], { stdin: `${hash}\n` });
    if (r.code !== 0) return null;
    const obj = parseCatFileBatch(r.stdout).get(hash);
    return obj ? { type: obj.type as ObjectType, content: Buffer.from(obj.content) } : null;
  }

  /** Reads an object from the first of the known packs that has it, or returns null. */
  private readFromPacks(hash: string): GitObject | null {
    for (const p of this.loadPacks()) {
      const off = this.findInPack(p, hash);
      if (off !== null) return this.readPacked(p, off);
    }
    return null;
  }

  /** Reads an object or returns null when it does not exist. */
  tryRead(hash: string): GitObject | null {
    const cached = this.shared.objects.get(hash) ?? this.staged.get(hash);
    if (cached) return cached;
    let obj = this.readLoose(hash) ?? this.readFromPacks(hash);
    if (!obj) {
      // a pack may have appeared since the list was read (git gc running meanwhile)
      this.reopenPacks();
      obj = this.readFromPacks(hash);
    }
    obj ??= this.readWithGit(hash);
    if (obj && obj.type !== "blob") this.shared.objects.set(hash, obj, obj.content.length);
    return obj;
  }

  /** The entries of a tree, parsed once per process (do not modify the array). */
  readTree(hash: string): readonly TreeEntry[] {
    let entries = this.shared.trees.get(hash);
    if (!entries) {
      entries = parseTree(this.read(hash, "tree").content);
      // capped by entries, not trees: a fan-out tree holds hundreds, and a long-running import parses thousands
      this.shared.trees.set(hash, entries, entries.length);
    }
    return entries;
  }

  /** Reads an object; throws when it is missing or of another type than `expect`. */
  read(hash: string, expect?: ObjectType): GitObject {
    const obj = this.tryRead(hash);
    if (!obj) throw new AiflareError("GIT", `git object ${hash} is missing; run \`git fsck\` to check the repository`);
    if (expect && obj.type !== expect) throw new AiflareError("GIT", `git object ${hash} is a ${obj.type}, not a ${expect}`);
    return obj;
  }

  /** The size on disk of a loose object (compressed), or null when it is not loose. */
  looseFileSize(hash: string): number | null {
    try {
      return statSync(this.loosePath(hash)).size;
    } catch {
      return null;
    }
  }

  /** True when the object exists (loose or packed). */
  has(hash: string): boolean {
    if (existsSync(this.loosePath(hash))) return true;
    for (const p of this.loadPacks()) if (this.findInPack(p, hash) !== null) return true;
    return this.tryRead(hash) !== null;
  }

  /** Stages an object for the next `flush` and returns its hash; nothing is written when it already exists. */
  write(type: ObjectType, content: Uint8Array): string {
    const hash = hashObject(type, content);
    if (this.staged.has(hash) || existsSync(this.loosePath(hash))) return hash;
    this.staged.set(hash, { type, content: Buffer.from(content) });
    return hash;
  }

  /** Writes the staged objects into the object database, each one atomically. */
  async flush(): Promise<void> {
    for (const [hash, obj] of this.staged) {
      writeLooseObject(this.loosePath(hash), obj);
      this.staged.delete(hash);
    }
  }
}

/** zlib's format around a raw deflate stream: header (no preset dictionary), data, Adler-32 of the input. */
function zlibDeflate(data: Uint8Array): Buffer {
  const raw = Bun.deflateSync(data as Uint8Array<ArrayBuffer>, { level: 1 });
  const sum = Bun.hash.adler32(data as Uint8Array<ArrayBuffer>);
  const out = Buffer.allocUnsafe(raw.length + 6);
  out[0] = 0x78;
  out[1] = 0x01;
  out.set(raw, 2);
  out.writeUInt32BE(sum >>> 0, raw.length + 2);
  return out;
}

/** Writes one loose object the way git does: deflated, then put in place atomically (`writeObjectAtomically`). */
function writeLooseObject(path: string, obj: GitObject): void {
  if (existsSync(path)) return;
  const head = Buffer.from(`${obj.type} ${obj.content.length}\0`, "latin1");
  writeObjectAtomically(path, zlibDeflate(Buffer.concat([head, obj.content])));
}

/** The prefix of aiflare's temporary object files (git's own `tmp_obj_`, so `git gc` knows them too). */
export const TMP_OBJECT_PREFIX = "tmp_obj_aiflare_";

/** How often a write is tried again when `git gc` removes the object directory under it (git retries too). */
const OBJECT_WRITE_TRIES = 8;

/** Writes `buf` to a temporary file in `dir` and links it to `path`; a raced-in copy of the object wins. */
function writeObjectFile(dir: string, path: string, buf: Uint8Array): void {
  const tmp = join(dir, `${TMP_OBJECT_PREFIX}${process.pid}_${Math.random().toString(36).slice(2)}`);
  const fd = openSync(tmp, "wx", 0o444);
  try {
    try {
      let off = 0;
      while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return;
      // file systems without hard links: rename instead (an object that raced in has the same content)
      renameSync(tmp, path);
    }
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // renamed into place, or already gone
    }
  }
}

/**
 * Puts an object file in place whole or not at all: a temporary file beside the target, linked into place. The
 * `objects/xx` directory is made when the write finds it missing (in a used repository it nearly always exists: a
 * recursive mkdir per object cost more than the write). A `git gc` running beside it removes empty `objects/xx`
 * directories, also the one just made for this object: like git, the directory is made again and the write tried
 * again.
 */
export function writeObjectAtomically(path: string, buf: Uint8Array): void {
  const dir = dirname(path);
  for (let attempt = 0; ; attempt++) {
    try {
      writeObjectFile(dir, path, buf);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT" || attempt >= OBJECT_WRITE_TRIES) throw err;
      mkdirSync(dir, { recursive: true });
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Trees and commits

/** Tree entry modes aiflare reads and writes: a subtree, a plain file. */
export const MODE_TREE = "40000";
export const MODE_BLOB = "100644";

export interface TreeEntry {
  mode: string;
  name: string;
  hash: string;
}

/*
 * Trees are parsed and written in loops over text decoded once: the fan-out trees of a large timeline hold hundreds of
 * entries, and a commit hook reads and rewrites several of them, so per-entry decoding and array callbacks add up.
 */

/** Parses a raw tree object. */
export function parseTree(content: Buffer): TreeEntry[] {
  const out: TreeEntry[] = [];
  // one character a byte: positions in `text` are byte offsets; the hashes come from one hex rendering
  const text = content.toString("latin1");
  const hex = content.toString("hex");
  let pos = 0;
  while (pos < text.length) {
    const sp = text.indexOf(" ", pos);
    const nul = text.indexOf("\0", sp);
    const raw = text.slice(sp + 1, nul);
    out.push({
      mode: text.slice(pos, sp),
      name: ASCII.test(raw) ? raw : content.subarray(sp + 1, nul).toString("utf8"),
      hash: hex.slice(2 * (nul + 1), 2 * (nul + 21)),
    });
    pos = nul + 21;
  }
  return out;
}

/** A path whose blob differs between two trees: `from` null where it was added, `to` null where it was removed. */
export interface BlobChange {
  path: string;
  from: string | null;
  to: string | null;
}

/**
 * The blobs that differ between two trees (either null for none), read from the object database without a git
 * process, descending only into subtrees that differ; `prefix` is put before every path.
 */
export function diffTreeBlobs(store: ObjectStore, a: string | null, b: string | null, prefix = "", out: BlobChange[] = []): BlobChange[] {
  if (a === b) return out;
  const left = new Map<string, TreeEntry>();
  const right = new Map<string, TreeEntry>();
  if (a) for (const e of store.readTree(a)) left.set(e.name, e);
  if (b) for (const e of store.readTree(b)) right.set(e.name, e);
  for (const name of new Set([...left.keys(), ...right.keys()])) {
    const l = left.get(name);
    const r = right.get(name);
    if (l && r && l.hash === r.hash && l.mode === r.mode) continue;
    const path = prefix + name;
    const lTree = l?.mode === MODE_TREE ? l.hash : null;
    const rTree = r?.mode === MODE_TREE ? r.hash : null;
    if (lTree || rTree) diffTreeBlobs(store, lTree, rTree, `${path}/`, out);
    const from = l && !lTree ? l.hash : null;
    const to = r && !rTree ? r.hash : null;
    if (from || to) out.push({ path, from, to });
  }
  return out;
}

/** Serialises tree entries in git's canonical order: names compared bytewise, a tree's name as if it ended with "/". */
export function serializeTree(entries: readonly TreeEntry[]): Buffer {
  const keyed: { e: TreeEntry; k: string; head: string }[] = [];
  let ascii = true;
  let size = 0;
  for (const e of entries) {
    if (!isFullHash(e.hash)) throw new Error(`bad tree entry hash for ${e.name}`);
    const head = `${e.mode} ${e.name}\0`;
    if (ascii && !ASCII.test(head)) ascii = false;
    keyed.push({ e, k: e.mode === MODE_TREE ? `${e.name}/` : e.name, head });
    size += head.length + 20;
  }
  if (ascii) {
    // ASCII names: string order is byte order
    keyed.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
  } else {
    const bytes = new Map<string, Buffer>();
    const key = (k: string) => bytes.get(k) ?? bytes.set(k, Buffer.from(k, "utf8")).get(k)!;
    keyed.sort((a, b) => Buffer.compare(key(a.k), key(b.k)));
    size = 0;
    for (const x of keyed) size += Buffer.byteLength(x.head, "utf8") + 20;
  }
  const out = Buffer.allocUnsafe(size);
  let pos = 0;
  for (const x of keyed) {
    pos += out.write(x.head, pos, ascii ? "latin1" : "utf8");
    pos += out.write(x.e.hash, pos, "hex");
  }
  return out;
}

const ASCII = /^[\x00-\x7f]*$/;

/*
 * Raw tree edits. A tree entry is `<mode> <name>\0<20-byte hash>`, in git's order (names compared bytewise, a
 * subtree's name as if it ended with "/"). A fan-out tree of a large timeline holds hundreds of entries; finding
 * one and changing a few by scanning and splicing the raw bytes costs a fraction of parsing every entry into
 * strings and writing them all out again, which a hook would do on every commit.
 */

const SLASH = 0x2f;

/** Where the raw entry at `pos` ends its mode (the space), its name (the NUL), and the entry itself. */
function rawEntryAt(content: Buffer, pos: number): { sp: number; nul: number; end: number } {
  const sp = content.indexOf(32, pos);
  const nul = sp < 0 ? -1 : content.indexOf(0, sp + 1);
  if (sp < 0 || nul < 0 || nul + 21 > content.length) throw new Error("malformed tree object");
  return { sp, nul, end: nul + 21 };
}

/** Whether the raw entry at `pos` (mode ending at `sp`) is a subtree: mode "40000". */
const isRawTreeMode = (content: Buffer, pos: number, sp: number) =>
  sp - pos === 5 && content[pos] === 0x34 && content[pos + 1] === 0x30 && content[pos + 2] === 0x30 && content[pos + 3] === 0x30 && content[pos + 4] === 0x30;

/**
 * Orders the raw entry named `content[start..end)` (a subtree when `tree`) against a sort key (a name's UTF-8
 * bytes, followed by "/" for a subtree): negative, zero or positive as git's tree order puts it first.
 */
function compareRawKey(content: Buffer, start: number, end: number, tree: boolean, key: Buffer): number {
  const n = end - start;
  const m = Math.min(n, key.length);
  const c = content.compare(key, 0, m, start, start + m);
  if (c !== 0) return c;
  // one is a prefix of the other: what follows is the raw name's next byte, or its "/" as a subtree, or nothing
  const rawNext = n > m ? content[start + m]! : tree ? SLASH : -1;
  const keyNext = key.length > m ? key[m]! : -1;
  if (rawNext !== keyNext) return rawNext - keyNext;
  if (rawNext === -1) return 0;
  // both go on with a "/": the raw key ends there (its name was used up); the other may not
  return key.length > m + 1 ? -1 : 0;
}

/** The entry named `name` in a raw tree, or null. */
export function findTreeEntry(content: Buffer, name: string): TreeEntry | null {
  const want = Buffer.from(name, "utf8");
  for (let pos = 0; pos < content.length; ) {
    const { sp, nul, end } = rawEntryAt(content, pos);
    if (nul - sp - 1 === want.length && content.compare(want, 0, want.length, sp + 1, nul) === 0) {
      return { mode: content.toString("latin1", pos, sp), name, hash: content.toString("hex", nul + 1, end) };
    }
    pos = end;
  }
  return null;
}

/**
 * A raw tree with entries set or removed (`changes`: name -> its new entry, or null to remove it); every other
 * entry keeps its bytes and place. The result is in git's order, as `serializeTree` writes it.
 */
export function spliceTree(content: Buffer, changes: ReadonlyMap<string, TreeEntry | null>): Buffer {
  const names = [...changes.keys()].map((name) => Buffer.from(name, "utf8"));
  const added = [...changes.values()]
    .filter((e): e is TreeEntry => e !== null)
    // serializeTree checks the hash
    .map((e) => ({ key: Buffer.from(e.mode === MODE_TREE ? `${e.name}/` : e.name, "utf8"), bytes: serializeTree([e]) }))
    .sort((a, b) => Buffer.compare(a.key, b.key));
  const parts: Buffer[] = [];
  let next = 0;
  // the raw entries kept since the last change, copied as one stretch
  let keptFrom = 0;
  for (let pos = 0; pos < content.length; ) {
    const { sp, nul, end } = rawEntryAt(content, pos);
    const tree = isRawTreeMode(content, pos, sp);
    const changed = names.some((n) => n.length === nul - sp - 1 && content.compare(n, 0, n.length, sp + 1, nul) === 0);
    const before = next < added.length && compareRawKey(content, sp + 1, nul, tree, added[next]!.key) > 0;
    if (changed || before) {
      parts.push(content.subarray(keptFrom, pos));
      keptFrom = changed ? end : pos;
      while (next < added.length && compareRawKey(content, sp + 1, nul, tree, added[next]!.key) > 0) parts.push(added[next++]!.bytes);
    }
    pos = end;
  }
  parts.push(content.subarray(keptFrom));
  while (next < added.length) parts.push(added[next++]!.bytes);
  return Buffer.concat(parts);
}

export interface CommitInfo {
  tree: string;
  parents: string[];
  author: string;
  committer: string;
  /** committer time, seconds since the epoch */
  committerTime: number;
  message: string;
}

/** Parses a raw commit object. */
export function parseCommit(content: Buffer): CommitInfo {
  const text = content.toString("utf8");
  const split = text.indexOf("\n\n");
  const head = split < 0 ? text : text.slice(0, split);
  const message = split < 0 ? "" : text.slice(split + 2);
  const info: CommitInfo = { tree: "", parents: [], author: "", committer: "", committerTime: 0, message };
  for (const line of head.split("\n")) {
    if (line.startsWith("tree ")) info.tree = line.slice(5);
    else if (line.startsWith("parent ")) info.parents.push(line.slice(7));
    else if (line.startsWith("author ")) info.author = line.slice(7);
    else if (line.startsWith("committer ")) {
      info.committer = line.slice(10);
      const m = / (\d+) [+-]\d{4}$/.exec(info.committer);
      info.committerTime = m ? Number(m[1]) : 0;
    }
  }
  return info;
}

/** aiflare's own identity on its branches, so no git identity needs to be configured. */
export const AIFLARE_IDENT = "aiflare <aiflare@localhost>";

/** Serialises a commit by aiflare with the given tree, parent and message. */
export function serializeCommit(tree: string, parents: string[], message: string, when = new Date()): Buffer {
  const stamp = `${Math.floor(when.getTime() / 1000)} +0000`;
  const lines = [`tree ${tree}`, ...parents.map((p) => `parent ${p}`)];
  lines.push(`author ${AIFLARE_IDENT} ${stamp}`, `committer ${AIFLARE_IDENT} ${stamp}`);
  const body = message.endsWith("\n") ? message : `${message}\n`;
  return Buffer.from(`${lines.join("\n")}\n\n${body}`, "utf8");
}

/** The first line of a commit message. */
export function subjectOf(message: string): string {
  return (message.split("\n").find((l) => l.trim() !== "") ?? "").trim();
}
