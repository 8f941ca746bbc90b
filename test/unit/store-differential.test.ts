/**
 * The object store is hand-written (src/store/objects.ts, lock.ts): every object and ref it writes must be exactly
 * what git itself writes for the same content. Each case is written twice, once by the store and once by git's own
 * plumbing (hash-object, mktree, commit-tree, update-ref, read-tree + write-tree), and the two are compared byte for
 * byte; `git fsck --strict` then checks the whole repository.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tempRepo, type TempRepo } from "../helpers.ts";
import { updateRefLocked } from "../../src/store/lock.ts";
import { MODE_BLOB, MODE_TREE, ObjectStore, serializeCommit, serializeTree, type TreeEntry } from "../../src/store/objects.ts";
import { SESSIONS_REF, TIMELINE_REF } from "../../src/store/refs.ts";
import { appendSessionSegment } from "../../src/store/sessions.ts";
import { writeEntry } from "../../src/store/timeline.ts";
import type { Entry } from "../../src/store/entry.ts";

let repos: TempRepo[] = [];
afterEach(() => {
  for (const r of repos) r.cleanup();
  repos = [];
});

function repoWithStore(): { repo: TempRepo; store: ObjectStore; commonDir: string } {
  const repo = tempRepo();
  repos.push(repo);
  const commonDir = join(repo.root, ".git");
  return { repo, store: new ObjectStore(commonDir), commonDir };
}

/** Runs git in `repo` with `stdin`, returning stdout as bytes (throws on failure). */
function gitBytes(repo: TempRepo, args: string[], stdin?: Uint8Array | string, env: Record<string, string> = {}): Buffer {
  const r = Bun.spawnSync(["git", ...args], {
    cwd: repo.root,
    env: { ...repo.env, ...env },
    stdin: stdin === undefined ? "ignore" : typeof stdin === "string" ? Buffer.from(stdin) : stdin,
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout;
}
const gitText = (repo: TempRepo, args: string[], stdin?: Uint8Array | string, env?: Record<string, string>) =>
  gitBytes(repo, args, stdin, env).toString().trim();

/** `git fsck --strict` on the repository: what it reports, "" when clean. */
function fsck(repo: TempRepo): string {
  const r = repo.tryGit("fsck", "--strict", "--no-dangling", "--no-progress");
  return r.code === 0 ? r.stderr.trim() : `exit ${r.code}: ${r.stdout}${r.stderr}`;
}

const BLOBS: [string, Uint8Array][] = [
  ["empty", new Uint8Array(0)],
  ["text", Buffer.from('{"role":"user","content":"hello"}\n')],
  ["no final newline", Buffer.from("last line")],
  ["CRLF", Buffer.from("a\r\nb\r\n")],
  ["UTF-8 beyond the BMP", Buffer.from("naïve café 😀 \uFF21\n")],
  ["NUL and invalid UTF-8", Uint8Array.from([0, 1, 2, 0xff, 0xfe, 0xc3, 0x28, 0, 10])],
  ["300 KB of noise", Uint8Array.from({ length: 300_000 }, (_, i) => (i * 2654435761) >>> 24)],
];

describe("blobs", () => {
  test.each(BLOBS)("%s: the hash and content git hash-object writes", async (_name, content) => {
    const { repo, store } = repoWithStore();
    const mine = store.write("blob", content);
    await store.flush();
    store.close();
    expect(mine).toBe(gitText(repo, ["hash-object", "--stdin"], content));
    expect(Buffer.compare(gitBytes(repo, ["cat-file", "blob", mine]), Buffer.from(content))).toBe(0);
    expect(fsck(repo)).toBe("");
  });
});

describe("trees", () => {
  /** The same entries through the store and through `git mktree`. */
  async function bothTrees(repo: TempRepo, store: ObjectStore, entries: TreeEntry[]): Promise<[string, string]> {
    const mine = store.write("tree", serializeTree(entries));
    await store.flush();
    const input = entries.map((e) => `${e.mode === MODE_TREE ? "040000 tree" : `${e.mode} blob`} ${e.hash}\t${e.name}`).join("\n");
    return [mine, gitText(repo, ["mktree"], input ? `${input}\n` : "")];
  }

  test("names that sort differently as trees (a, a.b, a-c, a0, a/…), given in any order", async () => {
    const { repo, store } = repoWithStore();
    const blob = store.write("blob", Buffer.from("x\n"));
    const sub = store.write("tree", serializeTree([{ mode: MODE_BLOB, name: "f", hash: blob }]));
    await store.flush();
    const names: [string, boolean][] = [
      ["a", true], // sorts as "a/": after "a.b" and "a-c", before "a0"
      ["a.b", false],
      ["a-c", false],
      ["a0", false],
      ["ab", true],
      ["a.b.c", true],
      ["b", false],
      ["B", false],
      ["é", false],
      ["😀", true],
      ["\uFF21", false], // above U+FFFF's surrogates in UTF-16, below them in UTF-8
      ["-", false],
      ["000001.jsonl", false],
      ["000001", true],
    ];
    const entries = names.map(([name, tree]) => (tree ? { mode: MODE_TREE, name, hash: sub } : { mode: MODE_BLOB, name, hash: blob }));
    for (const order of [entries, [...entries].reverse(), [...entries].sort((x, y) => (x.hash + x.name < y.hash + y.name ? -1 : 1))]) {
      const [mine, git] = await bothTrees(repo, store, order);
      expect(mine).toBe(git);
    }
    // the empty tree too
    const [mine, git] = await bothTrees(repo, store, []);
    expect(mine).toBe(git);
    expect(mine).toBe("4b825dc642cb6eb9a060e54bf8d69288fbee4904");
    store.close();
    expect(fsck(repo)).toBe("");
  });
});

describe("commits", () => {
  const tree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
  const cases: [string, string, number][] = [
    ["a subject without a newline", "aiflare: entry 0123", 0],
    ["trailers", "aiflare: entry 0123456\n\nEntry: 0123456789abcdef0123456789abcdef01234567\nSession: s-1\nAction: add\n", 1],
    ["several paragraphs and UTF-8", "aiflare: café 😀\n\nbody line\n\nlast\n", 2],
  ];

  test.each(cases)("%s: what git commit-tree writes with the same identity, date and parents", async (_name, message, parentCount) => {
    const { repo, store } = repoWithStore();
    const when = new Date(Date.UTC(2026, 10, 29, 10, 0, 0));
    const parents: string[] = [];
    for (let i = 0; i < parentCount; i++) parents.push(store.write("commit", serializeCommit(tree, [], `parent ${i}`, when)));
    const mine = store.write("commit", serializeCommit(tree, parents, message, when));
    await store.flush();
    store.close();
    const stamp = `${when.getTime() / 1000} +0000`;
    const ident = { GIT_AUTHOR_NAME: "aiflare", GIT_AUTHOR_EMAIL: "aiflare@localhost", GIT_AUTHOR_DATE: stamp };
    const env = { ...ident, GIT_COMMITTER_NAME: "aiflare", GIT_COMMITTER_EMAIL: "aiflare@localhost", GIT_COMMITTER_DATE: stamp };
    const body = message.endsWith("\n") ? message : `${message}\n`;
    const git = gitText(repo, ["commit-tree", tree, ...parents.flatMap((p) => ["-p", p])], body, env);
    expect(mine).toBe(git);
    expect(fsck(repo)).toBe("");
  });
});

describe("refs", () => {
  test("a ref update writes the file git update-ref writes, loose or over packed-refs", async () => {
    const { repo, commonDir } = repoWithStore();
    repo.commit("one");
    const first = repo.git("rev-parse", "HEAD");
    repo.commit("two");
    const second = repo.git("rev-parse", "HEAD");
    const mine = "refs/heads/aiflare/mine";
    const theirs = "refs/heads/aiflare/theirs";
    for (const [value, packFirst] of [[first, false], [second, false], [first, true]] as const) {
      if (packFirst) repo.git("pack-refs", "--all");
      await updateRefLocked(commonDir, mine, () => value);
      repo.git("update-ref", theirs, value);
      expect(readFileSync(join(commonDir, mine), "latin1")).toBe(readFileSync(join(commonDir, theirs), "latin1"));
      expect(repo.git("rev-parse", mine)).toBe(value);
      // listed once, like git's own
      expect(repo.git("for-each-ref", "--format=%(objectname)", mine)).toBe(value);
    }
    expect(fsck(repo)).toBe("");
  });
});

describe("branches", () => {
  /** Every commit of `ref`, remade by git from its tree listing and its header: both must come out identical. */
  function remadeByGit(repo: TempRepo, ref: string): number {
    const commits = repo.git("rev-list", ref).split("\n");
    const index = join(repo.dir, "differential-index");
    for (const c of commits) {
      const raw = gitBytes(repo, ["cat-file", "commit", c]).toString("utf8");
      const split = raw.indexOf("\n\n");
      const head = raw.slice(0, split).split("\n");
      const field = (k: string) => head.filter((l) => l.startsWith(`${k} `)).map((l) => l.slice(k.length + 1));
      const tree = field("tree")[0]!;
      // the tree, as git writes it from the flat list of paths
      gitBytes(repo, ["read-tree", tree], undefined, { GIT_INDEX_FILE: index });
      expect(gitText(repo, ["write-tree"], undefined, { GIT_INDEX_FILE: index })).toBe(tree);
      const [author] = field("author");
      const [committer] = field("committer");
      const ident = (who: string, line: string) => {
        const m = /^(.*) <(.*)> (\d+ [+-]\d{4})$/.exec(line)!;
        return { [`GIT_${who}_NAME`]: m[1]!, [`GIT_${who}_EMAIL`]: m[2]!, [`GIT_${who}_DATE`]: m[3]! };
      };
      const parents = field("parent").flatMap((p) => ["-p", p]);
      const env = { ...ident("AUTHOR", author!), ...ident("COMMITTER", committer!) };
      expect(gitText(repo, ["commit-tree", tree, ...parents], raw.slice(split + 2), env)).toBe(c);
    }
    return commits.length;
  }

  function entry(i: number): Entry {
    // hashes sharing their first two hex digits land in the same fan-out tree
    const hash = (i % 3 === 0 ? "ab" : i.toString(16).padStart(2, "0")) + new Bun.CryptoHasher("sha1").update(`e${i}`).digest("hex").slice(2);
    return {
      commitHash: hash,
      title: `entry ${i} — naïve`,
      intent: "Problem → Solution → Effect",
      alternatives: "",
      diffSummary: `- src/f${i}.ts: changed`,
      tag: "FEATURE",
      changedFiles: [`src/f${i}.ts`],
      agentType: "CLAUDE_CODE",
      claudeSessionId: `s-${i % 4}`,
      branch: "main",
      conversationSnippet: `${JSON.stringify({ role: "user", content: `request ${i}` })}\n`,
      continuation: false,
      groupRootId: null,
      capturedAt: "2026-11-29T10:00:00.000Z",
    };
  }

  test("many entries and segments, then packed refs and objects: every tree and commit is git's own, fsck is clean", async () => {
    const { repo, commonDir } = repoWithStore();
    const r = { commonDir };
    for (let i = 0; i < 40; i++) {
      await writeEntry(r, entry(i));
      await appendSessionSegment(r, `s-${i % 4}`, `${JSON.stringify({ role: "assistant", content: `reply ${i}` })}\n`);
    }
    await writeEntry(r, { ...entry(3), title: "rewritten" }); // an update in place
    expect(fsck(repo)).toBe("");
    expect(remadeByGit(repo, TIMELINE_REF)).toBe(41); // 40 entries, then 1 update
    expect(remadeByGit(repo, SESSIONS_REF)).toBe(40);
    // packed: objects in a pack, refs in packed-refs; the store writes on top of both
    repo.git("gc", "-q");
    for (let i = 40; i < 50; i++) {
      await writeEntry(r, entry(i));
      await appendSessionSegment(r, `s-${i % 4}`, `${JSON.stringify({ role: "assistant", content: `reply ${i}` })}\n`);
    }
    expect(fsck(repo)).toBe("");
    expect(remadeByGit(repo, TIMELINE_REF)).toBe(51);
    expect(remadeByGit(repo, SESSIONS_REF)).toBe(50);
    expect(repo.git("ls-tree", "-r", "--name-only", SESSIONS_REF).split("\n").filter((p) => p.endsWith("/000013.jsonl"))).toHaveLength(2);
  }, 120_000);
});
