/**
 * Gemini CLI through its real hook payloads (test/fixtures/agents/gemini, recorded from 0.61.0): every commit an
 * entry of the Gemini session, grouped by request, and `aiflare capture` run from Gemini's shell (which has no
 * session variable, only GEMINI_CLI=1) completing the entry of the session whose hooks wrote last.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, runHook, tempRepo, type TempRepo, untimed } from "../helpers.ts";
import { agentCommit, capture, showEntry } from "./capture-support.ts";

setDefaultTimeout(60_000);

const DIR = join(ROOT, "test", "fixtures", "agents", "gemini");
const payload = (name: string) => JSON.parse(readFileSync(join(DIR, `${name}.json`), "utf8")) as Record<string, unknown>;
const SID = payload("SessionStart").session_id as string;

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

/** Sends a recorded payload, moved into the temp repository, as Gemini's installed hook would. */
async function send(r: TempRepo, event: string, name: string, extra: Record<string, unknown> = {}) {
  const res = await runHook(r, event, { ...payload(name), cwd: r.root, ...extra }, { agent: "gemini" });
  expect(res.code).toBe(0);
  // Gemini shows any stdout that is not JSON to the user as a message
  if (res.stdout !== "") expect(() => JSON.parse(res.stdout)).not.toThrow();
  return res;
}

describe("Gemini CLI", () => {
  test("two commits in one request form a group of GEMINI_CLI entries; capture from Gemini's shell finds the session", async () => {
    const r = (repo = tempRepo());
    await send(r, "session-start", "SessionStart");
    await send(r, "user-prompt-submit", "BeforeAgent");
    const a = agentCommit(r, "Add add helper", { "add.ts": "export const add = (a: number, b: number) => a + b;\n" });
    await send(r, "post-tool-use", "AfterTool");
    const b = agentCommit(r, "Add sub helper", { "sub.ts": "export const sub = (a: number, b: number) => a - b;\n" });
    await send(r, "post-tool-use", "AfterTool.2");

    const ea = showEntry(r, a.hash)!;
    const eb = showEntry(r, b.hash)!;
    expect(ea.agentType).toBe("GEMINI_CLI");
    expect(ea.claudeSessionId).toBe(SID);
    expect(ea.conversationSnippet).toContain("Add math helpers (gemini request one)");
    expect(eb.agentType).toBe("GEMINI_CLI");
    expect(ea.groupRootId ?? null).toBeNull();
    expect(eb.groupRootId).toBe(a.hash);

    // AfterAgent: the reply is recorded, and the commits without a summary are handed back to the agent as JSON
    const stop = await send(r, "stop", "AfterAgent");
    const asked = JSON.parse(stop.stdout);
    expect(asked.decision).toBe("block");
    expect(asked.reason).toContain(a.hash);

    // the agent runs capture in its shell: GEMINI_CLI=1 and no session id
    const cap = await capture(r, ["--commit-hash", a.hash, "--title", "Math helpers", "--intent", "add and sub for the calculator"], {
      GEMINI_CLI: "1",
    });
    expect(cap.code).toBe(0);
    expect(cap.stderr).not.toContain("no session given");
    const done = showEntry(r, a.hash)!;
    expect(done.summaryStatus).not.toBe("pending");
    expect(done.title).toBe("Math helpers");
    expect(done.agentType).toBe("GEMINI_CLI");
    expect(done.claudeSessionId).toBe(SID);

    // a new request after a resume (same session id): its commit starts a new group with the new prompt
    await send(r, "session-start", "SessionStart.2");
    await send(r, "user-prompt-submit", "BeforeAgent.2");
    const c = agentCommit(r, "Document the helpers", { "README.md": "add, sub\n" });
    await send(r, "post-tool-use", "AfterTool", { tool_input: { command: "git commit -am 'Document the helpers'" } });
    const ec = showEntry(r, c.hash)!;
    expect(ec.agentType).toBe("GEMINI_CLI");
    expect(ec.claudeSessionId).toBe(SID);
    expect(ec.conversationSnippet).toContain("Now document them (gemini request two)");
    expect(ec.conversationSnippet).not.toContain("gemini request one");
    expect(ec.groupRootId ?? null).toBeNull();
    await send(r, "stop", "AfterAgent.2");
    await send(r, "session-end", "SessionEnd");
  });

  test("BeforeAgent: the recall Gemini puts before the prompt and aiflare's own reminder sent back are not the user's words", async () => {
    const r = (repo = tempRepo());
    await send(r, "user-prompt-submit", "BeforeAgent", {
      prompt: "<hook_context>aiflare: the latest recorded work on branch \"main\" …</hook_context>\n\nNow document them",
    });
    // Gemini continues after a blocked AfterAgent by sending the reason as the next prompt
    await send(r, "user-prompt-submit", "BeforeAgent", {
      prompt: `aiflare: commit ${"a".repeat(40)} of this session still has no summary. Before stopping, run the context-capture skill`,
    });
    const log = readFileSync(join(r.root, ".context-capture", `.gemini-prompts-${SID}`), "utf8");
    expect(untimed(log.split("\n").filter(Boolean).map((l) => JSON.parse(l) as object))).toEqual([{ role: "user", content: "Now document them" }]);
  });

  test("capture from Gemini's shell with no Gemini session yet records a GEMINI_CLI entry", async () => {
    const r = (repo = tempRepo());
    const a = agentCommit(r, "Lone commit", { "x.ts": "x\n" });
    const cap = await capture(r, ["--commit-hash", a.hash, "--title", "Lone", "--intent", "none"], { GEMINI_CLI: "1" });
    expect(cap.code).toBe(0);
    expect(showEntry(r, a.hash)!.agentType).toBe("GEMINI_CLI");
  });
});
