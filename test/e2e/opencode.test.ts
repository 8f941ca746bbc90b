/**
 * aiflare's OpenCode plugin, as `aiflare install --agent opencode` writes it, driven with the hook arguments and
 * events OpenCode 1.18.33 passed to a plugin (test/fixtures/agents/opencode): what it hands the binary, what it
 * changes in OpenCode's outputs (the tool's output, the shell's environment, the system prompt), and the entries
 * that result. The real client's own run is test/agents/opencode.test.ts.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { captureSettled, ROOT, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { agentCommit, capture, records, showEntry } from "./capture-support.ts";

setDefaultTimeout(60_000);

const DIR = join(ROOT, "test", "fixtures", "agents", "opencode");
const fixture = (name: string) => JSON.parse(readFileSync(join(DIR, `${name}.json`), "utf8")) as Record<string, any>;
const SID = fixture("chat.message").input.sessionID as string;

type Hooks = Record<string, (...args: any[]) => Promise<void>>;

/** A commit's entry once the capture worker the plugin's hook started has stored it. */
async function entryOf(r: TempRepo, hash: string): Promise<Record<string, any> | null> {
  await captureSettled(r.root);
  return showEntry(r, hash);
}

let repo: TempRepo | undefined;
const savedEnv = { ...process.env };
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
  for (const k of Object.keys(process.env)) if (!(k in savedEnv)) delete process.env[k];
  Object.assign(process.env, savedEnv);
});

/** Loads the plugin file as OpenCode does; it starts the binary with OpenCode's environment: here the test repository's. */
async function load(r: TempRepo): Promise<Hooks> {
  for (const k of Object.keys(process.env)) if (!(k in r.env)) delete process.env[k];
  Object.assign(process.env, r.env);
  const mod = (await import(`${join(r.root, ".opencode", "plugins", "aiflare.js")}?${Date.now()}`)) as Record<string, (ctx: unknown) => Promise<Hooks>>;
  expect(Object.keys(mod)).toEqual(["AiflarePlugin"]);
  return mod.AiflarePlugin!({ directory: r.root, worktree: r.root });
}

/** Installs aiflare for OpenCode in a temp repository and loads its plugin. */
async function plugin(r: TempRepo): Promise<Hooks> {
  const installed = await runBin(["install", "--agent", "opencode"], { cwd: r.root, env: r.env });
  expect(installed.code).toBe(0);
  return load(r);
}

