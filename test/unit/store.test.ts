import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempRepo, type TempRepo } from "../helpers.ts";
import { updateRefLocked } from "../../src/store/lock.ts";
import { tryLockFile, type HeldLock } from "../../src/util/lockfile.ts";
import {
  applyDelta,
  hashObject,
  MODE_BLOB,
  MODE_TREE,
  ObjectStore,
  parseTree,
  serializeTree,
} from "../../src/store/objects.ts";
import {
  latestSessionEntry,
  listEntryHashes,
  listTimeline,
  moveEntries,
  readEntry,
  readEntryAt,
  updateEntry,
  writeEntry,
} from "../../src/store/timeline.ts";
import { appendSessionSegment, readSession, readSessionTranscript } from "../../src/store/sessions.ts";
import { TIMELINE_REF, entryPath, legacySessionPath, sessionDir } from "../../src/store/refs.ts";
import type { Entry } from "../../src/store/entry.ts";

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

const h = (c: string) => c.repeat(40);
function entry(hash: string, extra: Partial<Entry> = {}): Entry {
  return {
    commitHash: hash,
    title: `title ${hash.slice(0, 4)}`,
    intent: "",
    alternatives: "",
    diffSummary: "",
    tag: "FEATURE",
    changedFiles: ["src/a.ts"],
    agentType: "CLAUDE_CODE",
    claudeSessionId: "sess-1",
    branch: "main",
    conversationSnippet: "",
    continuation: false,
    groupRootId: null,
    capturedAt: "2024-05-01T10:00:00.000Z",
    ...extra,
  };
}

