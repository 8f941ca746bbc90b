/**
 * Every path that writes into the two aiflare branches, and every request body of the sync, goes through the
 * redactor (SPEC §8). Each test feeds realistic secrets in through the compiled binary, then reads back, with
 * real git, every object reachable from both branches (not only the tip) and every body the backend received.
 */
import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, binary, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { makeEntry, startBackend, writeConfig, writeEntries, writeSessions, type Backend } from "../sync-fixtures.ts";
import { agentCommit, aiflareObjects, capture, fsckClean, session, showEntry, storedTranscript } from "./capture-support.ts";

setDefaultTimeout(30_000);

const TIMELINE = "refs/heads/aiflare/timeline/v1";
const SESSIONS = "refs/heads/aiflare/sessions/v1";

// Fake but well-formed secrets of the kinds people paste into prompts.
const AWS_ID = "AKIAQWERTYUIOPASDF23";
const AWS_SECRET = "Zq8v3Lm2Tn9Rb4Xc7Yd1We6Pf5Gh0Jk2Ls8Ma3Qn";
const GHP = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
const OPENAI = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0hIj3kLm6nOp9qRs2tUv5wXy8zT3BlbkFJ";
const PG_PASSWORD = "S3cr3tPassw0rd";
const PG_URL = `postgres://app:${PG_PASSWORD}@db.internal:5432/prod`;
const PEM_LINES = [
  "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
  "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
  "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo",
];
const PEM = `-----BEGIN RSA PRIVATE KEY-----\n${PEM_LINES.join("\n")}\n-----END RSA PRIVATE KEY-----`;
const HOME_DIR = "/home/alice";
const API_KEY = "afk_live_9f3c2a7e5b1d4f6a8c0e2b4d";

/** Substrings that must never be found in anything aiflare writes or sends. */
const FORBIDDEN: Record<string, string> = {
  AWS_ID,
  AWS_SECRET,
  GHP,
  OPENAI,
  PG_PASSWORD,
  PEM_HEADER: "BEGIN RSA PRIVATE KEY",
  ...Object.fromEntries(PEM_LINES.map((l, i) => [`PEM_LINE_${i}`, l])),
  HOME_DIR,
};

/** A prompt a developer might really send, with every kind of secret in it. */
const PROMPT_ALL =
  `The deploy fails. My creds: AWS_ACCESS_KEY_ID=${AWS_ID} and aws_secret_access_key=${AWS_SECRET}.\n` +
  `GITHUB_TOKEN=${GHP}\nOPENAI_API_KEY=${OPENAI}\nThe database is ${PG_URL}\n` +
  `Here is the deploy key:\n${PEM}\nThe repo is checked out at ${HOME_DIR}/projects/shop/src/deploy.ts`;

/** Names of the secrets present in `text`, raw or as they look inside one or two levels of JSON strings. */
function leaks(text: string): string[] {
  const found: string[] = [];
  for (const [name, secret] of Object.entries(FORBIDDEN)) {
    const once = JSON.stringify(secret).slice(1, -1);
    const twice = JSON.stringify(once).slice(1, -1);
    if (text.includes(secret) || text.includes(once) || text.includes(twice)) found.push(name);
  }
  return found;
}

/** Asserts that the branches hold at least `min` objects and that none of them holds a secret. */
function expectBranchesClean(repo: TempRepo, min: number): string {
  const { count, text } = aiflareObjects(repo);
  expect(count).toBeGreaterThanOrEqual(min);
  expect(leaks(text)).toEqual([]);
  return text;
}

function refOf(repo: TempRepo, ref: string): string | null {
  const r = repo.tryGit("rev-parse", "--verify", "--quiet", ref);
  return r.code === 0 ? r.stdout.trim() : null;
}

function commitCount(repo: TempRepo, ref: string): number {
  return Number(repo.git("rev-list", "--count", ref));
}

function storedSession(repo: TempRepo, id: string): string {
  return storedTranscript(repo, id);
}