describe("OpenCode plugin", () => {
  test("prompt, commits grouped by request, the why requested in the tool output, the reply at idle, capture through OPENCODE_SESSION_ID", async () => {
    const r = (repo = tempRepo());
    const hooks = await plugin(r);
    await hooks.event!({ event: fixture("event_session.created") });
    const chat = fixture("chat.message");
    await hooks["chat.message"]!(chat.input, chat.output);
    const a = agentCommit(r, "Add add helper", { "add.ts": "export const add = 1;\n" });
    const first = fixture("tool.execute.after");
    await hooks["tool.execute.after"]!(first.input, first.output);
    // the commit hook's request for the why reaches the model with the tool's output
    expect(first.output.output).toContain("(no output)\n\naiflare recorded commit");
    const b = agentCommit(r, "Add sub helper", { "sub.ts": "export const sub = 1;\n" });
    const second = fixture("tool.execute.after.2");
    await hooks["tool.execute.after"]!(second.input, second.output);

    const ea = (await entryOf(r, a.hash))!;
    const eb = (await entryOf(r, b.hash))!;
    expect([ea.agentType, ea.claudeSessionId, ea.groupRootId ?? null]).toEqual(["OPENCODE", SID, null]);
    expect([eb.agentType, eb.claudeSessionId, eb.groupRootId]).toEqual(["OPENCODE", SID, a.hash]);
    expect(records(ea.conversationSnippet)).toEqual([{ role: "user", content: '"Add math helpers (opencode request one)"' }]);

    // the shell gets the session id, and capture run there completes that session's newest commit
    const shell = fixture("shell.env");
    await hooks["shell.env"]!(shell.input, shell.output);
    expect(shell.output.env).toEqual({ OPENCODE_SESSION_ID: SID });
    const cap = await capture(r, ["--title", "Math helpers", "--intent", "The calculator needs sub."], shell.output.env);
    expect(cap.code).toBe(0);
    expect((await entryOf(r, b.hash))!.intent).toBe("The calculator needs sub.");

    // the turn's end: the last assistant message's text is the reply, recorded once
    await hooks.event!({ event: fixture("event_message.updated.reply") });
    await hooks.event!({ event: fixture("event_message.part.updated.reply") });
    await hooks.event!({ event: fixture("event_session.status.idle") });
    await hooks.event!({ event: fixture("event_session.status.idle") });
    const second2 = fixture("chat.message.2");
    await hooks["chat.message"]!(second2.input, second2.output);
    const c = agentCommit(r, "Document math helpers", { "MATH.md": "# Math\n" });
    await hooks["tool.execute.after"]!({ ...first.input, callID: "call_3" }, { ...first.output, output: "" });
    const ec = (await entryOf(r, c.hash))!;
    expect(ec.groupRootId ?? null).toBeNull();
    expect(records(ec.conversationSnippet)).toEqual([
      { role: "assistant", content: "Added add and sub. Next: document them." },
      { role: "user", content: second2.output.parts[0].text },
    ]);
  });

  test("a subagent's commit goes to its parent's session; its prompt is not the user's", async () => {
    const r = (repo = tempRepo());
    const hooks = await plugin(r);
    const chat = fixture("chat.message");
    await hooks["chat.message"]!(chat.input, chat.output);
    const created = fixture("event_session.created");
    const child = "ses_child0000000000000000001";
    await hooks.event!({ event: { ...created, properties: { sessionID: child, info: { ...created.properties.info, id: child, parentID: SID } } } });
    await hooks["chat.message"]!({ sessionID: child }, { ...chat.output, parts: [{ ...chat.output.parts[0], sessionID: child, text: "Write MATH.md" }] });
    const shell = { env: {} as Record<string, string> };
    await hooks["shell.env"]!({ cwd: r.root, sessionID: child, callID: "call_9" }, shell);
    expect(shell.env.OPENCODE_SESSION_ID).toBe(SID);
    const a = agentCommit(r, "Document math helpers", { "MATH.md": "# Math\n" });
    const after = fixture("tool.execute.after");
    await hooks["tool.execute.after"]!({ ...after.input, sessionID: child }, after.output);
    const ea = (await entryOf(r, a.hash))!;
    expect([ea.agentType, ea.claudeSessionId]).toEqual(["OPENCODE", SID]);
    expect(records(ea.conversationSnippet)).toEqual([{ role: "user", content: '"Add math helpers (opencode request one)"' }]);
  });

  test("recall goes into the system prompt of a top session, once asked per session; a broken binary is ignored", async () => {
    const r = (repo = tempRepo());
    let hooks = await plugin(r);
    const chat = fixture("chat.message");
    await hooks["chat.message"]!(chat.input, chat.output);
    agentCommit(r, "Add add helper", { "add.ts": "export const add = 1;\n" });
    const after = fixture("tool.execute.after");
    await hooks["tool.execute.after"]!(after.input, after.output);
    await captureSettled(r.root);

    hooks = await plugin(r);
    const system = { system: ["You are opencode."] };
    await hooks["experimental.chat.system.transform"]!({ sessionID: "ses_next000000000000000000001", model: {} }, system);
    expect(system.system.length).toBe(2);
    expect(system.system[1]).toContain("aiflare: the latest recorded work");
    expect(system.system[1]).toContain("Add add helper");

    // the binary gone: every hook still returns, and OpenCode's outputs are left as they were
    const path = join(r.root, ".opencode", "plugins", "aiflare.js");
    writeFileSync(path, readFileSync(path, "utf8").replace(/^const AIFLARE = .*$/m, 'const AIFLARE = "/nonexistent/aiflare";'));
    hooks = await load(r);
    const broken = { system: ["You are opencode."] };
    await hooks["experimental.chat.system.transform"]!({ sessionID: "ses_next000000000000000000002", model: {} }, broken);
    const output = { ...after.output };
    await hooks["tool.execute.after"]!(after.input, output);
    await hooks["chat.message"]!(chat.input, chat.output);
    await hooks.event!({ event: fixture("event_session.status.idle") });
    expect([broken.system, output.output]).toEqual([["You are opencode."], after.output.output]);
  });
  test("install backs up a plugin file of the same name and uninstall puts it back; doctor checks the plugin and its binary", async () => {
    const r = (repo = tempRepo());
    const path = join(r.root, ".opencode", "plugins", "aiflare.js");
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, "export const Mine = async () => ({});\n");
    const doctor = async () => {
      const out = await runBin(["doctor", "--json"], { cwd: r.root, env: r.env });
      const checks = JSON.parse(out.stdout).results as { id: string; status: string; message: string }[];
      return checks.find((c) => c.id === "hooks:opencode");
    };
    expect(await doctor()).toBeUndefined();
    expect((await runBin(["install", "--agent", "opencode"], { cwd: r.root, env: r.env })).code).toBe(0);
    expect((await doctor())?.status).toBe("ok");
    const ours = readFileSync(path, "utf8");
    writeFileSync(path, ours.replace("const WAIT_MS = 5000;", "const WAIT_MS = 1;"));
    expect((await doctor())?.status).toBe("warn");
    writeFileSync(path, ours.replace(/^const AIFLARE = .*$/m, 'const AIFLARE = "/nonexistent/aiflare";'));
    expect(await doctor()).toMatchObject({ status: "fail", message: expect.stringContaining("/nonexistent/aiflare") });
    writeFileSync(path, ours);
    expect((await runBin(["uninstall"], { cwd: r.root, env: r.env })).code).toBe(0);
    expect(readFileSync(path, "utf8")).toBe("export const Mine = async () => ({});\n");
  });
});
