import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { copilotHookOutput, parseCopilotHookInput } from "../../src/agents/copilot/index.ts";
import { copilotReply } from "../../src/agents/copilot/transcript.ts";
import { sessionFromEnv } from "../../src/agents/session-env.ts";
import { agentHookCall } from "../../src/core/hook/argv.ts";

const fixture = (name: string) => JSON.parse(readFileSync(join(import.meta.dir, "../fixtures/agents/copilot", name), "utf8"));

describe("GitHub Copilot CLI payloads (1.0.102)", () => {
  test("each event normalises to the HookInput the core reads", () => {
    const id = "0abc27cd-5ad5-4f9e-9d96-164869a7beb8";
    expect(parseCopilotHookInput("session-start", fixture("sessionStart.json"))).toMatchObject({ agent: "copilot", sessionId: id, source: "new" });
    expect(parseCopilotHookInput("user-prompt-submit", fixture("userPromptSubmitted.json"))).toMatchObject({ prompt: "Add math helpers (copilot request one)" });
    const post = parseCopilotHookInput("post-tool-use", fixture("postToolUse.json"));
    expect(post.toolName).toBe("bash");
    expect(post.toolCommand).toContain("git commit -q -m 'Add add helper'");
    expect(post.toolResponse).toEqual({ stdout: "\n<shellId: 0 completed with exit code 0>" });
    expect(parseCopilotHookInput("session-end", fixture("sessionEnd.json")).reason).toBe("complete");
    const stop = parseCopilotHookInput("stop", fixture("agentStop.json"));
    expect(stop.stopHookActive).toBe(false);
    // the fixture's transcript is not on this machine: no reply, and no failure
    expect(stop.lastAssistantMessage).toBeUndefined();
  });

  test("toolArgs sent as JSON text reads like the object", () => {
    const raw = { ...fixture("postToolUse.json"), toolArgs: JSON.stringify({ command: "git commit -m x" }) };
    expect(parseCopilotHookInput("post-tool-use", raw).toolCommand).toBe("git commit -m x");
    expect(parseCopilotHookInput("post-tool-use", { ...raw, toolArgs: "{not json" }).toolCommand).toBeUndefined();
  });

  test("a payload without a string sessionId is refused", () => {
    expect(() => parseCopilotHookInput("stop", { session_id: "x" })).toThrow();
  });

  test("the reply is the newest assistant text after the newest user message of the events file", () => {
    const dir = mkdtempSync(join(tmpdir(), "aiflare-copilot-"));
    try {
      const path = join(dir, "events.jsonl");
      const ev = (type: string, data: unknown) => JSON.stringify({ type, data });
      writeFileSync(path, [
        ev("user.message", { content: "one" }),
        ev("assistant.message", { content: "Old reply." }),
        ev("user.message", { content: "two" }),
        ev("assistant.message", { content: "Running it.", toolRequests: [{}] }),
        ev("tool.execution_complete", { result: { content: "assistant.message" } }),
        ev("assistant.message", { content: "Final reply.", toolRequests: [] }),
        ev("assistant.message", { content: "" }),
        ev("assistant.turn_end", {}),
      ].join("\n") + "\n");
      expect(copilotReply(path)).toEqual({ reply: "Final reply.", ready: true });
      writeFileSync(path, [ev("assistant.message", { content: "Old." }), ev("user.message", { content: "new" })].join("\n"));
      expect(copilotReply(path)).toEqual({ ready: true });
      expect(copilotReply(join(dir, "missing.jsonl"))).toEqual({ ready: true });
      // this agentStop's own record is in: the reply before it is this turn's
      const stop = (ts: number) => ev("hook.start", { hookType: "agentStop", input: { sessionId: "s", timestamp: ts } });
      writeFileSync(path, [ev("user.message", { content: "one" }), ev("assistant.message", { content: "First." }), stop(1)].join("\n") + "\n");
      expect(copilotReply(path, 1)).toEqual({ reply: "First.", ready: true });
      // not yet written: not ready, read once without waiting (the reply is due at the session's next hook)
      writeFileSync(path, [ev("user.message", { content: "one" }), ev("assistant.message", { content: "First." }), stop(1), ev("user.message", { content: "two" }), ev("assistant.message", { content: "Second." })].join("\n") + "\n");
      expect(copilotReply(path, 2).ready).toBe(false);
      // the turn's message recorded after its agentStop: this turn's reply, once the turn is complete or it is there
      writeFileSync(path, [ev("user.message", { content: "one" }), stop(1), ev("assistant.message", { content: "Late." })].join("\n") + "\n");
      expect(copilotReply(path, 1)).toEqual({ reply: "Late.", ready: true });
      writeFileSync(path, [ev("user.message", { content: "one" }), stop(1)].join("\n") + "\n");
      expect(copilotReply(path, 1).ready).toBe(false);
      writeFileSync(path, [ev("user.message", { content: "one" }), stop(1), ev("user.message", { content: "two" }), ev("assistant.message", { content: "Two." })].join("\n") + "\n");
      expect(copilotReply(path, 1)).toEqual({ ready: true });
      expect(copilotReply(dir)).toEqual({ ready: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("context goes out at the top level, as Copilot reads it; a Stop block unchanged", () => {
    expect(copilotHookOutput({ hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "ctx" } })).toEqual({ additionalContext: "ctx" });
    expect(copilotHookOutput({ decision: "block", reason: "r" })).toEqual({ decision: "block", reason: "r" });
  });

  test("the shell's COPILOT_AGENT_SESSION_ID names a Copilot session; hook --agent copilot is a quick hook", () => {
    const env = Object.fromEntries(readFileSync(join(import.meta.dir, "../fixtures/agents/copilot/shell-env-1.txt"), "utf8").trim().split("\n").map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
    expect(sessionFromEnv(env)).toEqual({ id: "0abc27cd-5ad5-4f9e-9d96-164869a7beb8", agent: "copilot" });
    expect(agentHookCall(["hook", "stop", "--agent", "copilot"])).toEqual({ event: "stop", agent: "copilot" });
    expect(agentHookCall(["hook", "stop", "--agent", "nobody"])).toBeNull();
  });
});
