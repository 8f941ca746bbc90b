import { describe, expect, test } from "bun:test";
import { auditCopilotHooks, hasCopilotHooks, mergeCopilotHooks, removeCopilotHooks } from "../../src/core/install/copilot-hooks.ts";

const BIN = "/opt/bin/aiflare";
const label = ".github/hooks/aiflare.json";

describe("Copilot CLI hooks file", () => {
  test("a new file holds version 1 and every event aiflare handles, in Copilot's flat layout", () => {
    const doc = JSON.parse(mergeCopilotHooks(null, BIN, label));
    expect(doc.version).toBe(1);
    expect(Object.keys(doc.hooks)).toEqual(["sessionStart", "userPromptSubmitted", "postToolUse", "postToolUseFailure", "agentStop", "sessionEnd"]);
    expect(doc.hooks.postToolUse).toEqual([{ type: "command", bash: `${BIN} hook post-tool-use --agent copilot`, timeoutSec: 60 }]);
  });

  test("merging keeps the user's handlers in place, is idempotent, and uninstall takes exactly aiflare's out", () => {
    const before = `${JSON.stringify({ version: 1, hooks: { sessionStart: [{ type: "command", bash: "echo hi" }], preToolUse: [{ type: "command", bash: "./check.sh" }] } }, null, 2)}\n`;
    const merged = mergeCopilotHooks(before, BIN, label);
    const doc = JSON.parse(merged);
    expect(doc.hooks.sessionStart[0]).toEqual({ type: "command", bash: "echo hi" });
    expect(doc.hooks.sessionStart[1].bash).toContain("hook session-start --agent copilot");
    expect(mergeCopilotHooks(merged, BIN, label)).toBe(merged);
    expect(hasCopilotHooks(merged)).toBe(true);
    expect(JSON.parse(removeCopilotHooks(merged, label)!)).toEqual(JSON.parse(before));
    expect(removeCopilotHooks(mergeCopilotHooks(null, BIN, label), label)).toBeNull();
  });

  test("a moved binary is updated in place; the audit names what is missing or differs", () => {
    const old = mergeCopilotHooks(null, "/old/aiflare", label);
    const moved = JSON.parse(mergeCopilotHooks(old, BIN, label));
    expect(moved.hooks.agentStop).toEqual([{ type: "command", bash: `${BIN} hook stop --agent copilot`, timeoutSec: 10 }]);
    expect(auditCopilotHooks(old, BIN, label).outdated).toContain("agentStop");
    const partial = JSON.parse(old);
    delete partial.hooks.agentStop;
    expect(auditCopilotHooks(JSON.stringify(partial), "/old/aiflare", label).missing).toEqual(["agentStop"]);
    expect(() => mergeCopilotHooks("{not json", BIN, label)).toThrow(/not valid JSON/);
  });
});
