import * as v from "valibot";
import { AiflareError } from "../errors.ts";
import { redactValueForWrite, type RedactOptions } from "../redact/index.ts";
import { commitPlan, snapshot, type Edits, type Snapshot, type StoreRepo } from "./branch.ts";
import { entrySchema, type Entry } from "./entry.ts";
import { type LockOptions } from "./lock.ts";
import { MODE_TREE, ObjectStore, parseTree } from "./objects.ts";
import { entryPath, TIMELINE_REF } from "./refs.ts";
import { isFullHash } from "../util/ids.ts";

/*
 * The timeline (`refs/heads/aiflare/timeline/v1`): one compact JSON file per commit at
 * `entries/<2 hex>/<38 hex>.json` (the sessions branch is in sessions.ts). Every string is redacted before it
 * becomes a git object.
 *
 * Timeline commit messages carry trailers (`Entry:`, `Session:`, `Action: add|update|move`, `Moved: <old> <new>`)
 * so the latest entry of a session can be found by walking a few commits back from the tip.
 */

export interface WriteOptions {
  /** redaction settings from aiflare.yml */
  redact?: RedactOptions;
  lock?: LockOptions;
}

/** An entry as read at a timeline tip (`readEntryAt`): what that tip holds for its commit, null for nothing. */
export interface EntryRead {
  tip: string | null;
  entry: Entry | null;
}


function parseEntry(buf: Buffer | null): Entry | null {
  if (!buf) return null;
  try {
    const r = v.safeParse(entrySchema(), JSON.parse(buf.toString("utf8")));
    return r.success ? r.output : null;
  } catch {
    return null;
  }
}

/** The serialised form of an entry: compact JSON, one object, trailing newline. */
export function serializeEntry(entry: Entry): string {
  return `${JSON.stringify(entry)}\n`;
}

function entryAt(snap: Snapshot, hash: string): Entry | null {
  return parseEntry(snap.readBlob(entryPath(hash)));
}

/** Validates and redacts an entry before it is written. */
function prepareEntry(entry: Entry, opts: WriteOptions): Entry {
  const parsed = v.safeParse(entrySchema(), entry);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const path = v.getDotPath(issue) ?? "entry";
    throw new AiflareError("INVALID_ARGUMENT", `timeline entry field ${path}: ${issue.message}`);
  }
  const redacted = redactValueForWrite(parsed.output, opts.redact);
  // hashes are not secrets and must stay intact whatever the redactor matches
  const out: Entry = { ...redacted, commitHash: parsed.output.commitHash, groupRootId: parsed.output.groupRootId };
  const fp = parsed.output.fingerprint;
  if (fp && redacted.fingerprint) {
    // the line hashes are random-looking text by nature; only the paths are the user's words
    out.fingerprint = {
      ...fp,
      files: fp.files.map((f, i) => ({ ...f, path: redacted.fingerprint!.files[i]?.path ?? f.path })),
    };
  }
  return out;
}

function trailers(lines: Record<string, string | undefined>): string {
  return Object.entries(lines)
    .filter(([, val]) => val)
    .map(([k, val]) => `${k}: ${val}`)
    .join("\n");
}

/** Reads the entry of a commit, or null when there is none (or it is unreadable). */
export async function readEntry(repo: StoreRepo, commitHash: string): Promise<Entry | null> {
  return (await readEntryAt(repo, commitHash)).entry;
}

/** Reads the entry of a commit with the tip it was read at: `updateEntry` given it reads nothing again at that tip. */
export async function readEntryAt(repo: StoreRepo, commitHash: string): Promise<EntryRead> {
  if (!isFullHash(commitHash)) return { tip: null, entry: null };
  const store = new ObjectStore(repo.commonDir);
  try {
    const snap = snapshot(store, TIMELINE_REF);
    return { tip: snap.tip, entry: entryAt(snap, commitHash) };
  } finally {
    store.close();
  }
}

/**
 * Reads, changes and writes one entry in a single timeline commit. `change` gets the current entry (or null) as
 * read at the tip being written on, and may run more than once if another writer got in first; it returns the
 * entry to store, or null to leave the timeline unchanged. Returns the entry as stored (redacted), or null.
 * `read`: the entry as the caller read it (`readEntryAt`), used as it is while the branch is still at that tip.
 */
