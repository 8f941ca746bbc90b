/**
 * Benchmark data shaped like real capture: entries of about 5 KB (a title, a Problem/Solution/Effect intent,
 * alternatives, a diff summary and a few conversation lines), session transcripts of about 40 KB, one session
 * per ten entries, two or three changed files per entry. Text comes either from a vocabulary of made-up words with
 * a seeded generator (`Prose`: compresses like prose, but with few distinct words) or from the real conversations in
 * `test/fixtures/claude-code` (`RealText`: prose, code, paths and hashes as they were). Everything is written with
 * `git fast-import`, in the branch layout aiflare reads.
 */
import { entryPath, segmentPath, SESSIONS_REF, TIMELINE_REF } from "../src/store/refs.ts";
import type { Entry } from "../src/store/entry.ts";
import { fingerprintOf, linesOfPatch, type Fingerprint } from "../src/core/links/fingerprint.ts";
import { RealText } from "./real-text.ts";
import { rng } from "./rng.ts";

export const SHAPE =
  "entries ~5 KB (title, intent, alternatives, diff summary, 4-6 conversation lines, the change's fingerprint), " +
  "session transcripts ~40 KB, " +
  "1 session per 10 entries, 2-3 changed files per entry out of 400, groups of up to 4 commits";

export { rng };

/** What the data builders draw text from: made-up words (`Prose`) or real conversations (`RealText`). */
export interface TextSource {
  int(n: number): number;
  text(chars: number): string;
  transcript?(bytes: number): string;
}

/** Which text the data is made of. */
export type TextKind = "made-up" | "real";

export function textSource(kind: TextKind, seed: number): TextSource {
  return kind === "real" ? new RealText(seed) : new Prose(seed);
}

const SYLLABLES = ["ka", "lo", "mi", "ne", "ra", "to", "shi", "pa", "ve", "du", "gor", "tan", "lis", "mer", "cho", "fin", "bra", "sel", "quo", "zen"];
const CODE_WORDS = ["parser", "index", "cache", "request", "handler", "config", "session", "commit", "branch", "token", "schema", "query", "render", "timeout", "retry", "buffer", "stream", "error", "test", "fixture"];

function vocabulary(r: () => number): string[] {
  const words = new Set<string>(CODE_WORDS);
  while (words.size < 3000) {
    const n = 1 + Math.floor(r() * 3);
    let w = "";
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(r() * SYLLABLES.length)];
    words.add(w);
  }
  return [...words];
}

/**
 * A text generator over a fixed vocabulary. Sentences are drawn from a pool made once, so that building 100,000
 * entries takes seconds, not minutes; each text is still its own mix of them.
 */
export class Prose implements TextSource {
  private r: () => number;
  private pool: string[];
  constructor(seed = 1) {
    this.r = rng(seed);
    const words = vocabulary(rng(seed + 1));
    const make = rng(seed + 2);
    this.pool = Array.from({ length: 20_000 }, () => {
      const n = 6 + Math.floor(make() * 12);
      const s: string[] = [];
      for (let i = 0; i < n; i++) s.push(words[Math.floor(make() ** 1.6 * words.length)]!);
      const sentence = `${s.join(" ")}.`;
      return sentence.charAt(0).toUpperCase() + sentence.slice(1);
    });
  }
  int(n: number): number {
    return Math.floor(this.r() * n);
  }
  /** About `chars` characters of sentences. */
  text(chars: number): string {
    const out: string[] = [];
    let len = 0;
    while (len < chars) {
      const sentence = this.pool[this.int(this.pool.length)]!;
      out.push(sentence);
      len += sentence.length + 1;
    }
    return out.join(" ");
  }
}

/** The repository's source files the history touches; `HOT_FILE` is changed by every tenth commit. */
export const FILES = Array.from({ length: 400 }, (_, i) => `src/${["core", "store", "util", "web"][i % 4]}/mod${i}.ts`);
export const HOT_FILE = "src/core/app.ts";

const line = (role: "user" | "assistant", content: string) => `${JSON.stringify({ role, content })}\n`;

