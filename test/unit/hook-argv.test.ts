import { describe, expect, test } from "bun:test";
import { agentHookCall } from "../../src/core/hook/argv.ts";

describe("the command lines the entry handles without the CLI", () => {
  test("an agent event, with or without --agent", () => {
    expect(agentHookCall(["hook", "user-prompt-submit"])).toEqual({ event: "user-prompt-submit", agent: "claude" });
    expect(agentHookCall(["hook", "stop", "--agent", "codex"])).toEqual({ event: "stop", agent: "codex" });
    expect(agentHookCall(["hook", "session-start", "--agent=claude"])).toEqual({ event: "session-start", agent: "claude" });
  });

  test("everything else goes to the CLI", () => {
    for (const argv of [
      [],
      ["history", "list"],
      ["hook"],
      ["hook", "pre-push", "origin"],
      ["hook", "post-rewrite", "amend"],
      ["hook", "no-such-event"],
      ["hook", "stop", "--agent", "other"],
      ["hook", "stop", "--help"],
      ["hook", "stop", "--agent"],
      ["hook", "stop", "extra", "args"],
    ]) {
      expect(agentHookCall(argv)).toBeNull();
    }
  });
});
