import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appendWhole, ensureContextDir } from "../../src/core/fsutil.ts";
import { isValidSessionId, sessionFiles } from "../../src/core/session.ts";

describe("session id validation", () => {
  const valid = ["4f65f198-0c0c-47a2-b6ab-5f2e30ae5cbe", "a", "A.b_c-9", "x".repeat(128), "..a", "a.."];
  const invalid = ["", ".", "..", "../etc", "a/b", "a\\b", "a b", "a'b", "$(rm -rf ~)", "a;b", "x".repeat(129), "é", "a\nb", "a\0b"];
  for (const id of valid) test(`accepts ${JSON.stringify(id.slice(0, 40))}`, () => expect(isValidSessionId(id)).toBe(true));
  for (const id of invalid) test(`rejects ${JSON.stringify(id.slice(0, 40))}`, () => expect(isValidSessionId(id)).toBe(false));
  test("rejects non-strings", () => {
    for (const id of [null, undefined, 12, {}, ["a"]]) expect(isValidSessionId(id)).toBe(false);
  });
});

describe("session file names", () => {
  test("claude and codex prefixes (SPEC §3)", () => {
    const c = sessionFiles("/r", "claude", "S1");
    expect(c.prompts).toBe("/r/.context-capture/.claude-prompts-S1");
    expect(c.offset).toBe("/r/.context-capture/.claude-offset-S1");
    expect(c.delta).toBe("/r/.context-capture/.claude-conversation-delta-S1");
    expect(c.pendingQuestion).toBe("/r/.context-capture/.pending-question-S1");
    expect(sessionFiles("/r", "codex", "S1").prompts).toBe("/r/.context-capture/.codex-prompts-S1");
  });
});

describe("context dir and append", () => {
  test("owner-only dir with its own .gitignore; whole-line appends", () => {
    const root = mkdtempSync(join(tmpdir(), "aiflare-unit-"));
    try {
      const dir = ensureContextDir(root);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      expect(readFileSync(join(dir, ".gitignore"), "utf8")).toBe("*\n");
      ensureContextDir(root);
      const file = join(dir, "f");
      appendWhole(file, "one\n");
      appendWhole(file, `${"x".repeat(100_000)}\n`);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const lines = readFileSync(file, "utf8").split("\n");
      expect(lines[0]).toBe("one");
      expect(lines[1]!.length).toBe(100_000);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
