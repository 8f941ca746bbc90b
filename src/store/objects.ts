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
  unlinkSync,
  writeSync,
} from "node:fs";
import { promises as fsPromises } from "node:fs";
import { dirname, join } from "node:path";
import { deflateSync, inflateSync } from "node:zlib";
import { AiflareError } from "../errors.ts";
import { gitSyncRaw, parseCatFileBatch } from "../util/git.ts";
import { isFullHash } from "../util/ids.ts";

/*
 * The git object database of a repository (`<common dir>/objects`).
 *
 * Objects are written with isomorphic-git's `writeObject`, through a file-system adapter that makes each
 * write atomic the way git does it (a temporary file, then linked into place): isomorphic-git's own writer
 * creates the final file in place, so a process killed mid-write would leave a truncated object that later
 * writes skip as "already there". New objects of one change are staged in memory and flushed together
 * before the ref moves.
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

/** Reads and writes objects of one repository. Open packs are kept for the life of the instance. */
export class ObjectStore {
  readonly objectsDir: string;
  private packs: PackIndex[] | undefined;
  private cache = new Map<string, GitObject>();
  /** written by `write`, not yet on disk until `flush` */
  private staged = new Map<string, GitObject>();

  constructor(readonly commonDir: string) {
    this.objectsDir = join(commonDir, "objects");
  }

  /** Closes pack file descriptors. */
  close(): void {
    for (const p of this.packs ?? []) {
      closeSync(p.fd);
      closeSync(p.packFd);
    }
    this.packs = undefined;
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
    const data = inflateSync(raw);
    const nul = data.indexOf(0);
    const [type, size] = data.subarray(0, nul).toString("latin1").split(" ");
    const content = data.subarray(nul + 1);
    if (Number(size) !== content.length) throw new Error(`loose object ${hash} is corrupt`);
    return { type: type as ObjectType, content };
  }

