/**
 * What the local branches hold is what a backend receives: every labelled secret of the corpus, and every
 * credential aiflare itself issues (a real `aiflare serve` key and sign-in cookie, a real `aiflare ui` token), fed
 * through the hooks, a real commit, session-end and `sync`, is absent from every object of both branches and from
 * every request body, and the entries and transcript sent are the ones stored. And a secret found once is redacted
 * wherever the session repeats it (the agent's reply, later prompts, entry fields, the transcript, what sync
 * sends), across hook processes, also where it came before the line that revealed it.
 */
import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { newUiToken } from "../../src/core/dashboard/token.ts";
import { binary, runBin, tempRepo, testEnv, type TempRepo } from "../helpers.ts";
import { startBackend, writeConfig, type Backend } from "../sync-fixtures.ts";
import { agentCommit, aiflareObjects, capture, excludeLocalFiles, fsckClean, holdsSecret, records, session, showEntry, storedTranscript } from "./capture-support.ts";

setDefaultTimeout(120_000);

const PASSWORD = "Sunset99!xQ";
const API_KEY = "afk_live_9f3c2a7e5b1d4f6a8c0e2b4d";

const CORPUS = join(import.meta.dir, "..", "fixtures", "secrets", "positives.jsonl");

let repo: TempRepo | undefined;
let backend: Backend | undefined;
const stops: (() => void)[] = [];
beforeAll(() => {
  binary();
});
afterEach(() => {
  backend?.stop();
  backend = undefined;
  for (const stop of stops.splice(0)) stop();
  if (repo) expect(fsckClean(repo)).toBe(true);
  repo?.cleanup();
  repo = undefined;
});

/**
 * Plays `turns` (alternately the user's prompt and the agent's reply) in one session, commits, ends the session and
 * syncs to a recording backend; returns what the branches hold and what the backend received.
 */
async function captureAndSync(r: TempRepo, sessionId: string, turns: string[], apiKey: string) {
  excludeLocalFiles(r);
  const s = session(r, sessionId);
  for (let i = 0; i < turns.length; i++) expect((await (i % 2 === 0 ? s.prompt(turns[i]!) : s.stop(turns[i]!))).code).toBe(0);
  const c = agentCommit(r, "Wire up the credentials", { "creds.ts": "export {};\n" });
  const hook = await s.bash(`git commit -m "Wire up the credentials"`, c.stdout);
  expect(hook.code).toBe(0);
  if (!hook.stdout.includes(c.hash)) console.log(readFileSync(join(r.root, ".context-capture", "aiflare.log"), "utf8").slice(-3000));
  expect(hook.stdout).toContain(c.hash);
  expect((await s.end()).code).toBe(0);
  backend = startBackend();
  writeConfig(r.root, backend.url, apiKey);
  const sync = await runBin(["sync", "--json"], { cwd: r.root, env: r.env });
  expect(sync.code).toBe(0);
  const local = { entry: showEntry(r, c.hash)!, transcript: storedTranscript(r, sessionId) };
  const [sent] = backend.captures();
  const [sentSession] = backend.sessions();
  // one redaction: the backend gets exactly what the local branches hold
  expect(sent).toEqual(local.entry);
  expect(sentSession!.content.trimEnd()).toBe(local.transcript.trimEnd());
  return { objects: aiflareObjects(r).text, bodies: backend.received.map((q) => JSON.stringify(q.body)).join("\n"), local };
}