/** One realistic entry. */
export function makeEntry(p: TextSource, i: number, commitHash: string, groupRootId: string | null, files: string[]): Entry {
  const conv: string[] = [];
  const lines = 4 + p.int(3);
  for (let k = 0; k < lines; k++) conv.push(line(k % 2 ? "assistant" : "user", p.text(k % 2 ? 900 : 350)));
  const at = new Date(Date.UTC(2025, 0, 1) + i * 600_000).toISOString();
  return {
    commitHash,
    title: p.text(50).replace(/\s+/g, " ").trim().slice(0, 70),
    intent: `**Problem** ${p.text(250)}\n**Solution** ${p.text(250)}\n**Effect** ${p.text(150)}`,
    alternatives: i % 3 ? `- ${p.text(120)}\n- ${p.text(100)}` : "",
    diffSummary: files.map((f) => `- ${f}: ${p.text(90)}`).join("\n"),
    tag: (["FEATURE", "BUGFIX", "REFACTORING", "TEST", "DOCS"] as const)[i % 5]!,
    changedFiles: files,
    agentType: "CLAUDE_CODE",
    claudeSessionId: `bench-session-${Math.floor(i / 10)}`,
    branch: "main",
    conversationSnippet: conv.join(""),
    continuation: false,
    groupRootId,
    capturedAt: at,
    summaryStatus: "written",
    committedAt: at,
  };
}

/** One realistic session transcript of about `bytes` bytes. */
export function makeTranscript(p: TextSource, bytes = 40_000): string {
  if (p.transcript) return p.transcript(bytes);
  let out = "";
  for (let k = 0; out.length < bytes; k++) out += line(k % 2 ? "assistant" : "user", p.text(k % 2 ? 1600 : 500));
  return out;
}

/** Streams a fast-import script into `git fast-import` in the repository at `cwd`. */
async function fastImport(cwd: string, env: Record<string, string>, write: (put: (s: string) => void) => Promise<void> | void) {
  // fast compression: the data's size matters here, not how small git stores it
  const proc = Bun.spawn(["git", "-c", "core.compression=1", "-c", "pack.compression=1", "fast-import", "--quiet", "--force", "--depth=0"], {
    cwd,
    env,
    stdin: "pipe",
    stderr: "pipe",
  });
  let pending = 0;
  const put = (s: string) => {
    pending += proc.stdin.write(s) as number;
  };
  await write((s) => {
    put(s);
    if (pending > 8 * 1024 * 1024) {
      void proc.stdin.flush();
      pending = 0;
    }
  });
  put("done\n");
  await proc.stdin.end();
  const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  if (code !== 0) throw new Error(`git fast-import failed: ${err}`);
}

const blob = (text: string) => {
  const bytes = Buffer.from(text);
  return `data ${bytes.length}\n${text}\n`;
};

/**
 * `commits` code commits on main, each changing 2-3 files (every tenth also `HOT_FILE`). Returns the commit
 * hashes (oldest first) and the files each changed.
 */