export async function updateEntry(
  repo: StoreRepo,
  commitHash: string,
  change: (current: Entry | null) => Entry | null,
  opts: WriteOptions & { read?: EntryRead } = {},
): Promise<Entry | null> {
  if (!isFullHash(commitHash)) throw new AiflareError("INVALID_ARGUMENT", `not a full commit hash: ${commitHash}`);
  let stored: Entry | null = null;
  await commitPlan(
    repo,
    TIMELINE_REF,
    (snap) => {
      // the entry the caller read at this very tip is the one there: not read and parsed a second time
      const current = opts.read && opts.read.tip !== null && opts.read.tip === snap.tip ? opts.read.entry : entryAt(snap, commitHash);
      const next = change(current);
      stored = null;
      if (!next) return null;
      if (next.commitHash !== commitHash) throw new AiflareError("INVALID_ARGUMENT", "an entry cannot change its commit hash");
      const entry = prepareEntry(next, opts);
      stored = entry;
      const action = current ? "update" : "add";
      return {
        edits: new Map([[entryPath(commitHash), serializeEntry(entry)]]) as Edits,
        message: `aiflare: ${action} entry ${commitHash.slice(0, 12)}\n\n${trailers({
          Entry: commitHash,
          Session: entry.claudeSessionId || undefined,
          Action: action,
        })}\n`,
      };
    },
    opts.lock,
  );
  return stored;
}

/** Writes an entry (insert or replace) as one timeline commit. Returns the stored (redacted) entry. */
export async function writeEntry(repo: StoreRepo, entry: Entry, opts: WriteOptions = {}): Promise<Entry> {
  return (await updateEntry(repo, entry.commitHash, () => entry, opts)) ?? entry;
}

/**
 * Adds entries of one session in a single timeline commit, skipping commits that already have an entry (an entry
 * written live is never replaced). Entries are given oldest first. Returns the entries stored (redacted).
 */
export async function addSessionEntries(
  repo: StoreRepo,
  sessionId: string,
  entries: Entry[],
  opts: WriteOptions = {},
): Promise<Entry[]> {
  let stored: Entry[] = [];
  if (entries.length === 0) return stored;
  for (const e of entries) {
    if (!isFullHash(e.commitHash)) throw new AiflareError("INVALID_ARGUMENT", `not a full commit hash: ${e.commitHash}`);
  }
  const prepared = entries.map((e) => prepareEntry(e, opts));
  await commitPlan(
    repo,
    TIMELINE_REF,
    (snap) => {
      stored = prepared.filter((e) => !snap.readBlob(entryPath(e.commitHash)));
      if (stored.length === 0) return null;
      const edits: Edits = new Map(stored.map((e) => [entryPath(e.commitHash), serializeEntry(e)] as const));
      // newest first: the latest entry of the session is the first `Entry:` a reader meets
      const lines = [...stored].reverse().map((e) => `Entry: ${e.commitHash}`);
      return {
        edits,
        message: `aiflare: add ${stored.length} entr${stored.length === 1 ? "y" : "ies"} of session ${sessionId}\n\n${trailers({
          Session: sessionId || undefined,
          Action: "add",
        })}\n${lines.join("\n")}\n`,
      };
    },
    opts.lock,
  );
  return stored;
}

/** How many timeline commits a rewrite looks back through for entries pointing at a moved group root. */
const REFERENCE_SCAN_COMMITS = 500;

/**
 * Moves entries to new commit hashes (after an amend or a rebase) in one timeline commit, keeping their content,
 * and points `groupRootId`s at the new hashes: in the moved entries and in entries written in the last
 * {@link REFERENCE_SCAN_COMMITS} timeline commits. Several old commits squashed into one are merged into one entry.
 * Returns how many entries moved.
 */
