/** The one adapter for agents that speak Claude Code's hooks: each payload as the core sees it. */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { HOOK_PARSERS } from "../../src/agents/index.ts";
import { sessionFromEnv } from "../../src/agents/session-env.ts";
import type { AgentEvent } from "../../src/agents/types.ts";
import { agentHookCall } from "../../src/core/hook/argv.ts";

const FIX = join(import.meta.dir, "..", "fixtures", "agents");
const load = (agent: string, name: string) => JSON.parse(readFileSync(join(FIX, agent, name), "utf8")) as Record<string, unknown>;

describe("Qwen Code payloads (0.24.4, recorded)", () => {
  const parse = (event: AgentEvent, name: string) => HOOK_PARSERS.qwen(event, load("qwen", name));

  test("the user's prompt comes from submitted_prompt; a tool-result continuation is skipped", () => {
    const first = parse("user-prompt-submit", "UserPromptSubmit.json");
    expect(first.agent).toBe("qwen");
    expect(first.prompt).toBe("Add math helpers (qwen request one)");
    expect(first.skip).toBeUndefined();
    const again = parse("user-prompt-submit", "UserPromptSubmit.2.json");
    expect(again.skip).toBeDefined();
  });

  test("run_shell_command is the shell tool, its llmContent the output", () => {
    const post = parse("post-tool-use", "PostToolUse.2.json");
    expect(post.toolName).toBe("Bash");
    expect(post.toolCommand).toContain("git commit -q -m 'Add sub helper'");
    expect(post.toolResponse).toEqual({ stdout: expect.stringContaining("Exit Code: 0") });
    expect(post.durationMs).toBe(118);
    expect(post.sessionId).toBe("dd5921c3-aca4-4a72-9537-876aa97cd748");
  });

  test("Stop carries the reply; SessionStart the model and source", () => {
    const stop = parse("stop", "Stop.json");
    expect(stop.lastAssistantMessage).toBe("Added add and sub. Next: document them.");
    expect(stop.stopHookActive).toBe(false);
    const start = parse("session-start", "SessionStart.2.json");
    expect(start.source).toBe("resume");
    expect(start.model).toBe("mock-model");
    expect(start.continues).toBeUndefined();
  });

  test("edit tools get Claude Code's names, so recall sees them", () => {
    const raw = { ...load("qwen", "PreToolUse.json"), tool_name: "edit", tool_input: { file_path: "/r/a.ts", old_string: "x", new_string: "y" } };
    expect(HOOK_PARSERS.qwen("pre-tool-use", raw).toolName).toBe("Edit");
    expect(HOOK_PARSERS.qwen("pre-tool-use", { ...raw, tool_name: "write_file" }).toolName).toBe("Write");
    // a tool the profile does not name keeps its own name, and a name from Object's prototype is not a mapping
    expect(HOOK_PARSERS.qwen("pre-tool-use", { ...raw, tool_name: "read_file" }).toolName).toBe("read_file");
    expect(HOOK_PARSERS.qwen("pre-tool-use", { ...raw, tool_name: "constructor" }).toolName).toBe("constructor");
  });

  test("the shell tool's session variable names a Qwen session", () => {
    const env = Object.fromEntries(
      readFileSync(join(FIX, "qwen", "shell-env-1.txt"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    expect(sessionFromEnv(env)).toEqual({ id: "dd5921c3-aca4-4a72-9537-876aa97cd748", agent: "qwen" });
  });
});

describe("Factory Droid payloads", () => {
  const parse = (event: AgentEvent, name: string) => HOOK_PARSERS.droid(event, load("droid", name));

  test("Execute is the shell tool, Create the file writer", () => {
    const post = parse("post-tool-use", "PostToolUse.json");
    expect(post.agent).toBe("droid");
    expect(post.toolName).toBe("Bash");
    expect(post.toolCommand).toContain("git commit");
    expect(parse("pre-tool-use", "PreToolUse.json").toolName).toBe("Write");
  });

  test("a SessionStart after compaction names the session it continues", () => {
    const start = parse("session-start", "SessionStart.compact.json");
    expect(start.continues).toBe(load("droid", "SessionStart.json").session_id as string);
    expect(start.sessionId).not.toBe(start.continues);
    expect(parse("session-start", "SessionStart.json").continues).toBeUndefined();
  });

  test("a prompt is a prompt (Droid has no continuation prompts)", () => {
    const p = parse("user-prompt-submit", "UserPromptSubmit.json");
    expect(p.prompt).toBeTruthy();
    expect(p.skip).toBeUndefined();
  });
});

test("hook command lines name any agent with a parser", () => {
  expect(agentHookCall(["hook", "stop", "--agent", "qwen"])).toEqual({ event: "stop", agent: "qwen" });
  expect(agentHookCall(["hook", "post-tool-use", "--agent=droid"])).toEqual({ event: "post-tool-use", agent: "droid" });
  expect(agentHookCall(["hook", "stop", "--agent", "toString"])).toBeNull();
});