/** JSONL text: every line parses; returns the records. */
function jsonl(text: string): { role: string; content: string }[] {
  return text
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

function logText(repo: TempRepo): string {
  const path = join(repo.root, ".context-capture", "aiflare.log");
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}

/** aiflare.yml stays out of the user's commits, as `install` arranges. */
function excludeConfig(repo: TempRepo): void {
  writeFileSync(join(repo.root, ".git", "info", "exclude"), "aiflare.yml\n.context-capture/\n");
}

/** Kinds the redactor must have put in place of PROMPT_ALL's secrets. */
const KINDS_ALL = ["aws-access-key-id", "github-pat", "openai-api-key", "postgres-uri", "private-key"];

function expectAllKinds(text: string): void {
  for (const kind of KINDS_ALL) expect(text).toContain(`<REDACTED:${kind}>`);
  // the AWS secret key is matched both as such and as a secret assignment; either kind will do
  expect(text).toMatch(/aws_secret_access_key=<REDACTED:(aws-secret-access-key|secret-assignment)>/);
  expect(text).toContain("~/projects/shop/src/deploy.ts");
}

let repo: TempRepo | undefined;
let backend: Backend | undefined;

beforeAll(() => {
  binary();
});
afterEach(() => {
  backend?.stop();
  backend = undefined;
  if (repo) expect(fsckClean(repo)).toBe(true);
  repo?.cleanup();
  repo = undefined;
});

describe("every write into the aiflare branches is redacted", () => {
  test("1. commit hook: the entry (title, conversationSnippet) and sessions/S.jsonl, over two commits", async () => {
    repo = tempRepo();
    excludeConfig(repo);
    const s = session(repo, "sess-hook-1");
    expect((await s.prompt(PROMPT_ALL)).code).toBe(0);
    expect((await s.stop(`I will not store your key ${AWS_ID}; the config in ${HOME_DIR}/projects/shop is fixed.`)).code).toBe(0);
    const first = agentCommit(repo, `Fix deploy using ${GHP} from ${HOME_DIR}/.netrc`, { "deploy.ts": "export {};\n" });
    const r1 = await s.bash(`git add -A && git commit -m "Fix deploy"`, first.stdout);
    expect(r1.code).toBe(0);
    expect(JSON.parse(r1.stdout).hookSpecificOutput.additionalContext).toContain(first.hash);

    const e1 = showEntry(repo, first.hash)!;
    expect(e1.commitHash).toBe(first.hash);
    expect(e1.title).toBe("Fix deploy using <REDACTED:github-pat> from ~/.netrc");
    expect(jsonl(e1.conversationSnippet).map((l) => l.role)).toEqual(["user", "assistant"]);
    expectAllKinds(e1.conversationSnippet);
    expect(e1.conversationSnippet).toContain("~/projects/shop is fixed");
    const t1 = jsonl(storedSession(repo, "sess-hook-1"));
    expect(t1).toHaveLength(2);
    expectAllKinds(t1[0]!.content);

    // a second request and commit: the first versions stay in history and must be clean too
    await s.prompt(`Now use the staging DB ${PG_URL.replace("prod", "staging")} and token ${GHP}`);
    await s.stop("Done.");
    const second = agentCommit(repo, "Point staging at the new database", { "db.ts": `export const url = "x";\n` });
    expect((await s.bash(`git commit -am "Point staging"`, second.stdout)).code).toBe(0);
    const e2 = showEntry(repo, second.hash)!;
    expect(e2.conversationSnippet).toContain("<REDACTED:postgres-uri>");
    expect(e2.conversationSnippet).toContain("<REDACTED:github-pat>");
    expect(e2.groupRootId).toBeNull();
    expect(jsonl(storedSession(repo, "sess-hook-1"))).toHaveLength(4);

    expect(commitCount(repo, TIMELINE)).toBe(2);
    expect(commitCount(repo, SESSIONS)).toBe(2);
    expectBranchesClean(repo, 10);
  });

  test("2. aiflare capture: secrets in every text flag", async () => {
    repo = tempRepo();
    excludeConfig(repo);
    const hash = repo.commit("Add billing client", { "billing.ts": "export {};\n" });
    const snippet = [
      JSON.stringify({ role: "user", content: `Use this key: ${OPENAI}\nand this one:\n${PEM}` }),
      JSON.stringify({ role: "assistant", content: `Wired it up in ${HOME_DIR}/projects/shop/billing.ts` }),
    ].join("\n");
    const args = [
      "--commit-hash",
      hash.slice(0, 10),
      "--claude-session-id",
      "sess-cap-1",
      "--title",
      `Billing with ${GHP}`,
      "--intent",
      `Problem: AWS calls failed with ${AWS_ID} / aws_secret_access_key=${AWS_SECRET}.\nSolution: rotate.`,
      "--alternatives",
      `Hard-code ${PG_URL} (rejected: leaks the password).`,
      "--diff-summary",
      `- ${HOME_DIR}/projects/shop/billing.ts: new client`,
      "--conversation-snippet",
      snippet,
      "--tag",
      "FEATURE",
      "--json",
    ];
    const r = await capture(repo, args);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(leaks(r.stdout)).toEqual([]);
    const e = showEntry(repo, hash)!;
    expect(e.commitHash).toBe(hash);
    expect(e.title).toBe("Billing with <REDACTED:github-pat>");
    expect(e.intent).toContain("<REDACTED:aws-access-key-id>");
    expect(e.intent).toMatch(/aws_secret_access_key=<REDACTED:(aws-secret-access-key|secret-assignment)>/);
    expect(e.alternatives).toContain("<REDACTED:postgres-uri>");
    expect(e.diffSummary).toBe("- ~/projects/shop/billing.ts: new client");
    const lines = jsonl(e.conversationSnippet);
    expect(lines[0]!.content).toContain("<REDACTED:openai-api-key>");
    expect(lines[0]!.content).toContain("<REDACTED:private-key>");
    expect(lines[1]!.content).toContain("~/projects/shop/billing.ts");

    // capturing again updates the entry: both versions are in the history
    const again = await capture(repo, ["--commit-hash", hash, "--intent", `Updated: the token was ${GHP}`]);
    expect(again.code).toBe(0);
    expect(showEntry(repo, hash)!.intent).toBe("Updated: the token was <REDACTED:github-pat>");
    expect(commitCount(repo, TIMELINE)).toBe(2);
    expectBranchesClean(repo, 8);
  });

  test("3. hook session-end stores the final transcript redacted", async () => {
    repo = tempRepo();
    excludeConfig(repo);
    const s = session(repo, "sess-end-1");
    await s.prompt("Add a health check");
    await s.stop("Added.");
    const c = agentCommit(repo, "Add health check", { "health.ts": "export {};\n" });
    expect((await s.bash(`git commit -m "Add health check"`, c.stdout)).code).toBe(0);
    // after the last commit, the user pastes secrets; only session-end stores them
    await s.prompt(PROMPT_ALL);
    await s.stop(`Noted: never commit ${OPENAI} or ${HOME_DIR}/projects/shop/.env`);
    const end = await s.end();
    expect(end.code).toBe(0);
    expect(end.stdout).toBe("");
    // stored, yet kept live: no commit has taken these lines as its delta yet
    expect(existsSync(join(repo.root, ".context-capture", ".claude-prompts-sess-end-1"))).toBe(true);

    const t = jsonl(storedSession(repo, "sess-end-1"));
    expect(t).toHaveLength(4);
    expectAllKinds(t[2]!.content);
    expect(t[3]!.content).toBe("Noted: never commit <REDACTED:openai-api-key> or ~/projects/shop/.env");
    expect(commitCount(repo, SESSIONS)).toBe(2);
    expectBranchesClean(repo, 6);
  });

  test("3b. hook session-end without any commit writes only the sessions branch, redacted", async () => {
    repo = tempRepo();
    const s = session(repo, "sess-end-2");
    await s.prompt(PROMPT_ALL);
    const end = await s.end();
    expect(end.code).toBe(0);
    expect(end.stdout).toBe("");
    expect(refOf(repo, TIMELINE)).toBeNull();
    expectAllKinds(jsonl(storedSession(repo, "sess-end-2"))[0]!.content);
    expectBranchesClean(repo, 4);
  });

  test("4. hook post-rewrite (amend) moves the entry and it stays redacted", async () => {
    repo = tempRepo();
    excludeConfig(repo);
    const hook = join(repo.root, ".git", "hooks", "post-rewrite");
    writeFileSync(hook, `#!/bin/sh\nexec "${BIN}" hook post-rewrite "$@"\n`, { mode: 0o755 });
    const s = session(repo, "sess-rw-1");
    await s.prompt(PROMPT_ALL);
    await s.stop("Fixed.");
    const c = agentCommit(repo, `Rotate ${GHP}`, { "rotate.ts": "export {};\n" });
    expect((await s.bash(`git commit -m "Rotate"`, c.stdout)).code).toBe(0);
    expect((await capture(repo, ["--commit-hash", c.hash, "--intent", `Old key ${AWS_ID} leaked from ${HOME_DIR}/x`])).code).toBe(0);
    const before = showEntry(repo, c.hash)!;

    // the user amends by hand: git runs post-rewrite, which moves the entry
    const amend = repo.tryGit("commit", "--amend", "-q", "-m", `Rotate the token (was ${GHP})`);
    expect(amend.code).toBe(0);
    const moved = repo.git("rev-parse", "HEAD");
    expect(moved).not.toBe(c.hash);
    expect(showEntry(repo, c.hash)).toBeNull();
    const after = showEntry(repo, moved)!;
    expect(after).toEqual({ ...before, commitHash: moved });
    expect(after.title).toBe("Rotate <REDACTED:github-pat>");
    expect(after.intent).toBe("Old key <REDACTED:aws-access-key-id> leaked from ~/x");
    expectAllKinds(after.conversationSnippet);
    expect(repo.git("log", "-1", "--format=%B", TIMELINE)).toContain(`Moved: ${c.hash} ${moved}`);
    expectBranchesClean(repo, 12);
  });

  test("4b. post-rewrite redacts an entry an older writer stored unredacted when it moves it", async () => {
    repo = tempRepo();
    const old = repo.commit("Old work");
    writeEntries(repo, [makeEntry(old, { intent: `key ${AWS_ID} at ${HOME_DIR}/w`, conversationSnippet: `${JSON.stringify({ role: "user", content: PROMPT_ALL })}\n` })]);
    expect(leaks(aiflareObjects(repo).text)).toContain("AWS_ID"); // the input really is unredacted
    repo.git("commit", "--amend", "-q", "-m", "Old work, amended");
    const moved = repo.git("rev-parse", "HEAD");
    const r = await runBin(["hook", "post-rewrite", "amend"], { cwd: repo.root, env: repo.env, stdin: `${old} ${moved}\n` });
    expect(r.code).toBe(0);
    // the commit that moved it wrote only redacted blobs
    const tipBlobs = repo
      .git("diff-tree", "-r", "--no-commit-id", `${TIMELINE}^`, TIMELINE)
      .split("\n")
      .map((l) => l.split(" ")[3]!)
      .filter((oid) => !/^0+$/.test(oid));
    expect(tipBlobs).toHaveLength(1);
    const blob = repo.git("cat-file", "-p", tipBlobs[0]!);
    expect(leaks(blob)).toEqual([]);
    const e = showEntry(repo, moved)!;
    expect(e.intent).toBe("key <REDACTED:aws-access-key-id> at ~/w");
    expectAllKinds(e.conversationSnippet);
  });
});

describe("every request body of the sync is redacted", () => {
  test("5. entries and sessions stored unredacted by another writer arrive redacted; the key never reaches the log", async () => {
    repo = tempRepo();
    excludeConfig(repo);
    const c1 = repo.commit("first");
    const c2 = repo.commit("second");
    writeEntries(repo, [
      makeEntry(c1, {
        claudeSessionId: "sess-sync-1",
        title: `Use ${GHP}`,
        intent: `Problem: ${AWS_ID} / aws_secret_access_key=${AWS_SECRET}`,
        alternatives: `Keep ${PG_URL}`,
        diffSummary: `- ${HOME_DIR}/projects/shop/a.ts`,
        changedFiles: [`${HOME_DIR}/projects/shop/a.ts`],
        branch: "main",
        conversationSnippet: `${JSON.stringify({ role: "user", content: PROMPT_ALL })}\n`,
      }),
      makeEntry(c2, { claudeSessionId: "sess-sync-1", groupRootId: c1, intent: `More: ${OPENAI}` }),
    ]);
    const transcript = [
      JSON.stringify({ role: "user", content: PROMPT_ALL }),
      JSON.stringify({ role: "assistant", content: `Stored nothing; ${HOME_DIR}/projects/shop/.env holds ${GHP}` }),
    ].join("\n");
    writeSessions(repo, { "sess-sync-1": `${transcript}\n` });
    expect(leaks(aiflareObjects(repo).text).length).toBeGreaterThanOrEqual(Object.keys(FORBIDDEN).length - 1);

    backend = startBackend();
    writeConfig(repo.root, backend.url, API_KEY);
    // a rejected key first, so that the log has something to say about the key
    backend.respond(() => new Response("bad key", { status: 401 }));
    const refused = await runBin(["sync"], { cwd: repo.root, env: repo.env });
    expect(refused.code).toBe(1);
    backend.respond(() => Response.json({ ok: true }));
    const r = await runBin(["sync"], { cwd: repo.root, env: repo.env });
    expect(r.code).toBe(0);

    expect(backend.received.length).toBeGreaterThanOrEqual(3);
    for (const req of backend.received) {
      expect(req.key).toBe(API_KEY);
      expect(leaks(JSON.stringify(req.body))).toEqual([]);
    }
    const captures = backend.captures();
    expect(captures.map((c) => c.commitHash).sort()).toEqual([c1, c2].sort());
    const e1 = captures.find((c) => c.commitHash === c1);
    expect(e1.title).toBe("Use <REDACTED:github-pat>");
    expect(e1.intent).toContain("<REDACTED:aws-access-key-id>");
    expect(e1.intent).toMatch(/aws_secret_access_key=<REDACTED:(aws-secret-access-key|secret-assignment)>/);
    expect(e1.alternatives).toContain("<REDACTED:postgres-uri>");
    expect(e1.diffSummary).toBe("- ~/projects/shop/a.ts");
    expect(e1.changedFiles).toEqual(["~/projects/shop/a.ts"]);
    expectAllKinds(e1.conversationSnippet);
    const e2 = captures.find((c) => c.commitHash === c2);
    expect(e2.groupRootId).toBe(c1);
    expect(e2.intent).toBe("More: <REDACTED:openai-api-key>");
    const sessions = backend.sessions();
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.claudeSessionId).toBe("sess-sync-1");
    const lines = jsonl(sessions[0]!.content);
    expectAllKinds(lines[0]!.content);
    expect(lines[1]!.content).toBe("Stored nothing; ~/projects/shop/.env holds <REDACTED:github-pat>");

    const log = logText(repo);
    expect(log).toContain("sync");
    expect(log).not.toContain(API_KEY);
    expect(leaks(log)).toEqual([]);
    for (const out of [refused, r]) {
      expect(out.stdout + out.stderr).not.toContain(API_KEY);
      expect(leaks(out.stdout + out.stderr)).toEqual([]);
    }
  });
  test("5b. the pre-push hook's background sync sends the same redacted bodies", async () => {
    repo = tempRepo();
    excludeConfig(repo);
    const c = repo.commit("pushed work");
    writeEntries(repo, [
      makeEntry(c, {
        claudeSessionId: "sess-push-1",
        title: `Push ${GHP}`,
        conversationSnippet: `${JSON.stringify({ role: "user", content: PROMPT_ALL })}\n`,
      }),
    ]);
    writeSessions(repo, { "sess-push-1": `${JSON.stringify({ role: "user", content: PROMPT_ALL })}\n` });
    backend = startBackend();
    writeConfig(repo.root, backend.url, API_KEY);
    const remote = join(repo.dir, "remote.git");
    repo.git("init", "-q", "--bare", remote);
    repo.git("remote", "add", "origin", remote);
    writeFileSync(join(repo.root, ".git", "hooks", "pre-push"), `#!/bin/sh\nexec "${BIN}" hook pre-push "$@"\n`, { mode: 0o755 });

    const push = repo.tryGit("push", "origin", "main");
    expect(push.code).toBe(0);
    expect(leaks(push.stderr + push.stdout)).toEqual([]);
    // the network part runs detached after the push; wait for its outcome in the log
    let log = "";
    for (let i = 0; i < 200 && !/sync \(pre-push\)/.test(log); i++) {
      await Bun.sleep(100);
      log = logText(repo);
    }
    expect(log).toMatch(/sync \(pre-push\): sent entries=1 sessions=1/);
    expect(log).not.toContain(API_KEY);
    expect(backend.received).toHaveLength(2);
    for (const req of backend.received) {
      expect(req.key).toBe(API_KEY);
      expect(leaks(JSON.stringify(req.body))).toEqual([]);
    }
    const [entry] = backend.captures();
    expect(entry.title).toBe("Push <REDACTED:github-pat>");
    expectAllKinds(entry.conversationSnippet);
    expectAllKinds(jsonl(backend.sessions()[0]!.content)[0]!.content);
    // the aiflare branches themselves never left through git
    expect(repo.git("--git-dir", remote, "for-each-ref", "--format=%(refname)")).toBe("refs/heads/main");
  });
});

