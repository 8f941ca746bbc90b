/**
 * GitHub Copilot CLI's hooks through the compiled binary, with the payloads its real client sent (1.0.102): both
 * orders of sessionStart and the first prompt, the reply read from its events file, and aiflare's own reminder
 * handed back as a prompt.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runBin, runHook, tempRepo, type TempRepo } from "../helpers.ts";
import { agentCommit, records, showEntry, storedTranscript } from "./capture-support.ts";

const fixture = (name: string) => JSON.parse(readFileSync(join(import.meta.dir, "../fixtures/agents/copilot", name), "utf8"));

let repos: TempRepo[] = [];
afterEach(() => {
  for (const r of repos) r.cleanup();
  repos = [];
});

function setup(id: string) {
  const repo = tempRepo();
  repos.push(repo);
  const events = join(repo.home, ".copilot", "session-state", id, "events.jsonl");
  mkdirSync(join(events, ".."), { recursive: true });
  writeFileSync(events, "");
  const base = { sessionId: id, cwd: repo.root };
  const hook = (event: string, payload: Record<string, unknown>) => runHook(repo, event, { ...payload, ...base }, { agent: "copilot" });
  const say = (type: string, content: string) => writeFileSync(events, `${JSON.stringify({ type, data: { content } })}\n`, { flag: "a" });
  const stop = (active = false) => hook("stop", { ...fixture("agentStop.json"), transcriptPath: events, stop_hook_active: active, timestamp: undefined });
  return { repo, hook, say, stop, events };
}

async function commitThroughHook(s: ReturnType<typeof setup>, message: string, file: string) {
  const { stdout } = agentCommit(s.repo, message, { [file]: `${file}\n` });
  return s.hook("post-tool-use", { ...fixture("postToolUse.json"), toolArgs: { command: `git add -A && git commit -m '${message}'` }, toolResult: { resultType: "success", textResultForLlm: stdout } });
}

describe("Copilot CLI hooks", () => {
  for (const order of ["prompt first (interactive)", "start first (-p)"]) {
    test(`the first request is recorded whichever comes first: ${order}`, async () => {
      const s = setup("copilot-order-1");
      const start = () => s.hook("session-start", fixture("sessionStart.json"));
      const prompt = () => s.hook("user-prompt-submit", { ...fixture("userPromptSubmitted.json"), prompt: "Add a." });
      if (order.startsWith("prompt")) {
        await prompt();
        await start();
      } else {
        await start();
        await prompt();
      }
      s.say("user.message", "Add a.");
      const post = await commitThroughHook(s, "feat: a", "a.txt");
      expect(JSON.parse(post.stdout).additionalContext).toContain("aiflare recorded commit");
      const entry = showEntry(s.repo, s.repo.git("rev-parse", "HEAD"))!;
      expect(entry.agentType).toBe("COPILOT_CLI");
      expect(records(entry.conversationSnippet)).toEqual([{ role: "user", content: "Add a." }]);
    });
  }

  test("the reply comes from the events file; the reminder handed back as a prompt is not a new request", async () => {
    const s = setup("copilot-remind-1");
    await s.hook("session-start", fixture("sessionStart.json"));
    await s.hook("user-prompt-submit", { ...fixture("userPromptSubmitted.json"), prompt: "Add a." });
    s.say("user.message", "Add a.");
    await commitThroughHook(s, "feat: a", "a.txt");
    s.say("assistant.message", "Committed a.");
    const stop = await s.stop();
    const reason = JSON.parse(stop.stdout).reason as string;
    expect(reason).toContain("still has no summary");
    // Copilot submits the reason as the next prompt
    await s.hook("user-prompt-submit", { ...fixture("userPromptSubmitted.json"), prompt: reason });
    s.say("user.message", reason);
    s.say("assistant.message", "Later.");
    await s.stop(true);
    await commitThroughHook(s, "feat: b", "b.txt");
    const b = showEntry(s.repo, s.repo.git("rev-parse", "HEAD"))!;
    // no user line in b's delta: same request, same group
    expect(records(b.conversationSnippet)).toEqual([{ role: "assistant", content: "Committed a." }, { role: "assistant", content: "Later." }]);
    expect(b.groupRootId).toBe(s.repo.git("rev-parse", "HEAD~1"));
  });

  test("a reply not yet in the events file at agentStop is read at the session's next hook, in its place", async () => {
    const s = setup("copilot-late-1");
    const at = 1_796_000_000_000;
    const record = (stamp: number) =>
      writeFileSync(s.events, `${JSON.stringify({ type: "hook.start", data: { hookType: "agentStop", input: { sessionId: "copilot-late-1", timestamp: stamp } } })}\n`, { flag: "a" });
    const stopAt = (stamp: number) => s.hook("stop", { ...fixture("agentStop.json"), transcriptPath: s.events, stop_hook_active: true, timestamp: stamp });
    await s.hook("session-start", fixture("sessionStart.json"));
    await s.hook("user-prompt-submit", { ...fixture("userPromptSubmitted.json"), prompt: "Add a." });
    s.say("user.message", "Add a.");
    await commitThroughHook(s, "feat: a", "a.txt");
    // agentStop runs before Copilot wrote the reply and its own record (seen with 1.0.102 when the Stop hands commits
    // back): nothing waits, nothing is taken for this turn's reply yet
    expect((await stopAt(at)).code).toBe(0);
    s.say("assistant.message", "Committed a.");
    record(at);
    // the next request: the reply comes first, then the prompt
    await s.hook("user-prompt-submit", { ...fixture("userPromptSubmitted.json"), prompt: "Add b." });
    s.say("user.message", "Add b.");
    await commitThroughHook(s, "feat: b", "b.txt");
    const b = showEntry(s.repo, s.repo.git("rev-parse", "HEAD"))!;
    expect(records(b.conversationSnippet)).toEqual([{ role: "assistant", content: "Committed a." }, { role: "user", content: "Add b." }]);
    // the last turn's reply, late again, is read at sessionEnd and stored with the session
    await stopAt(at + 1);
    s.say("assistant.message", "Committed b.");
    record(at + 1);
    await s.hook("session-end", { ...fixture("sessionEnd.json") });
    const stored = records(storedTranscript(s.repo, "copilot-late-1"));
    expect(stored.filter((l) => l.role === "assistant").map((l) => l.content)).toEqual(["Committed a.", "Committed b."]);
  });

  test("Claude Code's hooks run by Copilot (COPILOT_CLI=1) record nothing", async () => {
    const repo = tempRepo();
    repos.push(repo);
    const r = await runBin(["hook", "user-prompt-submit"], {
      cwd: repo.root,
      env: { ...repo.env, COPILOT_CLI: "1" },
      stdin: JSON.stringify({ hook_event_name: "UserPromptSubmit", session_id: "copilot-claude-1", cwd: repo.root, prompt: "x" }),
    });
    expect(r.code).toBe(0);
    expect(Bun.spawnSync(["ls", "-a", join(repo.root, ".context-capture")]).stdout.toString()).not.toContain("prompts");
  });
});