export async function moveEntries(
  repo: StoreRepo,
  pairs: Iterable<readonly [string, string]>,
  opts: WriteOptions = {},
): Promise<number> {
  const map = new Map<string, string>();
  for (const [from, to] of pairs) if (isFullHash(from) && isFullHash(to) && from !== to) map.set(from, to);
  if (map.size === 0) return 0;
  let moved = 0;
  await commitPlan(
    repo,
    TIMELINE_REF,
    (snap) => {
      moved = 0;
      const edits: Edits = new Map();
      const results = new Map<string, Entry>();
      const movedLines: string[] = [];
      for (const [from, to] of map) {
        const entry = entryAt(snap, from);
        if (!entry) continue;
        moved++;
        movedLines.push(`Moved: ${from} ${to}`);
        edits.set(entryPath(from), null);
        const target = results.get(to) ?? (map.has(to) ? null : entryAt(snap, to));
        results.set(to, target ? mergeEntries(target, { ...entry, commitHash: to }) : { ...entry, commitHash: to });
      }
      if (moved === 0) return null;
      const fix = (e: Entry): Entry => {
        let root = e.groupRootId ? (map.get(e.groupRootId) ?? e.groupRootId) : null;
        if (root === e.commitHash) root = null;
        return root === e.groupRootId ? e : { ...e, groupRootId: root };
      };
      for (const [to, entry] of results) edits.set(entryPath(to), serializeEntry(prepareEntry(fix(entry), opts)));
      // entries outside the rewrite that point at a moved root (recent ones: group members follow their root)
      const seen = new Set<string>();
      for (const c of snap.log(REFERENCE_SCAN_COMMITS)) {
        const written = [
          ...[...c.message.matchAll(/^Entry: ([0-9a-f]{40})$/gm)].map((m) => m[1]!),
          ...[...c.message.matchAll(/^Moved: [0-9a-f]{40} ([0-9a-f]{40})$/gm)].map((m) => m[1]!),
        ];
        for (const hash of written) {
          if (seen.has(hash) || map.has(hash) || results.has(hash)) continue;
          seen.add(hash);
          const entry = entryAt(snap, hash);
          if (!entry || !entry.groupRootId || !map.has(entry.groupRootId)) continue;
          edits.set(entryPath(hash), serializeEntry(prepareEntry(fix(entry), opts)));
          movedLines.push(`Entry: ${hash}`);
        }
      }
      const first = [...map][0]!;
      return {
        edits,
        message: `aiflare: move ${moved} entr${moved === 1 ? "y" : "ies"} (${first[0].slice(0, 12)} -> ${first[1].slice(0, 12)}${
          map.size > 1 ? ", …" : ""
        })\n\n${trailers({ Action: "move" })}\n${movedLines.join("\n")}\n`,
      };
    },
    opts.lock,
  );
  return moved;
}

/** How far back {@link movedByRewrite} looks for the last write of an entry. */
const MOVE_SCAN_COMMITS = 200;

/**
 * True when the last timeline write of `to`'s entry is the move from `from` (git's post-rewrite hook after an
 * amend): nothing has captured the rewritten commit since, so the commit hook still owes it its delta.
 */
export async function movedByRewrite(repo: StoreRepo, from: string, to: string): Promise<boolean> {
  if (!isFullHash(from) || !isFullHash(to)) return false;
  const store = new ObjectStore(repo.commonDir);
  try {
    const snap = snapshot(store, TIMELINE_REF);
    for (const c of snap.log(MOVE_SCAN_COMMITS)) {
      if (c.message.includes(`\nMoved: ${from} ${to}\n`)) return true;
      if (new RegExp(`^(?:Entry: |Moved: [0-9a-f]{40} )${to}$`, "m").test(c.message)) return false;
    }
    return false;
  } finally {
    store.close();
  }
}

/** Marks a part of a merged entry's text; the part's original title follows it. */
const PART_HEADING = "### ";

/** A text as titled parts: itself when already merged, else one part under its entry's title. */
function asParts(title: string, text: string): string {
  return text.startsWith(PART_HEADING) ? text : `${PART_HEADING}${title}\n\n${text.trim()}`;
}

