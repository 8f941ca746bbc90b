import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { AiflareError } from "../../errors.ts";
import { SESSIONS_REF, TIMELINE_REF, readRef } from "../../store/refs.ts";
import type { RepoPaths } from "../repo.ts";
import { isValidSessionId } from "../session.ts";
import type {
  AcceptedEntry,
  EntrySelection,
  PendingEntry,
  PendingSession,
  SessionSelection,
  SyncFailure,
  SyncSource,
} from "./source.ts";

/** What the backend accepted, kept beside the index in the common git dir. */
interface SyncState {
  version: 1;
  /** commit hash → the entry version (blob id) accepted, and its session */
  entries: Record<string, { v: string; s?: string; at: string }>;
  /** session id → the transcript version (blob id) accepted */
  sessions: Record<string, { v: string; at: string }>;
  /** commit hash → why it last failed */
  failures: Record<string, SyncFailure>;
  lastError: SyncFailure | null;
}

/** The state file of a repository: `<common dir>/aiflare/sync-state.json`. */
export function syncStatePath(commonDir: string): string {
  return join(commonDir, "aiflare", "sync-state.json");
}

function emptyState(): SyncState {
  return { version: 1, entries: {}, sessions: {}, failures: {}, lastError: null };
}

function loadState(file: string): SyncState {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return emptyState();
  }
  try {
    const s = JSON.parse(text) as Partial<SyncState>;
    if (s && s.version === 1 && typeof s.entries === "object" && typeof s.sessions === "object") {
      return { ...emptyState(), ...s } as SyncState;
    }
  } catch {
    // a damaged record only means entries are sent again; the backend treats a re-send as an update
  }
  return emptyState();
}