describe("the local branches and the backend agree, and hold no secret", () => {
  test("every labelled secret of the corpus", async () => {
    const samples = readFileSync(CORPUS, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: number; kind: string; text: string; needle: string });
    expect(samples.length).toBeGreaterThan(350);
    // a few samples per turn keeps the number of hook processes small
    const turns: string[] = [];
    for (let i = 0; i < samples.length; i += 8) turns.push(samples.slice(i, i + 8).map((s) => s.text).join("\n\n"));
    repo = tempRepo();
    const { objects, bodies } = await captureAndSync(repo, "sess-corpus", turns, API_KEY);
    const leaked = samples.filter((s) => holdsSecret(objects, s.needle) || holdsSecret(bodies, s.needle)).map((s) => `${s.id} ${s.kind}`);
    expect(leaked).toEqual([]);
  });

  test("aiflare's own credentials: a real serve key of another project, its sign-in cookie and a ui token", async () => {
    repo = tempRepo();
    const db = join(repo.dir, "server.sqlite");
    const admin = async (args: string[]) => {
      const r = await runBin(["serve", ...args, "--database", db, "--json"], { cwd: repo!.home, env: testEnv(repo!.home) });
      expect(r.code).toBe(0);
      return JSON.parse(r.stdout) as { key: string };
    };
    const projectA = await admin(["project", "create", "a"]);
    const projectB = await admin(["project", "create", "b"]);
    const extraB = await admin(["key", "create", "b"]);
    const server = Bun.spawn([binary(), "serve", "--port", "0", "--database", db], { cwd: repo.home, env: testEnv(repo.home), stdout: "pipe", stderr: "pipe" });
    stops.push(() => server.kill("SIGKILL"));
    const reader = server.stdout.getReader();
    let out = "";
    let url = "";
    while (!url) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`aiflare serve exited: ${out}`);
      out += new TextDecoder().decode(value);
      url = /listening on (http:\/\/\S+)/.exec(out)?.[1] ?? "";
    }
    const login = await fetch(`${url}/api/v1/auth/login`, { method: "POST", body: JSON.stringify({ key: projectB.key }) });
    expect(login.status).toBe(200);
    // at a loopback name the session comes in the answer (a cookie would reach every port); elsewhere as a cookie
    const cookie = ((await login.json()) as { session: string }).session;
    expect(cookie.length).toBeGreaterThan(40);
    const uiToken = newUiToken();
    const secrets = { keyB: projectB.key, extraB: extraB.key, cookie, uiToken };

    const turns = [
      `Project b's key is ${projectB.key}, and the CI one: ${extraB.key}`,
      `I will use ${projectB.key} for the upload.`,
      `My browser sends Cookie: aiflare_session=${cookie}\nand the dashboard said http://127.0.0.1:4242/?token=${uiToken}`,
      `Noted: the ui token ${uiToken} and the cookie ${cookie}.`,
    ];
    const { objects, bodies } = await captureAndSync(repo, "sess-own-creds", turns, projectA.key);
    for (const [name, secret] of Object.entries(secrets)) {
      expect({ name, inObjects: holdsSecret(objects, secret), inBodies: holdsSecret(bodies, secret) }).toEqual({ name, inObjects: false, inBodies: false });
    }
    for (const kind of ["aiflare-api-key", "aiflare-session-cookie", "aiflare-ui-token"]) expect(objects).toContain(`<REDACTED:${kind}>`);

    // and through the real server: project a's API serves none of them
    writeConfig(repo.root, url, projectA.key);
    expect((await runBin(["sync", "--all"], { cwd: repo.root, env: repo.env })).code).toBe(0);
    const read = async (path: string) => (await fetch(`${url}${path}`, { headers: { "x-api-key": projectA.key } })).text();
    const timeline = await read("/api/v1/timeline");
    expect(JSON.parse(timeline).entries).toHaveLength(1);
    const served = timeline + (await read("/api/v1/sessions/sess-own-creds"));
    expect(served).toContain("<REDACTED:aiflare-api-key>");
    for (const secret of Object.values(secrets)) expect(holdsSecret(served, secret)).toBe(false);
  });
});

const secretsFile = (r: TempRepo, id: string) => join(r.root, ".context-capture", `.claude-secrets-${id}`);