/** Joins two entries' text: one alone as it is, two different ones each under its entry's title. */
function joinParts(a: Entry, b: Entry, field: "intent" | "alternatives" | "diffSummary"): string {
  const x = a[field];
  const y = b[field];
  if (!y.trim() || x.trim() === y.trim()) return x;
  if (!x.trim()) return y;
  return `${asParts(a.title, x)}\n\n${asParts(b.title, y)}`;
}

/**
 * Merges a second entry into a first one for the same commit (a squash, or an amend seen twice): the first's title,
 * each entry's intent, alternatives and diff summary kept under its own title, the union of files and the
 * conversations in order.
 */
export function mergeEntries(a: Entry, b: Entry): Entry {
  const snippet = [a.conversationSnippet, b.conversationSnippet]
    .filter((s) => s)
    .map((s) => (s.endsWith("\n") ? s : `${s}\n`))
    .join("");
  const written = [a.summaryStatus, b.summaryStatus];
  return {
    ...b,
    ...a,
    title: a.title.trim() ? a.title : b.title,
    intent: joinParts(a, b, "intent"),
    alternatives: joinParts(a, b, "alternatives"),
    diffSummary: joinParts(a, b, "diffSummary"),
    changedFiles: [...new Set([...a.changedFiles, ...b.changedFiles])],
    conversationSnippet: snippet,
    continuation: a.continuation || b.continuation,
    ...(written.includes("written") ? { summaryStatus: "written" as const } : {}),
  };
}

/** Commit hashes of every entry on the timeline. */
export async function listEntryHashes(repo: StoreRepo): Promise<string[]> {
  const store = new ObjectStore(repo.commonDir);
  try {
    const snap = snapshot(store, TIMELINE_REF);
    const out: string[] = [];
    for (const dir of snap.treeAt("entries")) {
      if (dir.mode !== MODE_TREE || !/^[0-9a-f]{2}$/.test(dir.name)) continue;
      for (const f of parseTree(store.read(dir.hash, "tree").content)) {
        const m = /^([0-9a-f]{38})\.json$/.exec(f.name);
        if (m) out.push(dir.name + m[1]);
      }
    }
    return out;
  } finally {
    store.close();
  }
}

/** Every entry on the timeline (reads every blob: meant for small timelines, tests and rebuilds). */
export async function listTimeline(repo: StoreRepo): Promise<Entry[]> {
  const hashes = await listEntryHashes(repo);
  const store = new ObjectStore(repo.commonDir);
  try {
    const snap = snapshot(store, TIMELINE_REF);
    return hashes.map((h) => entryAt(snap, h)).filter((e): e is Entry => e !== null);
  } finally {
    store.close();
  }
}

/** How far back the latest entry of a session is looked for. */
const SESSION_SCAN_COMMITS = 1000;

/**
 * The latest entry written for a session (SPEC §5 "previous entry"), found by walking timeline commits back from
 * the tip (at most {@link SESSION_SCAN_COMMITS}) and following later moves. Null when there is none.
 */
export async function latestSessionEntry(
  repo: StoreRepo,
  sessionId: string,
  exclude?: string,
  accept: (entry: Entry) => boolean = () => true,
): Promise<Entry | null> {
  if (!sessionId) return null;
  const store = new ObjectStore(repo.commonDir);
  try {
    const snap = snapshot(store, TIMELINE_REF);
    const moves = new Map<string, string>();
    for (const c of snap.log(SESSION_SCAN_COMMITS)) {
      for (const m of c.message.matchAll(/^Moved: ([0-9a-f]{40}) ([0-9a-f]{40})$/gm)) {
        if (!moves.has(m[1]!)) moves.set(m[1]!, m[2]!);
      }
      if (!/^Action: add$/m.test(c.message)) continue;
      if (/^Session: (.+)$/m.exec(c.message)?.[1] !== sessionId) continue;
      let hash = /^Entry: ([0-9a-f]{40})$/m.exec(c.message)?.[1];
      for (let i = 0; hash && moves.has(hash) && i < 100; i++) hash = moves.get(hash);
      if (!hash || hash === exclude) continue;
      const entry = entryAt(snap, hash);
      if (entry && entry.claudeSessionId === sessionId && accept(entry)) return entry;
    }
    return null;
  } finally {
    store.close();
  }
}