describe("fail-closed: a hard secret that stage one misses is never written or sent", () => {
  /** aiflare.yml that lets the AWS key id through stage one (stage two ignores the allowlist). */
  function allowAwsKey(repo: TempRepo, extra = ""): void {
    writeFileSync(join(repo.root, "aiflare.yml"), `${extra}redact:\n  allow:\n    - ${AWS_ID}\n`);
  }

  test("6a. hooks write nothing and exit 0 silently; capture exits 1 with a clear message", async () => {
    repo = tempRepo();
    excludeConfig(repo);
    allowAwsKey(repo);
    const s = session(repo, "sess-fc-1");
    await s.prompt(`Deploy with AWS_ACCESS_KEY_ID=${AWS_ID}`);
    await s.stop("Deployed.");
    const c1 = agentCommit(repo, "Deploy", { "deploy.ts": "export {};\n" });
    const hook = await s.bash(`git commit -m "Deploy"`, c1.stdout);
    expect(hook.code).toBe(0);
    expect(hook.stdout).toBe("");
    expect(refOf(repo, TIMELINE)).toBeNull();
    expect(refOf(repo, SESSIONS)).toBeNull();
    let log = logText(repo);
    expect(log).toContain("REDACTION_REFUSED");
    expect(log).toContain("aws-access-key-id");
    expect(log).toContain("nothing was written");
    expect(log).not.toContain(AWS_ID);

    // capture of the same commit with the secret in a flag: exit 1, says why and what to change
    const cap = await capture(repo, ["--commit-hash", c1.hash, "--claude-session-id", "sess-fc-1", "--intent", `uses ${AWS_ID}`]);
    expect(cap.code).toBe(1);
    expect(cap.stdout).toBe("");
    expect(cap.stderr).toContain("aws-access-key-id");
    expect(cap.stderr).toContain("nothing was written");
    expect(cap.stderr).toContain("redact.allow");
    expect(cap.stderr).not.toContain(AWS_ID);
    expect(refOf(repo, TIMELINE)).toBeNull();

    // once the timeline exists, a refused write leaves its tip where it was
    // (the session's uncaptured conversation still holds the key, so this capture brings its own snippet)
    const ok = await capture(repo, ["--commit-hash", c1.hash, "--claude-session-id", "sess-fc-1", "--intent", "clean", "--conversation-snippet", ""]);
    expect(ok.code).toBe(0);
    const tip = refOf(repo, TIMELINE);
    expect(tip).not.toBeNull();
    const again = await capture(repo, ["--commit-hash", c1.hash, "--title", `Key ${AWS_ID}`]);
    expect(again.code).toBe(1);
    expect(refOf(repo, TIMELINE)).toBe(tip);

    // the transcript still holds the key: session-end refuses it and keeps the live files (nothing is lost)
    const end = await s.end();
    expect(end.code).toBe(0);
    expect(end.stdout).toBe("");
    expect(refOf(repo, SESSIONS)).toBeNull();
    expect(refOf(repo, TIMELINE)).toBe(tip);
    expect(existsSync(join(repo.root, ".context-capture", ".claude-prompts-sess-fc-1"))).toBe(true);
    log = logText(repo);
    expect(log.match(/REDACTION_REFUSED/g)?.length).toBeGreaterThanOrEqual(2);
    expect(log).not.toContain(AWS_ID);
    expect(aiflareObjects(repo).text).not.toContain(AWS_ID);
  });

  test("6b. sync sends nothing of an entry or session that still holds a hard secret and reports it failed", async () => {
    repo = tempRepo();
    excludeConfig(repo);
    const bad = repo.commit("bad");
    const good = repo.commit("good");
    writeEntries(repo, [
      makeEntry(bad, { claudeSessionId: "sess-fc-bad", intent: `key ${AWS_ID}` }),
      makeEntry(good, { claudeSessionId: "sess-fc-good", intent: "clean" }),
    ]);
    writeSessions(repo, {
      "sess-fc-bad": `${JSON.stringify({ role: "user", content: "hi" })}\n`,
      "sess-fc-good": `${JSON.stringify({ role: "user", content: `AWS_ACCESS_KEY_ID=${AWS_ID}` })}\n`,
    });
    backend = startBackend();
    allowAwsKey(repo, `api_key: ${JSON.stringify(API_KEY)}\nendpoint: ${JSON.stringify(backend.url)}\n`);

    const r = await runBin(["sync", "--json"], { cwd: repo.root, env: repo.env });
    expect(r.code).toBe(1);
    const summary = JSON.parse(r.stdout);
    expect(summary.entries).toEqual({ sent: 1, skipped: 0, failed: 1 });
    expect(summary.sessions.failed).toBe(1);
    expect(summary.failed).toContainEqual({ kind: "entry", id: bad, reason: "not sent: a secret is still present after redaction" });
    expect(summary.failed).toContainEqual({ kind: "session", id: "sess-fc-good", reason: "not sent: a secret is still present after redaction" });
    expect(r.stdout + r.stderr).not.toContain(AWS_ID);

    expect(backend.captures().map((c) => c.commitHash)).toEqual([good]);
    expect(backend.sessions()).toHaveLength(0);
    for (const req of backend.received) expect(JSON.stringify(req.body)).not.toContain(AWS_ID);
    const log = logText(repo);
    expect(log).not.toContain(AWS_ID);
    expect(log).not.toContain(API_KEY);

    // the human-readable summary says so too
    const again = await runBin(["sync"], { cwd: repo.root, env: repo.env });
    expect(again.code).toBe(1);
    expect(again.stdout).toContain(bad.slice(0, 7));
    expect(again.stdout).toContain("secret is still present");
    expect(backend.captures().map((c) => c.commitHash)).toEqual([good]);
  });
});

