import { describe, expect, test } from "bun:test";
import { auditHooks, hasAiflareHooks, mergeHooks, removeHooks } from "../../src/core/install/hooks-json.ts";
import { claudeFragment, codexFragment } from "../../src/core/install/templates.ts";

const BIN = "/opt/aiflare/bin/aiflare";
const frag = claudeFragment(BIN);
const userHook = { type: "command", command: "echo user" };

const existing: Record<string, string | null> = {
  "no file": null,
  "empty file": "",
  "empty object": "{}\n",
  "other keys only": JSON.stringify({ permissions: { allow: ["Bash(ls)"] }, model: "opus" }, null, 2) + "\n",
  "user hooks on the same events": JSON.stringify(
    { hooks: { Stop: [{ hooks: [userHook] }], PostToolUse: [{ matcher: "Bash", hooks: [userHook] }] } },
    null,
    2,
  ),
  "tab indented, no final newline": JSON.stringify({ env: { A: "1" }, hooks: { Notification: [{ hooks: [userHook] }] } }, null, "\t"),
  "user empty event array": JSON.stringify({ hooks: { Notification: [] } }, null, 2) + "\n",
};

describe("mergeHooks / removeHooks", () => {
  for (const [name, before] of Object.entries(existing)) {
    test(`${name}: merge adds every entry, keeps the rest, is idempotent, and removes cleanly`, () => {
      const after = mergeHooks(before, frag, "settings");
      const doc = JSON.parse(after);
      // every desired entry present
      expect(auditHooks(after, frag, "settings").missing).toEqual([]);
      expect(auditHooks(after, frag, "settings").outdated).toEqual([]);
      // other keys and user hooks kept
      if (before && before.trim()) {
        const orig = JSON.parse(before);
        for (const k of Object.keys(orig)) if (k !== "hooks") expect(doc[k]).toEqual(orig[k]);
        for (const [event, groups] of Object.entries((orig.hooks ?? {}) as Record<string, unknown[]>)) {
          expect(doc.hooks[event].slice(0, groups.length)).toEqual(groups);
        }
        // indentation and final newline follow the original
        expect(after.endsWith("\n")).toBe(before.endsWith("\n"));
        if (before.includes("\t")) expect(after).toContain('\n\t"');
      }
      // twice: byte-identical
      expect(mergeHooks(after, frag, "settings")).toBe(after);
      // removal gives back the parsed original (or nothing when there was nothing)
      const removed = removeHooks(after, "settings");
      if (before === null || before.trim() === "" || before.trim() === "{}") expect(removed).toBeNull();
      else expect(JSON.parse(removed!)).toEqual(JSON.parse(before));
      expect(removed === null || !hasAiflareHooks(removed)).toBe(true);
    });
  }

  test("a 2-space file written by JSON.stringify comes back byte for byte", () => {
    const before = existing["other keys only"]!;
    expect(removeHooks(mergeHooks(before, frag, "s"), "s")).toBe(before);
  });

  test("an entry pointing at an old binary is updated in place, not duplicated", () => {
    const old = mergeHooks(null, claudeFragment("/old/aiflare"), "s");
    const audit = auditHooks(old, frag, "s");
    expect(audit.missing).toEqual([]);
    expect(audit.outdated.length).toBe(8);
    const updated = mergeHooks(old, frag, "s");
    expect(updated).not.toContain("/old/aiflare");
    expect(JSON.parse(updated).hooks.PostToolUse.length).toBe(2);
    expect(auditHooks(updated, frag, "s").outdated).toEqual([]);
  });

  test("a group mixing a user handler and aiflare's keeps the user's on removal", () => {
    const mixed = JSON.stringify({ hooks: { Stop: [{ hooks: [userHook, { type: "command", command: `${BIN} hook stop` }] }] } });
    expect(JSON.parse(removeHooks(mixed, "s")!)).toEqual({ hooks: { Stop: [{ hooks: [userHook] }] } });
  });

  test("missing entries are reported by name", () => {
    const doc = JSON.parse(mergeHooks(null, frag, "s"));
    doc.hooks.PostToolUse = doc.hooks.PostToolUse.filter((g: { matcher: string }) => g.matcher !== "AskUserQuestion");
    delete doc.hooks.SessionEnd;
    expect(auditHooks(JSON.stringify(doc), frag, "s").missing.sort()).toEqual(["PostToolUse (AskUserQuestion)", "SessionEnd"]);
  });

  test("the Bash entry carries the git commit filter; Codex entries carry --agent codex", () => {
    const doc = JSON.parse(mergeHooks(null, frag, "s"));
    const bash = doc.hooks.PostToolUse.find((g: { matcher: string }) => g.matcher === "Bash");
    expect(bash.hooks[0].if).toBe("Bash(git *)");
    expect(doc.hooks.PostToolUseFailure[0].hooks[0].command).toContain("hook post-tool-use-failure");
    const codex = JSON.parse(mergeHooks(null, codexFragment(BIN), "s"));
    expect(Object.keys(codex.hooks).sort()).toEqual(["PostToolUse", "PreToolUse", "SessionEnd", "SessionStart", "Stop", "UserPromptSubmit"]);
    for (const groups of Object.values(codex.hooks) as { hooks: { command: string }[] }[][]) {
      expect(groups[0]!.hooks[0]!.command).toEndWith("--agent codex");
    }
  });

  const invalid: [string, string][] = [
    ["not JSON", "{ hooks: "],
    ["an array", "[]"],
    ["hooks not an object", '{"hooks": []}'],
    ["an event not an array", '{"hooks": {"Stop": {}}}'],
  ];
  for (const [name, text] of invalid) {
    test(`refuses ${name} with an actionable message`, () => {
      expect(() => mergeHooks(text, frag, ".claude/settings.local.json")).toThrow(/settings\.local\.json.*nothing was changed/);
    });
  }
});