export async function writeCodeHistory(cwd: string, env: Record<string, string>, commits: number): Promise<{ hashes: string[]; files: string[][] }> {
  const p = new Prose(7);
  const files: string[][] = [];
  await fastImport(cwd, env, (put) => {
    for (let i = 0; i < commits; i++) {
      const changed = [FILES[p.int(FILES.length)]!, FILES[p.int(FILES.length)]!];
      if (i % 10 === 0) changed.unshift(HOT_FILE);
      if (i % 3 === 0) changed.push(FILES[p.int(FILES.length)]!);
      const unique = [...new Set(changed)];
      files.push(unique);
      const msg = `change ${i}: ${p.text(40).slice(0, 60)}`;
      put(`commit refs/heads/main\nmark :${i + 1}\nauthor Dev <dev@example.com> ${1_735_689_600 + i * 600} +0000\n`);
      put(`committer Dev <dev@example.com> ${1_735_689_600 + i * 600} +0000\n${blob(msg)}`);
      for (const f of unique) put(`M 100644 inline ${f}\n${blob(`// ${f} after change ${i}\nexport const v${i} = ${i};\n${p.text(300)}\n`)}`);
      put("\n");
    }
  });
  const r = Bun.spawnSync(["git", "rev-list", "--reverse", "main"], { cwd, env });
  const hashes = r.stdout.toString().trim().split("\n");
  return { hashes: hashes.slice(hashes.length - commits), files };
}

/**
 * The whole fingerprint of each of `hashes` (patch id included), as the capture worker stores it in a commit's first
 * entry: one `git diff-tree --stdin` for all the commits' patches and one `git patch-id --stable` over them, rather
 * than two processes a commit.
 */
export function wholeFingerprints(cwd: string, env: Record<string, string>, hashes: string[]): Map<string, Fingerprint> {
  const out = new Map<string, Fingerprint>();
  if (hashes.length === 0) return out;
  const args = ["diff-tree", "--stdin", "-p", "--no-color", "--no-ext-diff", "--no-textconv", "--root", "-m", "--first-parent"];
  const diff = Bun.spawnSync(["git", ...args], { cwd, env, stdin: new TextEncoder().encode(`${hashes.join("\n")}\n`), maxBuffer: 1 << 30 });
  if (diff.exitCode !== 0) throw new Error(`git diff-tree: ${diff.stderr.toString()}`);
  const ids = Bun.spawnSync(["git", "patch-id", "--stable"], { cwd, env, stdin: diff.stdout });
  if (ids.exitCode !== 0) throw new Error(`git patch-id: ${ids.stderr.toString()}`);
  const patchIds = new Map<string, string>();
  for (const line of ids.stdout.toString().split("\n")) {
    const [id, commit] = line.split(" ");
    if (id && commit) patchIds.set(commit, id);
  }
  // each commit's patch follows the line that names it
  const wanted = new Set(hashes);
  const text = diff.stdout.toString();
  const starts: [string, number][] = [];
  for (let at = 0; at < text.length; ) {
    const end = text.indexOf("\n", at);
    const line = text.slice(at, end < 0 ? text.length : end);
    if (line.length === 40 && wanted.has(line)) starts.push([line, end + 1]);
    at = end < 0 ? text.length : end + 1;
  }
  for (let k = 0; k < starts.length; k++) {
    const [hash, from] = starts[k]!;
    const to = k + 1 < starts.length ? starts[k + 1]![1] - 41 : text.length;
    out.set(hash, fingerprintOf(patchIds.get(hash), linesOfPatch(text.slice(from, to))));
  }
  return out;
}

/**
 * `n` entries on the timeline branch (one commit) and their sessions' transcripts on the sessions branch.
 * Entry i belongs to code commit `codeHashes[i]` when there is one (with that commit's files), else to a
 * made-up hash. `text` picks made-up words or real conversation text (see `RealText`). Returns the bytes written (entries, sessions), the data the index covers.
 */
export async function writeTimelineData(
  cwd: string,
  env: Record<string, string>,
  n: number,
  code: { hashes: string[]; files: string[][] },
  text: TextKind = "made-up",
): Promise<{ entryBytes: number; sessionBytes: number; hashes: string[] }> {
  const p = textSource(text, 11);
  let entryBytes = 0;
  let sessionBytes = 0;
  const hashes: string[] = [];
  // entries of real commits carry the fingerprint the capture worker gives them
  const fingerprints = wholeFingerprints(cwd, env, code.hashes.slice(0, n));
  await fastImport(cwd, env, (put) => {
    put(`commit ${TIMELINE_REF}\ncommitter aiflare <aiflare@localhost> 1735689600 +0000\n${blob("aiflare import")}`);
    let root: string | null = null;
    for (let i = 0; i < n; i++) {
      const hash = code.hashes[i] ?? new Bun.CryptoHasher("sha1").update(`bench-entry-${i}`).digest("hex");
      hashes.push(hash);
      const files = code.files[i] ?? [FILES[p.int(FILES.length)]!, FILES[p.int(FILES.length)]!];
      if (i % 4 === 0) root = null;
      const fingerprint = fingerprints.get(hash);
      const json = JSON.stringify({ ...makeEntry(p, i, hash, root, files), ...(fingerprint ? { fingerprint } : {}) });
      root ??= hash;
      entryBytes += Buffer.byteLength(json);
      put(`M 100644 inline ${entryPath(hash)}\n${blob(json)}`);
    }
    put("\n");
    put(`commit ${SESSIONS_REF}\ncommitter aiflare <aiflare@localhost> 1735689600 +0000\n${blob("aiflare import")}`);
    for (let s = 0; s * 10 < n; s++) {
      const t = makeTranscript(p);
      sessionBytes += Buffer.byteLength(t);
      put(`M 100644 inline ${segmentPath(`bench-session-${s}`, 1)}\n${blob(t)}`);
    }
    put("\n");
  });
  return { entryBytes, sessionBytes, hashes };
}
