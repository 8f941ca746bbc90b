/**
 * A secret found once is redacted wherever the session repeats it (the agent's reply, later prompts, entry fields,
 * the transcript, what sync sends), across hook processes, also where it came before the line that revealed it.
 * Everything runs through the compiled binary, real git and a real HTTP backend on 127.0.0.1.
 */
import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { binary, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { startBackend, writeConfig, type Backend } from "../sync-fixtures.ts";
import { agentCommit, aiflareObjects, capture, fsckClean, records, session, showEntry, storedTranscript } from "./capture-support.ts";

setDefaultTimeout(60_000);

const PASSWORD = "Sunset99!xQ";
const API_KEY = "afk_live_9f3c2a7e5b1d4f6a8c0e2b4d";

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

/** `text` holds `secret` as it is or inside one or two levels of JSON strings. */
function holds(text: string, secret: string): boolean {
  const once = JSON.stringify(secret).slice(1, -1);
  const twice = JSON.stringify(once).slice(1, -1);
  return text.includes(secret) || text.includes(once) || text.includes(twice);
}

const secretsFile = (r: TempRepo, id: string) => join(r.root, ".context-capture", `.claude-secrets-${id}`);

describe("a secret found once is redacted where the session repeats it", () => {
  test("replies, later prompts in other hook processes, capture's fields, session-end and sync", async () => {
    repo = tempRepo();
    writeFileSync(join(repo.root, ".git", "info", "exclude"), "aiflare.yml\n.context-capture/\n");
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
    expect(holds(storedTranscript(repo, "sess-repeat-1"), PASSWORD)).toBe(false);
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
    expect(holds(objects.text, PASSWORD)).toBe(false);

    backend = startBackend();
    writeConfig(repo.root, backend.url, API_KEY);
    expect((await runBin(["sync"], { cwd: repo.root, env: repo.env })).code).toBe(0);
    expect(backend.captures()).toHaveLength(2);
    expect(backend.sessions()).toHaveLength(1);
    for (const req of backend.received) expect(holds(JSON.stringify(req.body), PASSWORD)).toBe(false);
  });

  test("sync redacts what was stored before the session found it, and the memory goes with the live files", async () => {
    repo = tempRepo();
    writeFileSync(join(repo.root, ".git", "info", "exclude"), "aiflare.yml\n.context-capture/\n");
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
    for (const req of backend.received) expect(holds(JSON.stringify(req.body), PASSWORD)).toBe(false);

    // every line was taken by a commit: session-end removes the live files, the remembered secrets with them
    expect(existsSync(secretsFile(repo, "sess-repeat-2"))).toBe(true);
    expect((await s.end()).code).toBe(0);
    expect(existsSync(join(repo.root, ".context-capture", ".claude-prompts-sess-repeat-2"))).toBe(false);
    expect(existsSync(secretsFile(repo, "sess-repeat-2"))).toBe(false);
  });
});