/** Runs git in the working tree; throws a GIT error with git's own message. */
export function runGit(root: string, args: string[], input?: string): Buffer {
  const r = Bun.spawnSync(["git", ...args], {
    cwd: root,
    stdin: input === undefined ? "ignore" : Buffer.from(input),
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) {
    const msg = r.stderr.toString().trim().split("\n")[0] ?? "";
    throw new AiflareError("GIT", `git ${args[0]} failed: ${msg}`);
  }
  return r.stdout as Buffer;
}

interface TreeFile {
  oid: string;
  size: number;
}

/** `git ls-tree -r -l` of one folder of a ref, as path → blob. */
function listTree(root: string, ref: string, folder: string): Map<string, TreeFile> {
  const out = new Map<string, TreeFile>();
  const text = runGit(root, ["ls-tree", "-r", "-l", "-z", "--full-tree", ref, "--", folder]).toString("utf8");
  for (const rec of text.split("\0")) {
    if (!rec) continue;
    const tab = rec.indexOf("\t");
    const [, type, oid, size] = rec.slice(0, tab).split(/ +/);
    if (type !== "blob" || !oid) continue;
    out.set(rec.slice(tab + 1), { oid, size: Number(size) });
  }
  return out;
}

/** Reads many blobs with one `git cat-file --batch`. */
export function readBlobs(root: string, oids: string[]): Map<string, string> {
  const out = new Map<string, string>();
  if (oids.length === 0) return out;
  const buf = runGit(root, ["cat-file", "--batch"], `${oids.join("\n")}\n`);
  let pos = 0;
  while (pos < buf.length) {
    const nl = buf.indexOf(10, pos);
    if (nl < 0) break;
    const header = buf.subarray(pos, nl).toString("utf8").split(" ");
    pos = nl + 1;
    if (header[1] === "missing") continue;
    const size = Number(header[2]);
    out.set(header[0]!, buf.subarray(pos, pos + size).toString("utf8"));
    pos += size + 1;
  }
  return out;
}

const ENTRY_PATH_RE = /^entries\/([0-9a-f]{2})\/([0-9a-f]{38})\.json$/;
const SESSION_PATH_RE = /^sessions\/(.+)\.jsonl$/;

/**
 * A SyncSource that reads the two aiflare branches with git and keeps the accepted state in
 * `<common dir>/aiflare/sync-state.json`. The caller holds the sync lock while using it.
 */
export function createGitSource(repo: RepoPaths): SyncSource {
  const stateFile = syncStatePath(repo.commonDir);
  const state = loadState(stateFile);
  let dirty = false;

  const entryFiles = (): Map<string, string> => {
    const files = new Map<string, string>();
    const tip = readRef(repo.commonDir, TIMELINE_REF) ?? (hasRef(TIMELINE_REF) ? TIMELINE_REF : null);
    if (!tip) return files;
    for (const [path, file] of listTree(repo.root, tip, "entries")) {
      const m = ENTRY_PATH_RE.exec(path);
      if (m) files.set(m[1]! + m[2]!, file.oid);
    }
    return files;
  };

  function hasRef(ref: string): boolean {
    const r = Bun.spawnSync(["git", "rev-parse", "--verify", "--quiet", `${ref}^{commit}`], {
      cwd: repo.root,
      stdout: "ignore",
      stderr: "ignore",
    });
    return r.exitCode === 0;
  }

  return {
    entries({ commits, includeAccepted = false }): EntrySelection {
      const files = entryFiles();
      const scope = commits ? [...new Set(commits)] : [...files.keys()];
      const want: { commitHash: string; version: string }[] = [];
      const accepted: AcceptedEntry[] = [];
      const missing: string[] = [];
      for (const commitHash of scope) {
        const version = files.get(commitHash);
        if (!version) {
          missing.push(commitHash);
          continue;
        }
        const done = state.entries[commitHash];
        if (!includeAccepted && done?.v === version) accepted.push({ commitHash, sessionId: done.s });
        else want.push({ commitHash, version });
      }
      const blobs = readBlobs(repo.root, [...new Set(want.map((w) => w.version))]);
      const pending: PendingEntry[] = [];
      for (const w of want) {
        const raw = blobs.get(w.version);
        if (raw !== undefined) pending.push({ ...w, raw });
        else missing.push(w.commitHash);
      }
      return { pending, accepted, missing };
    },

    sessions(ids, { includeAccepted = false } = {}): SessionSelection {
      const pending: PendingSession[] = [];
      const missing: string[] = [];
      const wanted = [...new Set(ids)].filter(isValidSessionId);
      if (wanted.length === 0) return { pending, missing };
      const tip = readRef(repo.commonDir, SESSIONS_REF) ?? (hasRef(SESSIONS_REF) ? SESSIONS_REF : null);
      const stored = new Map<string, { oid: string; size: number }>();
      if (tip) {
        for (const [path, file] of listTree(repo.root, tip, "sessions")) {
          const m = SESSION_PATH_RE.exec(path);
          if (m) stored.set(m[1]!, file);
        }
      }
      for (const id of wanted) {
        const file = stored.get(id);
        if (!file) missing.push(id);
        else if (includeAccepted || state.sessions[id]?.v !== file.oid) pending.push({ id, version: file.oid, bytes: file.size });
      }
      return { pending, missing };
    },

    readSession(session) {
      return runGit(repo.root, ["cat-file", "blob", session.version]).toString("utf8");
    },

    markEntriesAccepted(entries, at) {
      for (const e of entries) {
        state.entries[e.commitHash] = { v: e.version, ...(e.sessionId ? { s: e.sessionId } : {}), at };
        delete state.failures[e.commitHash];
      }
      if (entries.length) dirty = true;
    },

    markSessionAccepted(id, version, at) {
      state.sessions[id] = { v: version, at };
      dirty = true;
    },

    recordFailure(commitHashes, message, at) {
      for (const c of commitHashes) state.failures[c] = { message, at };
      state.lastError = { message, at };
      dirty = true;
    },

    lastError() {
      return state.lastError;
    },

    clearLastError() {
      if (state.lastError === null) return;
      state.lastError = null;
      dirty = true;
    },

    flush() {
      if (!dirty) return;
      mkdirSync(dirname(stateFile), { recursive: true });
      const tmp = `${stateFile}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(state), { mode: 0o600 });
      renameSync(tmp, stateFile);
      dirty = false;
    },
  };
}
