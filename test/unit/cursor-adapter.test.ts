import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseClaudeHookInput } from "../../src/agents/claude/index.ts";
import { cursorHookOutput, parseCursorHookInput } from "../../src/agents/cursor/index.ts";
import { cursorFileProblems, hasCursorHooks, mergeCursorHooks, removeCursorHooks } from "../../src/core/install/cursor-hooks.ts";
import { cursorFragment } from "../../src/core/install/templates.ts";

const DIR = join(import.meta.dir, "..", "fixtures", "agents", "cursor");
const fixture = (name: string) => JSON.parse(readFileSync(join(DIR, `${name}.json`), "utf8")) as Record<string, unknown>;

describe("Cursor payloads", () => {
  const cases: [string, string, Record<string, unknown>][] = [
    ["sessionStart", "session-start", { sessionId: "0d9c6b0e-6a3e-4a4f-9a36-2f6f4d0b7c11", cwd: "/path/to/repo", model: "gpt-5.2-codex-xhigh-fast", transcriptPath: undefined }],
    ["beforeSubmitPrompt", "user-prompt-submit", { prompt: "user prompt text" }],
    ["afterAgentResponse", "agent-response", { lastAssistantMessage: "Created the file." }],
    ["stop", "stop", { stopHookActive: false, lastAssistantMessage: undefined }],
    ["postToolUse", "post-tool-use", { toolName: "Shell", toolCommand: "git commit -m x", toolResponse: { output: "", exitCode: 0 } }],
    ["postToolUseFailure", "post-tool-use-failure", { toolName: "Shell", toolCommand: "false", toolError: "Command failed with exit code 1" }],
    ["sessionEnd", "session-end", { reason: "completed" }],
  ];
  for (const [name, event, want] of cases) {
    test(`${name} → ${event}`, () => {
      const input = parseCursorHookInput(event as never, fixture(name));
      expect(input.agent).toBe("cursor");
      expect(input).toMatchObject(want);
      // the same payload through Claude Code's hook file is Cursor's too
      expect(parseClaudeHookInput(event as never, fixture(name))).toEqual(input);
    });
  }

  test("a stop after a follow-up (loop_count > 0) is a continuation", () => {
    expect(parseCursorHookInput("stop", { ...fixture("stop"), loop_count: 1 }).stopHookActive).toBe(true);
  });

  test("a payload without cursor_version or conversation id is refused; Claude Code's own stay Claude Code's", () => {
    const { cursor_version: _, ...noVersion } = fixture("stop");
    expect(() => parseCursorHookInput("stop", noVersion)).toThrow();
    expect(() => parseCursorHookInput("stop", { ...fixture("stop"), conversation_id: null, session_id: undefined })).toThrow();
    expect(parseClaudeHookInput("stop", { session_id: "s1", last_assistant_message: "hi" }).agent).toBe("claude");
  });

  test("answers in Cursor's shape", () => {
    expect(cursorHookOutput("post-tool-use", { hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "x".repeat(20_000) } })).toEqual({
      additional_context: "x".repeat(10_000),
    });
    expect(cursorHookOutput("stop", { decision: "block", reason: "write the summary" })).toEqual({ followup_message: "write the summary" });
    expect(cursorHookOutput("stop", { systemMessage: "told" })).toBeUndefined();
    expect(cursorHookOutput("pre-tool-use", { hookSpecificOutput: { hookEventName: "PreToolUse", additionalContext: "c" } })).toBeUndefined();
  });
});

describe("Cursor hooks.json", () => {
  const fragment = cursorFragment("/opt/aiflare");
  test("merged beside the user's entries (a matcher kept), idempotent, removed exactly", () => {
    const before = JSON.stringify({ version: 1, hooks: { postToolUse: [{ command: "./lint.sh", matcher: "Write" }] } }, null, 2) + "\n";
    const after = mergeCursorHooks(before, fragment, ".cursor/hooks.json");
    const doc = JSON.parse(after);
    expect(doc.hooks.postToolUse).toEqual([{ command: "./lint.sh", matcher: "Write" }, { command: "/opt/aiflare hook post-tool-use --agent cursor", timeout: 60 }]);
    expect(hasCursorHooks(after)).toBe(true);
    expect(cursorFileProblems(after)).toEqual([]);
    expect(mergeCursorHooks(after, fragment, ".cursor/hooks.json")).toBe(after);
    expect(JSON.parse(removeCursorHooks(after, ".cursor/hooks.json")!)).toEqual(JSON.parse(before));
  });

  test("a file install created is deleted whole; version 1 is set", () => {
    const created = mergeCursorHooks(null, fragment, ".cursor/hooks.json");
    expect(Object.keys(JSON.parse(created))[0]).toBe("version");
    expect(removeCursorHooks(created, ".cursor/hooks.json")).toBeNull();
  });
});
