import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { HOOK_PARSERS } from "../../src/agents/index.ts";
import type { AgentEvent } from "../../src/agents/types.ts";
import { FIXTURES } from "../helpers.ts";

const coorp = join(FIXTURES, "CoorpAcademy__serverless-plugins", "logs");
const load = (rel: string) => JSON.parse(readFileSync(join(coorp, rel), "utf8")) as Record<string, unknown>[];

describe("Claude Code payloads from real sessions", () => {
  const cases: [string, AgentEvent, (p: ReturnType<typeof HOOK_PARSERS.claude>, raw: Record<string, unknown>) => void][] = [
    ["session_start.json", "session-start", (p, raw) => {
      expect(p.source).toBe("startup");
      expect(p.model).toBe(raw.model as string);
    }],
    ["user_prompt_submit.json", "user-prompt-submit", (p, raw) => expect(p.prompt).toBe(raw.prompt as string)],
    ["4f65f198-0c0c-47a2-b6ab-5f2e30ae5cbe/stop.json", "stop", (p, raw) => {
      expect(p.stopHookActive).toBe(false);
      expect(p.lastAssistantMessage).toBe(raw.last_assistant_message as string);
    }],
    ["abc7156b-6420-4373-a150-9b2eecad6805/post_tool_use.json", "post-tool-use", (p, raw) => {
      expect(p.toolName).toBe(raw.tool_name as string);
      const input = raw.tool_input as { command?: string };
      expect(p.toolCommand).toBe(typeof input.command === "string" ? input.command : undefined);
    }],
    ["session_end.json", "session-end", (p) => expect(p.reason).toBe("prompt_input_exit")],
  ];
  for (const [file, event, check] of cases) {
    test(`${file} → ${event}`, () => {
      const payloads = load(file);
      expect(payloads.length).toBeGreaterThan(0);
      for (const raw of payloads) {
        const parsed = HOOK_PARSERS.claude(event, raw);
        expect(parsed.agent).toBe("claude");
        expect(parsed.sessionId).toBe(raw.session_id as string);
        expect(parsed.cwd).toBe(raw.cwd as string);
        check(parsed, raw);
      }
    });
  }

  test("AskUserQuestion: the questions and the user's answers, in order", () => {
    const raw = load("abc7156b-6420-4373-a150-9b2eecad6805/post_tool_use.json").find((p) => p.tool_name === "AskUserQuestion")!;
    const answers = (raw.tool_response as { answers: Record<string, string> }).answers;
    const parsed = HOOK_PARSERS.claude("post-tool-use", raw);
    expect(parsed.answers).toEqual(Object.entries(answers).map(([question, answer]) => ({ question, answer })));
    expect(parsed.answers).toHaveLength(4);
  });

  test("older payloads without permission_mode or tool_use_id", () => {
    const raw = JSON.parse(readFileSync(join(FIXTURES, "ranaroussi__quantstats", "logs", "post_tool_use.json"), "utf8"));
    const list = (Array.isArray(raw) ? raw : [raw]) as Record<string, unknown>[];
    for (const p of list) expect(HOOK_PARSERS.claude("post-tool-use", p).sessionId).toBe(p.session_id as string);
  });
});

describe("payloads that cannot be used", () => {
  const bad: [string, unknown][] = [
    ["null", null],
    ["array", []],
    ["string", "hello"],
    ["no session_id", { cwd: "/tmp" }],
    ["numeric session_id", { session_id: 42 }],
    ["prompt not a string", { session_id: "s", prompt: { x: 1 } }],
  ];
  for (const [name, raw] of bad) {
    test(name, () => expect(() => HOOK_PARSERS.claude("user-prompt-submit", raw)).toThrow());
  }

  test("unknown fields are ignored; codex parser tags the agent", () => {
    const p = HOOK_PARSERS.codex("stop", { session_id: "s1", turn_id: "t", extra: [1], last_assistant_message: "hi" });
    expect(p.agent).toBe("codex");
    expect(p.lastAssistantMessage).toBe("hi");
  });

  const noAnswers: [string, Record<string, unknown>][] = [
    ["no tool_response", { tool_name: "AskUserQuestion" }],
    ["answers missing", { tool_name: "AskUserQuestion", tool_response: { questions: [] } }],
    ["answers an array", { tool_name: "AskUserQuestion", tool_response: { answers: ["x"] } }],
    ["answers not strings", { tool_name: "AskUserQuestion", tool_response: { answers: { q: 1 } } }],
    ["another tool", { tool_name: "Bash", tool_response: { answers: { q: "a" } } }],
  ];
  for (const [name, extra] of noAnswers) {
    test(`no answers: ${name}`, () => {
      expect(HOOK_PARSERS.claude("post-tool-use", { session_id: "s", ...extra }).answers).toBeUndefined();
    });
  }

  // a model name that is not one is left out; the payload itself still counts
  const models: [string, unknown, string | undefined][] = [
    ["a name", "claude-sonnet-4-5", "claude-sonnet-4-5"],
    ["a number", 4, undefined],
    ["an object", { id: "m" }, undefined],
    ["empty", "", undefined],
    ["with a control character", "m\u001b[31m", undefined],
    ["too long", "m".repeat(201), undefined],
  ];
  for (const [name, model, expected] of models) {
    test(`model: ${name}`, () => {
      for (const agent of ["claude", "codex"] as const) {
        const p = HOOK_PARSERS[agent]("session-start", { session_id: "s", source: "startup", model });
        expect(p.sessionId).toBe("s");
        expect(p.model).toBe(expected);
      }
    });
  }

  test("tool_input without a string command", () => {
    expect(HOOK_PARSERS.claude("post-tool-use", { session_id: "s", tool_name: "Bash", tool_input: { command: 3 } }).toolCommand).toBeUndefined();
    expect(HOOK_PARSERS.claude("post-tool-use", { session_id: "s", tool_name: "Bash", tool_input: "x" }).toolCommand).toBeUndefined();
  });
});