describe("objects", () => {
  test("written objects are what git computes and reads", async () => {
    repo = tempRepo();
    const store = new ObjectStore(join(repo.root, ".git"));
    const content = Buffer.from("hello\nworld\n");
    const hash = store.write("blob", content);
    // staged until flushed: readable through the store, not yet on disk
    expect(store.read(hash, "blob").content.toString()).toBe("hello\nworld\n");
    expect(repo.tryGit("cat-file", "-e", hash).code).not.toBe(0);
    await store.flush();
    writeFileSync(join(repo.root, "x.txt"), content);
    expect(hash).toBe(repo.git("hash-object", "x.txt"));
    expect(hashObject("blob", content)).toBe(hash);
    expect(repo.git("cat-file", "-p", hash)).toBe("hello\nworld");
    store.close();
  });

  test("tree order matches git mktree (names that prefix each other, trees sort as name/)", async () => {
    repo = tempRepo();
    const store = new ObjectStore(join(repo.root, ".git"));
    const blob = store.write("blob", Buffer.from("x"));
    const sub = store.write("tree", serializeTree([{ mode: MODE_BLOB, name: "f", hash: blob }]));
    const entries = [
      { mode: MODE_BLOB, name: "a.b", hash: blob },
      { mode: MODE_TREE, name: "a", hash: sub },
      { mode: MODE_BLOB, name: "a-c", hash: blob },
      { mode: MODE_BLOB, name: "a0", hash: blob },
    ];
    // ASCII names, then names with bytes above ASCII (ordered by their UTF-8 bytes, not UTF-16 units)
    const wide = [...entries, { mode: MODE_BLOB, name: "é", hash: blob }, { mode: MODE_BLOB, name: "\u{1F600}", hash: blob }, { mode: MODE_BLOB, name: "\uFF21", hash: blob }];
    for (const list of [entries, wide]) {
      const mine = store.write("tree", serializeTree(list));
      await store.flush();
      const input = list.map((e) => `${e.mode === MODE_TREE ? "040000 tree" : "100644 blob"} ${e.hash}\t${e.name}`).join("\n");
      const r = Bun.spawnSync(["git", "mktree"], { cwd: repo.root, env: repo.env, stdin: Buffer.from(`${input}\n`) });
      expect(mine).toBe(r.stdout.toString().trim());
      // and read back as git lists it
      const listed = repo.git("ls-tree", "-z", mine).split("\0").filter(Boolean).map((l) => {
        const [meta, name] = l.split("\t");
        const [mode, , hash] = meta!.split(" ");
        return { mode: mode === "040000" ? MODE_TREE : mode!, name: name!, hash: hash! };
      });
      expect(parseTree(store.read(mine, "tree").content)).toEqual(listed);
    }
    store.close();
  });

  test("reads every object of a gc'd repository (packed, deltified) exactly as git does", () => {
    repo = tempRepo();
    // similar file versions so git stores deltas
    let text = "";
    // objects larger than any fixed read window: one that barely compresses (random), one that shrinks a lot
    const random = require("node:crypto").randomBytes(300 * 1024).toString("base64");
    for (let i = 0; i < 30; i++) {
      text += `line ${i} ${"x".repeat(40)}\n`;
      const files: Record<string, string> = { "big.txt": text, [`dir${i % 3}/f${i}.txt`]: `${i}\n` };
      if (i % 10 === 0) {
        files["random.txt"] = `${i}\n${random}`;
        files["zeros.txt"] = `${i}\n${"0".repeat(500 * 1024)}`;
      }
      repo.commit(`c${i}`, files);
    }
    repo.git("gc", "-q", "--aggressive");
    const all = repo.git("cat-file", "--batch-all-objects", "--batch-check").split("\n");
    expect(all.length).toBeGreaterThan(90);
    expect(existsSync(join(repo.root, ".git", "objects", "pack"))).toBe(true);
    const store = new ObjectStore(join(repo.root, ".git"));
    const batch = Bun.spawnSync(["git", "cat-file", "--batch"], {
      cwd: repo.root,
      env: repo.env,
      stdin: Buffer.from(all.map((l) => l.split(" ")[0]).join("\n") + "\n"),
    }).stdout as Buffer;
    let pos = 0;
    let deltas = 0;
    for (const line of all) {
      const [hash, type, size] = line.split(" ");
      const nl = batch.indexOf(10, pos);
      const body = batch.subarray(nl + 1, nl + 1 + Number(size));
      pos = nl + 1 + Number(size) + 1;
      const obj = store.read(hash!);
      expect(obj.type).toBe(type as never);
      expect(obj.content.equals(body)).toBe(true);
      deltas++;
    }
    expect(deltas).toBe(all.length);
    store.close();
  }, 60_000); // 30 commits and an aggressive gc: seconds on a busy machine

  test("applyDelta copies and inserts", () => {
    const base = Buffer.from("0123456789");
    // base size 10, result size 7: copy offset 2 size 3, insert "ab", copy offset 8 size 2
    const delta = Buffer.from([10, 7, 0x80 | 0x01 | 0x10, 2, 3, 2, 97, 98, 0x80 | 0x01 | 0x10, 8, 2]);
    expect(applyDelta(base, delta).toString()).toBe("234ab89");
  });
});

describe("objects git alone can find", () => {
  test("an object in an alternate object store is read through git", () => {
    repo = tempRepo();
    const other = tempRepo();
    try {
      const hash = other.commit("only in the other repository", { "alt.txt": "from the alternate\n" });
      const blob = other.git("rev-parse", `${hash}:alt.txt`);
      writeFileSync(join(repo.root, ".git", "objects", "info", "alternates"), `${join(other.root, ".git", "objects")}\n`);
      const store = new ObjectStore(join(repo.root, ".git"));
      const obj = store.read(blob, "blob");
      expect(obj.content.toString()).toBe("from the alternate\n");
      expect(store.tryRead("0".repeat(40))).toBeNull();
      store.close();
    } finally {
      other.cleanup();
    }
  });
});