  private loadPacks(): PackIndex[] {
    if (this.packs) return this.packs;
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
        packs.push({ idxPath, packPath, fd, packFd, count: fanout[255]!, fanout });
      } catch {
        if (fd >= 0) closeSync(fd);
      }
    }
    this.packs = packs;
    return packs;
  }

  /** Finds an object's offset in a pack by binary search over the index's sorted names. */
  private findInPack(p: PackIndex, hash: string): number | null {
    const want = Buffer.from(hash, "hex");
    const first = want[0]!;
    let lo = first === 0 ? 0 : p.fanout[first - 1]!;
    let hi = p.fanout[first]!;
    const namesAt = 8 + 1024;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const cmp = Buffer.compare(pread(p.fd, 20, namesAt + mid * 20), want);
      if (cmp === 0) {
        const offAt = namesAt + p.count * 24 + mid * 4;
        const off = pread(p.fd, 4, offAt).readUInt32BE(0);
        if (!(off & 0x80000000)) return off;
        const bigAt = namesAt + p.count * 28 + (off & 0x7fffffff) * 8;
        const big = pread(p.fd, 8, bigAt);
        return big.readUInt32BE(0) * 2 ** 32 + big.readUInt32BE(4);
      }
      if (cmp < 0) lo = mid + 1;
      else hi = mid;
    }
    return null;
  }

  /** Reads the object at `offset` of a pack, resolving delta chains. */
  private readPacked(p: PackIndex, offset: number, depth = 0): GitObject {
    if (depth > 64) throw new Error("delta chain too deep");
    let chunk = pread(p.packFd, 64 * 1024, offset);
    let pos = 0;
    let byte = chunk[pos++]!;
    const code = (byte >> 4) & 7;
    let size = byte & 15;
    let shift = 4;
    while (byte & 0x80) {
      byte = chunk[pos++]!;
      size += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    }
    let baseOffset = -1;
    let baseHash = "";
    if (code === 6) {
      byte = chunk[pos++]!;
      let rel = byte & 0x7f;
      while (byte & 0x80) {
        byte = chunk[pos++]!;
        rel = (rel + 1) * 128 + (byte & 0x7f);
      }
      baseOffset = offset - rel;
    } else if (code === 7) {
      baseHash = chunk.subarray(pos, pos + 20).toString("hex");
      pos += 20;
    }
    // Inflate from the data start; grow the window until the whole stream is inside it.
    let data: Buffer;
    let window = Math.max(chunk.length, size + 1024);
    for (;;) {
      if (window > chunk.length) chunk = pread(p.packFd, window, offset);
      try {
        data = inflateSync(chunk.subarray(pos));
        break;
      } catch (err) {
        if (chunk.length < window) throw err; // end of file: the pack is corrupt
        window *= 2;
      }
    }
    if (code === 6 || code === 7) {
      const base =
        code === 6 ? this.readPacked(p, baseOffset, depth + 1) : this.read(baseHash);
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
    const cached = this.cache.get(hash) ?? this.staged.get(hash);
    if (cached) return cached;
    let obj = this.readLoose(hash) ?? this.readFromPacks(hash);
    if (!obj) {
      // a pack may have appeared since the list was read (git gc running meanwhile)
      this.close();
      obj = this.readFromPacks(hash);
    }
    obj ??= this.readWithGit(hash);
    if (obj && obj.type !== "blob") this.cache.set(hash, obj);
    return obj;
  }

  /** Reads an object; throws when it is missing or of another type than `expect`. */
  read(hash: string, expect?: ObjectType): GitObject {
    const obj = this.tryRead(hash);
    if (!obj) throw new AiflareError("GIT", `git object ${hash} is missing; run \`git fsck\` to check the repository`);
    if (expect && obj.type !== expect) throw new AiflareError("GIT", `git object ${hash} is a ${obj.type}, not a ${expect}`);
    return obj;
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

  /** Writes the staged objects into the object database with isomorphic-git, each one atomically. */
  async flush(): Promise<void> {
    if (this.staged.size === 0) return;
    const git = await import("isomorphic-git");
    const fs = atomicObjectFs();
    for (const [hash, obj] of this.staged) {
      const oid = await git.writeObject({ fs, gitdir: this.commonDir, type: obj.type, object: obj.content, format: "content" });
      if (oid !== hash) throw new AiflareError("GIT", `object written as ${oid}, expected ${hash}`);
      this.staged.delete(hash);
    }
  }
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
 * The file system isomorphic-git writes objects through: node's, except that `writeFile` creates a temporary
 * file beside the target and links it into place, so the object file appears whole or not at all. A `git gc`
 * running beside it removes empty `objects/xx` directories, also the one just made for this object: like git,
 * the directory is made again and the write tried again.
 */
export function atomicObjectFs() {
  const writeFile = async (path: string, data: Uint8Array | string): Promise<void> => {
    const dir = dirname(path);
    const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    for (let attempt = 1; ; attempt++) {
      try {
        writeObjectFile(dir, path, buf);
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT" || attempt >= OBJECT_WRITE_TRIES) throw err;
        mkdirSync(dir, { recursive: true });
      }
    }
  };
  return { promises: { ...fsPromises, writeFile } };
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

/** Parses a raw tree object. */
export function parseTree(content: Buffer): TreeEntry[] {
  const out: TreeEntry[] = [];
  let pos = 0;
  while (pos < content.length) {
    const sp = content.indexOf(32, pos);
    const nul = content.indexOf(0, sp);
    const mode = content.subarray(pos, sp).toString("latin1");
    const name = content.subarray(sp + 1, nul).toString("utf8");
    const hash = content.subarray(nul + 1, nul + 21).toString("hex");
    out.push({ mode, name, hash });
    pos = nul + 21;
  }
  return out;
}

/** Git's tree order: names compared bytewise, a tree's name as if it ended with "/". */
function treeSortKey(e: TreeEntry): Buffer {
  return Buffer.from(e.mode === MODE_TREE ? `${e.name}/` : e.name, "utf8");
}

/** Serialises tree entries in git's canonical order. */
export function serializeTree(entries: TreeEntry[]): Buffer {
  const sorted = [...entries].sort((a, b) => Buffer.compare(treeSortKey(a), treeSortKey(b)));
  const parts: Buffer[] = [];
  for (const e of sorted) {
    if (!isFullHash(e.hash)) throw new Error(`bad tree entry hash for ${e.name}`);
    parts.push(Buffer.from(`${e.mode} ${e.name}\0`, "utf8"), Buffer.from(e.hash, "hex"));
  }
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
