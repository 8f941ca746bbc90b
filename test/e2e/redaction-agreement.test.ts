/**
 * What the local branches hold is what a backend receives: every labelled secret of the corpus, and every
 * credential aiflare itself issues (a real `aiflare serve` key and sign-in cookie, a real `aiflare ui` token), fed
 * through the hooks, a real commit, session-end and `sync`, is absent from every object of both branches and from
 * every request body, and the entries and transcript sent are the ones stored.
 */
import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { newUiToken } from "../../src/core/dashboard/token.ts";
import { binary, runBin, tempRepo, testEnv, type TempRepo } from "../helpers.ts";
import { startBackend, writeConfig, type Backend } from "../sync-fixtures.ts";
import { agentCommit, aiflareObjects, fsckClean, session, showEntry, storedTranscript } from "./capture-support.ts";

setDefaultTimeout(120_000);

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

/** `text` holds `secret` as it is or inside one or two levels of JSON strings. */
function holds(text: string, secret: string): boolean {
  const once = JSON.stringify(secret).slice(1, -1);
  const twice = JSON.stringify(once).slice(1, -1);
  return text.includes(secret) || text.includes(once) || text.includes(twice);
}

/**
 * Plays `turns` (alternately the user's prompt and the agent's reply) in one session, commits, ends the session and
 * syncs to a recording backend; returns what the branches hold and what the backend received.
 */
async function captureAndSync(r: TempRepo, sessionId: string, turns: string[], apiKey: string) {
  writeFileSync(join(r.root, ".git", "info", "exclude"), "aiflare.yml\n.context-capture/\n");
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
    const { objects, bodies } = await captureAndSync(repo, "sess-corpus", turns, "afk_test_key_for_the_recording_backend");
    const leaked = samples.filter((s) => holds(objects, s.needle) || holds(bodies, s.needle)).map((s) => `${s.id} ${s.kind}`);
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
    const cookie = /aiflare_session=([^;]+)/.exec(login.headers.get("set-cookie") ?? "")?.[1]!;
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
      expect({ name, inObjects: holds(objects, secret), inBodies: holds(bodies, secret) }).toEqual({ name, inObjects: false, inBodies: false });
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
    for (const secret of Object.values(secrets)) expect(holds(served, secret)).toBe(false);
  });
});