describe("ref lock", () => {
  test("a stale lock left by a killed process is recovered", async () => {
    repo = tempRepo();
    const common = join(repo.root, ".git");
    const head = repo.git("rev-parse", "HEAD");
    const lock = join(common, "refs/heads/stale.lock");
    writeFileSync(lock, "");
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    await updateRefLocked(common, "refs/heads/stale", () => head, { staleMs: 1000 });
    expect(repo.git("rev-parse", "refs/heads/stale")).toBe(head);
    expect(existsSync(lock)).toBe(false);
  });

  test("a live lock makes the writer wait, then fail with an actionable LOCKED error", async () => {
    repo = tempRepo();
    const common = join(repo.root, ".git");
    writeFileSync(join(common, "refs/heads/busy.lock"), "");
    const err = await updateRefLocked(common, "refs/heads/busy", () => h("a"), { timeoutMs: 100 }).catch((e) => e);
    expect(err.code).toBe("LOCKED");
    expect(err.message).toContain("delete that file");
  });

  test("an update whose lock was taken over while it computed fails, and leaves the ref and the new holder's lock alone", async () => {
    repo = tempRepo();
    const common = join(repo.root, ".git");
    const head = repo.git("rev-parse", "HEAD");
    const lock = join(common, "refs/heads/slow.lock");
    let other: HeldLock | null = null;
    const err = await updateRefLocked(
      common,
      "refs/heads/slow",
      () => {
        // held past its stale age (a slow compute): another writer takes it over and is writing its value
        const old = new Date(Date.now() - 60_000);
        utimesSync(lock, old, old);
        other = tryLockFile(lock, { staleMs: 1000, waitMs: 0, maxPollMs: 1, mode: 0o644, busy: () => new Error("busy") });
        writeFileSync(other!.fd, "the other writer's value");
        return head;
      },
      { staleMs: 1000 },
    ).catch((e) => e);
    expect(err.code).toBe("LOCKED");
    expect(existsSync(join(common, "refs/heads/slow"))).toBe(false);
    expect(readFileSync(lock, "utf8")).toBe("the other writer's value");
    other!.release();
    expect(existsSync(lock)).toBe(false);
  });

  test("compute sees the value under the lock and null leaves the ref alone", async () => {
    repo = tempRepo();
    const common = join(repo.root, ".git");
    const head = repo.git("rev-parse", "HEAD");
    const seen: (string | null)[] = [];
    await updateRefLocked(common, "refs/heads/main", (cur) => {
      seen.push(cur);
      return null;
    });
    expect(seen).toEqual([head]);
    expect(repo.git("rev-parse", "main")).toBe(head);
    expect(existsSync(join(common, "refs/heads/main.lock"))).toBe(false);
  });
});