describe("a session id shaped like a secret is never a path, a trailer or a body field", () => {
  test("7a. hooks store the entry with the id redacted and refuse the transcript", async () => {
    repo = tempRepo();
    excludeConfig(repo);
    const s = session(repo, GHP);
    await s.prompt("Add a retry");
    const c = agentCommit(repo, "Add retry", { "retry.ts": "export {};\n" });
    const hook = await s.bash(`git commit -m "Add retry"`, c.stdout);
    expect(hook.code).toBe(0);
    // the entry is written (the reminder names it); only the transcript is refused
    expect(JSON.parse(hook.stdout).hookSpecificOutput.additionalContext).toContain(c.hash);
    expect(showEntry(repo, c.hash)!.claudeSessionId).toBe("<REDACTED:github-pat>");
    expect(refOf(repo, SESSIONS)).toBeNull();
    const end = await s.end();
    expect(end.code).toBe(0);
    expect(end.stdout).toBe("");
    expect(refOf(repo, SESSIONS)).toBeNull();
    expect(logText(repo)).toContain("the session id looks like a github-pat");
    expectBranchesClean(repo, 4);
  });

  test("7b. sync sends the entry with the id redacted and not the transcript stored under it", async () => {
    repo = tempRepo();
    excludeConfig(repo);
    const c = repo.commit("work");
    writeEntries(repo, [makeEntry(c, { claudeSessionId: GHP })]);
    writeSessions(repo, { [GHP]: `${JSON.stringify({ role: "user", content: "hi" })}\n` });
    backend = startBackend();
    writeConfig(repo.root, backend.url, API_KEY);
    const r = await runBin(["sync", "--json"], { cwd: repo.root, env: repo.env });
    expect(r.code).toBe(1);
    const summary = JSON.parse(r.stdout);
    expect(summary.entries.sent).toBe(1);
    expect(summary.failed).toEqual([{ kind: "session", id: "(withheld id)", reason: "not sent: the session id looks like a github-pat" }]);
    expect(backend.captures().map((e) => e.claudeSessionId)).toEqual(["<REDACTED:github-pat>"]);
    expect(backend.sessions()).toHaveLength(0);
    for (const req of backend.received) expect(leaks(JSON.stringify(req.body))).toEqual([]);
    expect(leaks(logText(repo))).toEqual([]);
  });
});
