/** The Gemini CLI adapter over every payload the real client (0.61.0) sent in a recorded session. */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { HOOK_PARSERS } from "../../src/agents/index.ts";
import { geminiUserPrompt } from "../../src/agents/gemini/index.ts";
import type { AgentEvent } from "../../src/agents/types.ts";
import { ROOT } from "../helpers.ts";

const all = readFileSync(join(ROOT, "test/fixtures/agents/gemini/all.jsonl"), "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l) as { event: string; payload: Record<string, unknown> });

/** The events aiflare installs a hook for, and the hook each runs. */
const HOOKED: Record<string, AgentEvent> = {
  SessionStart: "session-start",
  BeforeAgent: "user-prompt-submit",
  AfterTool: "post-tool-use",
  AfterAgent: "stop",
  SessionEnd: "session-end",
};

describe("Gemini CLI payloads", () => {
  test("every recorded payload of a hooked event parses into the same HookInput fields the core reads", () => {
    const seen = new Set<string>();
    for (const { event, payload } of all) {
      const hook = HOOKED[event];
      if (!hook) continue;
      seen.add(event);
      const p = HOOK_PARSERS.gemini(hook, payload);
      expect(p.agent).toBe("gemini");
      expect(p.sessionId).toBe(payload.session_id as string);
      expect(p.cwd).toBe(payload.cwd as string);
      if (event === "BeforeAgent") expect(p.prompt).toBe(payload.prompt as string);
      if (event === "AfterAgent") {
        expect(p.lastAssistantMessage).toBe(payload.prompt_response as string);
        expect(p.stopHookActive).toBe(false);
      }
      if (event === "AfterTool") {
        // Gemini's shell tool is the core's shell tool, with its command line
        expect(p.toolName).toBe("Bash");
        expect(p.toolCommand).toBe((payload.tool_input as { command: string }).command);
        expect(p.toolError).toBeUndefined();
      }
      if (event === "SessionStart") expect(["startup", "resume"]).toContain(p.source!);
      if (event === "SessionEnd") expect(p.reason).toBe("exit");
    }
    expect([...seen].sort()).toEqual(Object.keys(HOOKED).sort());
  });

  test("a failed tool's error, and payloads it cannot use", () => {
    const p = HOOK_PARSERS.gemini("post-tool-use", {
      session_id: "s",
      tool_name: "run_shell_command",
      tool_input: { command: "git commit -m x && false" },
      tool_response: { llmContent: "", error: { message: "exit code 1" } },
    });
    expect(p.toolError).toBe("exit code 1");
    expect(() => HOOK_PARSERS.gemini("stop", { prompt_response: "no id" })).toThrow();
    expect(() => HOOK_PARSERS.gemini("stop", "text")).toThrow();
  });

  test("the recall Gemini puts before the first prompt is taken off; any other prompt is kept as sent", () => {
    expect(geminiUserPrompt("<hook_context>recorded work</hook_context>\n\nAdd tests")).toBe("Add tests");
    expect(geminiUserPrompt("Explain <hook_context> tags")).toBe("Explain <hook_context> tags");
    expect(geminiUserPrompt("<hook_context>never closed")).toBe("<hook_context>never closed");
    expect(geminiUserPrompt(undefined)).toBeUndefined();
  });
});