describe("a secret found once is redacted where the session repeats it", () => {
  test("replies, later prompts in other hook processes, capture's fields, session-end and sync", async () => {
    repo = tempRepo();
    excludeLocalFiles(repo);
    const s = session(repo, "sess-repeat-1");
    // the reply quotes the value before the prompt that shows it is a password
    await s.prompt("Why does the database refuse my login?");
    await s.stop(`The logs show a login attempt with ${PASSWORD} as the password for app.`);
    await s.prompt(`Here it is from the env: DB_PASSWORD=${PASSWORD}`);
    await s.stop(`Noted the password ${PASSWORD}.`);
    const c1 = agentCommit(repo, "Fix the database login", { "db.ts": "export {};\n" });
    expect((await s.bash(`git commit -m "Fix the database login"`, c1.stdout)).code).toBe(0);

    const e1 = showEntry(repo, c1.hash)!;
    const lines = records(e1.conversationSnippet);
    expect(lines.map((l) => l.content)).toEqual([
      "Why does the database refuse my login?",
      "The logs show a login attempt with <REDACTED:password-assignment> as the password for app.",
      "Here it is from the env: DB_PASSWORD=<REDACTED:password-assignment>",
      "Noted the password <REDACTED:password-assignment>.",
    ]);
    expect(holdsSecret(storedTranscript(repo, "sess-repeat-1"), PASSWORD)).toBe(false);
    // the session's live state remembers it, user-only, beside the live conversation
    const file = secretsFile(repo, "sess-repeat-1");
    expect(readFileSync(file, "utf8")).toContain(PASSWORD);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    // later turns, each its own hook process, repeat it with nothing around it that a rule would see
    await s.prompt(`still failing with ${PASSWORD}, try again`);
    await s.stop(`Retried: ${PASSWORD} works against the replica.`);
    const c2 = agentCommit(repo, "Use the replica", { "replica.ts": "export {};\n" });
    expect((await s.bash(`git commit -m "Use the replica"`, c2.stdout)).code).toBe(0);
    const e2 = showEntry(repo, c2.hash)!;
    expect(records(e2.conversationSnippet).map((l) => l.content)).toEqual([
      "still failing with <REDACTED:password-assignment>, try again",
      "Retried: <REDACTED:password-assignment> works against the replica.",
    ]);

    // the agent's summary through `aiflare capture`, in yet another process
    const cap = await capture(repo, ["--commit-hash", c2.hash, "--claude-session-id", "sess-repeat-1", "--intent", `Problem: ${PASSWORD} was refused.`, "--title", `Replica (${PASSWORD})`]);
    expect(cap.code).toBe(0);
    const written = showEntry(repo, c2.hash)!;
    expect(written.intent).toBe("Problem: <REDACTED:password-assignment> was refused.");
    expect(written.title).toBe("Replica (<REDACTED:password-assignment>)");

    // after the last commit: only session-end stores these lines
    await s.prompt(`one more thing about ${PASSWORD}`);
    expect((await s.end()).code).toBe(0);
    expect(records(storedTranscript(repo, "sess-repeat-1")).at(-1)!.content).toBe("one more thing about <REDACTED:password-assignment>");

    const objects = aiflareObjects(repo);
    expect(objects.count).toBeGreaterThan(10);
    expect(holdsSecret(objects.text, PASSWORD)).toBe(false);

    backend = startBackend();
    writeConfig(repo.root, backend.url, API_KEY);
    expect((await runBin(["sync"], { cwd: repo.root, env: repo.env })).code).toBe(0);
    expect(backend.captures()).toHaveLength(2);
    expect(backend.sessions()).toHaveLength(1);
    for (const req of backend.received) expect(holdsSecret(JSON.stringify(req.body), PASSWORD)).toBe(false);
  });

  test("sync redacts what was stored before the session found it, and the memory goes with the live files", async () => {
    repo = tempRepo();
    excludeLocalFiles(repo);
    const s = session(repo, "sess-repeat-2");
    await s.prompt(`connect with ${PASSWORD} please`);
    const c1 = agentCommit(repo, "Connect", { "a.ts": "export {};\n" });
    await s.bash(`git commit -m "Connect"`, c1.stdout);
    // nothing said yet that it is a secret: stored as it is
    expect(showEntry(repo, c1.hash)!.conversationSnippet).toContain(PASSWORD);
    await s.prompt(`to be clear, password: "${PASSWORD}"`);
    const c2 = agentCommit(repo, "Clarify", { "b.ts": "export {};\n" });
    await s.bash(`git commit -m "Clarify"`, c2.stdout);
    expect(showEntry(repo, c2.hash)!.conversationSnippet).not.toContain(PASSWORD);

    backend = startBackend();
    writeConfig(repo.root, backend.url, API_KEY);
    expect((await runBin(["sync"], { cwd: repo.root, env: repo.env })).code).toBe(0);
    const first = backend.captures().find((c) => c.commitHash === c1.hash);
    expect(records(first.conversationSnippet)[0]!.content).toBe("connect with <REDACTED:password-assignment> please");
    for (const req of backend.received) expect(holdsSecret(JSON.stringify(req.body), PASSWORD)).toBe(false);

    // every line was taken by a commit: session-end removes the live files, the remembered secrets with them
    expect(existsSync(secretsFile(repo, "sess-repeat-2"))).toBe(true);
    expect((await s.end()).code).toBe(0);
    expect(existsSync(join(repo.root, ".context-capture", ".claude-prompts-sess-repeat-2"))).toBe(false);
    expect(existsSync(secretsFile(repo, "sess-repeat-2"))).toBe(false);
  });
  test("a symlink in place of the secrets file is never followed: nothing is read or written through it", async () => {
    repo = tempRepo();
    excludeLocalFiles(repo);
    const s = session(repo, "sess-repeat-3");
    await s.prompt(`DB_PASSWORD=${PASSWORD}`);
    const outside = join(repo.home, "notes.txt");
    writeFileSync(outside, "mine\n");
    symlinkSync(outside, secretsFile(repo, "sess-repeat-3"));
    const c = agentCommit(repo, "Work", { "w.ts": "export {};\n" });
    const hook = await s.bash(`git commit -m "Work"`, c.stdout);
    expect(hook.code).toBe(0);
    expect(readFileSync(outside, "utf8")).toBe("mine\n");
    expect(lstatSync(secretsFile(repo, "sess-repeat-3")).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(repo.root, ".context-capture", "aiflare.log"), "utf8")).toContain("symbolic link");
    expect(holdsSecret(aiflareObjects(repo).text, PASSWORD)).toBe(false);
  });
});
