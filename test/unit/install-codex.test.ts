import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { codexCommandOf, parseCodexHookInput } from "../../src/agents/codex/index.ts";
import { cleanupStaleSessions, STALE_SESSION_MS } from "../../src/core/session-cleanup.ts";

describe("Codex payloads", () => {
  const base = { session_id: "019a-codex", cwd: "/repo", transcript_path: null, model: "gpt-5", turn_id: "t1" };
  const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ["prompt with a null transcript path", { ...base, hook_event_name: "UserPromptSubmit", prompt: "hi" }, { prompt: "hi", transcriptPath: undefined }],
    ["stop", { ...base, hook_event_name: "Stop", last_assistant_message: "done", stop_hook_active: false }, { lastAssistantMessage: "done", stopHookActive: false }],
    ["stop with null message", { ...base, hook_event_name: "Stop", last_assistant_message: null }, { lastAssistantMessage: undefined }],
    ["Bash with a string command", { ...base, tool_name: "Bash", tool_input: { command: "git commit -m x" }, tool_response: "ok", tool_use_id: "c1" }, { toolName: "Bash", toolCommand: "git commit -m x", toolResponse: "ok" }],
    ["Bash with an argv command", { ...base, tool_name: "Bash", tool_input: { command: ["bash", "-lc", "git add . && git commit -m x"] } }, { toolCommand: "git add . && git commit -m x" }],
    ["session start", { ...base, hook_event_name: "SessionStart", source: "startup" }, { source: "startup" }],
  ];
  for (const [name, payload, want] of cases) {
    test(name, () => {
      const input = parseCodexHookInput("stop", payload);
      expect(input.agent).toBe("codex");
      expect(input.sessionId).toBe("019a-codex");
      for (const [k, v] of Object.entries(want)) expect((input as unknown as Record<string, unknown>)[k]).toEqual(v);
    });
  }
  test("a payload without session_id is refused", () => {
    expect(() => parseCodexHookInput("stop", { cwd: "/x" })).toThrow();
  });
  test("argv commands that are not shell wrappers are joined", () => {
    expect(codexCommandOf({ command: ["git", "commit", "-m", "x"] })).toBe("git commit -m x");
    expect(codexCommandOf({ command: 3 })).toBeUndefined();
  });
});

describe("stale Codex session cleanup", () => {
  test("removes only Codex sessions untouched for longer than the limit, with their markers", () => {
    const root = mkdtempSync(join(tmpdir(), "aiflare-clean-"));
    const dir = join(root, ".context-capture");
    mkdirSync(dir);
    const now = Date.now();
    const files: [string, number][] = [
      [".codex-prompts-old", now - STALE_SESSION_MS - 60_000],
      [".codex-offset-old", now - STALE_SESSION_MS - 60_000],
      [".pending-question-old", now - STALE_SESSION_MS - 60_000],
      [".codex-prompts-mixed", now - STALE_SESSION_MS - 60_000],
      [".codex-offset-mixed", now - 1000],
      [".codex-prompts-new", now - 1000],
      [".claude-prompts-old", now - STALE_SESSION_MS - 60_000],
      ["aiflare.log", now - STALE_SESSION_MS - 60_000],
    ];
    for (const [name, mtime] of files) {
      writeFileSync(join(dir, name), "x");
      utimesSync(join(dir, name), mtime / 1000, mtime / 1000);
    }
    expect(cleanupStaleSessions(root, "codex", now)).toEqual(["old"]);
    expect(readdirSync(dir).sort()).toEqual(
      [".claude-prompts-old", ".codex-offset-mixed", ".codex-prompts-mixed", ".codex-prompts-new", "aiflare.log"].sort(),
    );
    rmSync(root, { recursive: true });
  });
  test("no .context-capture directory is no error", () => {
    expect(cleanupStaleSessions("/nonexistent-dir-for-test", "codex")).toEqual([]);
  });
});