describe("timeline", () => {
  test("entries live at entries/<2>/<38>.json as compact JSON with a newline", async () => {
    repo = tempRepo();
    const r = { commonDir: join(repo.root, ".git") };
    await writeEntry(r, entry(h("a")));
    await writeEntry(r, entry(h("b"), { groupRootId: h("a") }));
    expect(repo.git("ls-tree", "-r", "--name-only", "aiflare/timeline/v1").split("\n")).toEqual([
      entryPath(h("a")),
      entryPath(h("b")),
    ]);
    const raw = Bun.spawnSync(["git", "show", `aiflare/timeline/v1:${entryPath(h("b"))}`], { cwd: repo.root }).stdout.toString();
    expect(raw.endsWith("}\n")).toBe(true);
    expect(raw.split("\n")).toHaveLength(2);
    expect(JSON.parse(raw).groupRootId).toBe(h("a"));
    // orphan history, one commit per write, aiflare's identity
    expect(repo.git("rev-list", "--count", "aiflare/timeline/v1")).toBe("2");
    expect(repo.tryGit("merge-base", "main", "aiflare/timeline/v1").code).not.toBe(0);
    expect(repo.git("log", "-1", "--format=%an <%ae>", "aiflare/timeline/v1")).toBe("aiflare <aiflare@localhost>");
    expect(repo.tryGit("fsck", "--strict").code).toBe(0);
  });

  test("upsert replaces without a duplicate; an identical write makes no commit", async () => {
    repo = tempRepo();
    const r = { commonDir: join(repo.root, ".git") };
    await writeEntry(r, entry(h("a")));
    await writeEntry(r, entry(h("a"), { intent: "why" }));
    await writeEntry(r, entry(h("a"), { intent: "why" }));
    expect(await listEntryHashes(r)).toEqual([h("a")]);
    expect((await readEntry(r, h("a")))?.intent).toBe("why");
    expect(repo.git("rev-list", "--count", "aiflare/timeline/v1")).toBe("2");
  });

  test("an entry read at a tip is what updateEntry changes while the branch stays there, and read again once it moved", async () => {
    repo = tempRepo();
    const r = { commonDir: join(repo.root, ".git") };
    await writeEntry(r, entry(h("a"), { intent: "first" }));
    const read = await readEntryAt(r, h("a"));
    expect(read.entry?.intent).toBe("first");
    expect(read.tip).toBe(repo.git("rev-parse", "aiflare/timeline/v1"));
    const seen: (string | undefined)[] = [];
    const change = (current: Entry | null) => {
      seen.push(current?.intent);
      return current && { ...current, title: `${current.title}!` };
    };
    // the same tip: the entry handed over is the one read (the same object), not a second read of it
    await updateEntry(r, h("a"), (current) => (expect(current).toBe(read.entry), change(current)), { read });
    // another writer moved the branch since: the entry is read at the new tip, never the stale one
    await writeEntry(r, entry(h("a"), { intent: "second" }));
    await updateEntry(r, h("a"), change, { read });
    expect(seen).toEqual(["first", "second"]);
    expect((await readEntry(r, h("a")))?.title).toBe(`title aaaa!`);
    expect((await readEntry(r, h("a")))?.intent).toBe("second");
  });

  test("invalid entries are refused before anything is written", async () => {
    repo = tempRepo();
    const r = { commonDir: join(repo.root, ".git") };
    const err = await writeEntry(r, { ...entry(h("a")), tag: "NOPE" as never }).catch((e) => e);
    expect(err.code).toBe("INVALID_ARGUMENT");
    expect(repo.tryGit("rev-parse", "--verify", "-q", "aiflare/timeline/v1").code).not.toBe(0);
  });

  test("moveEntries moves content, merges squashes and repoints group roots", async () => {
    repo = tempRepo();
    const r = { commonDir: join(repo.root, ".git") };
    await writeEntry(r, entry(h("a"), { intent: "root" }));
    await writeEntry(r, entry(h("b"), { groupRootId: h("a") }));
    await writeEntry(r, entry(h("c"), { groupRootId: h("a"), changedFiles: ["c.ts"] }));
    // a -> d, b -> e, c squashed into e
    expect(await moveEntries(r, [[h("a"), h("d")], [h("b"), h("e")], [h("c"), h("e")]])).toBe(3);
    expect((await listEntryHashes(r)).sort()).toEqual([h("d"), h("e")]);
    const d = await readEntry(r, h("d"));
    const e = await readEntry(r, h("e"));
    expect(d?.intent).toBe("root");
    expect(d?.commitHash).toBe(h("d"));
    expect(e?.groupRootId).toBe(h("d"));
    expect(e?.changedFiles.sort()).toEqual(["c.ts", "src/a.ts"]);
    // an entry outside the rewrite that points at a moved root is repointed too
    await writeEntry(r, entry(h("f"), { groupRootId: h("d") }));
    await moveEntries(r, [[h("d"), h("1")]]);
    expect((await readEntry(r, h("f")))?.groupRootId).toBe(h("1"));
    expect((await readEntry(r, h("e")))?.groupRootId).toBe(h("1"));
    expect(await moveEntries(r, [[h("9"), h("8")]])).toBe(0);
    expect(repo.tryGit("fsck", "--strict").code).toBe(0);
  });

  test("latestSessionEntry follows the session through other sessions' writes and moves", async () => {
    repo = tempRepo();
    const r = { commonDir: join(repo.root, ".git") };
    await writeEntry(r, entry(h("a")));
    await writeEntry(r, entry(h("b"), { claudeSessionId: "other" }));
    expect((await latestSessionEntry(r, "sess-1"))?.commitHash).toBe(h("a"));
    await moveEntries(r, [[h("a"), h("c")]]);
    expect((await latestSessionEntry(r, "sess-1"))?.commitHash).toBe(h("c"));
    expect(await latestSessionEntry(r, "sess-1", h("c"))).toBeNull();
    expect(await latestSessionEntry(r, "nobody")).toBeNull();
  });

  test("parallel writers in one process keep every entry", async () => {
    repo = tempRepo();
    const r = { commonDir: join(repo.root, ".git") };
    const hashes = Array.from({ length: 24 }, (_, i) => i.toString(16).padStart(2, "0").repeat(20));
    await Promise.all(hashes.map((x) => writeEntry(r, entry(x))));
    expect((await listEntryHashes(r)).sort()).toEqual(hashes.sort());
    expect((await listTimeline(r)).length).toBe(24);
  });

  test("works after git gc (packed refs and objects)", async () => {
    repo = tempRepo();
    const r = { commonDir: join(repo.root, ".git") };
    await writeEntry(r, entry(h("a")));
    repo.git("gc", "-q");
    expect(existsSync(join(repo.root, ".git", TIMELINE_REF))).toBe(false);
    expect((await readEntry(r, h("a")))?.title).toBe("title aaaa");
    await writeEntry(r, entry(h("b")));
    expect((await listEntryHashes(r)).sort()).toEqual([h("a"), h("b")]);
    expect(repo.tryGit("fsck", "--strict").code).toBe(0);
  });

  test("sessions are stored redacted as append-only segments under a fan-out; bad ids are refused", async () => {
    repo = tempRepo();
    const r = { commonDir: join(repo.root, ".git") };
    expect(await appendSessionSegment(r, "sess-1", '{"role":"user","content":"see /home/alice/x"}\n')).toBe(1);
    expect(await appendSessionSegment(r, "sess-1", '{"role":"assistant","content":"two"}\n')).toBe(2);
    expect(await appendSessionSegment(r, "sess-1", "  \n")).toBeNull();
    const dir = sessionDir("sess-1");
    expect(dir).toMatch(/^sessions\/[0-9a-f]{2}\/sess-1$/);
    expect(repo.git("ls-tree", "--name-only", "aiflare/sessions/v1", `${dir}/`).split("\n")).toEqual([
      `${dir}/000001.jsonl`,
      `${dir}/000002.jsonl`,
    ]);
    const first = repo.git("show", `aiflare/sessions/v1:${dir}/000001.jsonl`);
    expect(first).not.toContain("/home/alice");
    expect(await readSession(r, "sess-1")).toBe(`${first}\n{"role":"assistant","content":"two"}\n`);
    expect(await readSession(r, "missing")).toBeNull();
    const err = await appendSessionSegment(r, "../x", "x").catch((e) => e);
    expect(err.code).toBe("INVALID_SESSION_ID");
    expect(repo.tryGit("fsck", "--strict").code).toBe(0);
  });

  test("a first-layout transcript is read before the segments, and dropped by a whole-log segment", async () => {
    repo = tempRepo();
    const r = { commonDir: join(repo.root, ".git") };
    repo.git("checkout", "-q", "--orphan", "tmp");
    repo.git("rm", "-rq", "--cached", ".");
    const blob = Bun.spawnSync(["git", "hash-object", "-w", "--stdin"], { cwd: repo.root, env: repo.env, stdin: Buffer.from("old\n") }).stdout.toString().trim();
    const tree = Bun.spawnSync(["git", "mktree"], { cwd: repo.root, env: repo.env, stdin: Buffer.from(`040000 tree ${
      Bun.spawnSync(["git", "mktree"], { cwd: repo.root, env: repo.env, stdin: Buffer.from(`100644 blob ${blob}\ts.jsonl\n`) }).stdout.toString().trim()
    }\tsessions\n`) }).stdout.toString().trim();
    repo.git("update-ref", "refs/heads/aiflare/sessions/v1", repo.git("commit-tree", tree, "-m", "old"));
    expect(legacySessionPath("s")).toBe("sessions/s.jsonl");
    await appendSessionSegment(r, "s", '{"role":"user","content":"new"}\n');
    expect(readSessionTranscript(r, "s")?.text).toBe('old\n{"role":"user","content":"new"}\n');
    await appendSessionSegment(r, "s", '{"role":"user","content":"all"}\n', { replaceLegacy: true });
    expect(readSessionTranscript(r, "s")?.text).toBe('{"role":"user","content":"new"}\n{"role":"user","content":"all"}\n');
  });
});
