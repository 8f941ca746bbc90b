import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseJsonl, splitConcatenatedJson } from "../../src/util/jsonl.ts";
import { assistantText, lastAssistantTextInTranscript, readTail } from "../../src/core/transcript.ts";
import { FIXTURES } from "../helpers.ts";

describe("lenient JSONL", () => {
  test("two records on one line, blank lines, a truncated last line", () => {
    const text = '{"a":1}\n\n{"b":"}{"}{"c":[1,{"d":2}]}\n{"e":';
    expect(parseJsonl(text)).toEqual([{ a: 1 }, { b: "}{" }, { c: [1, { d: 2 }] }]);
  });
  test("escaped quotes inside strings do not split", () => {
    expect(splitConcatenatedJson('{"a":"x\\"}{"}{"b":2}')).toEqual(['{"a":"x\\"}{"}', '{"b":2}']);
  });
});

describe("assistant text of a record", () => {
  const cases: [string, unknown, string | undefined][] = [
    ["string content", { type: "assistant", message: { role: "assistant", content: "hi" } }, "hi"],
    ["text blocks", { type: "assistant", message: { role: "assistant", content: [{ type: "text", text: "a" }, { type: "tool_use" }, { type: "text", text: "b" }] } }, "a\nb"],
    ["only thinking", { type: "assistant", message: { role: "assistant", content: [{ type: "thinking", thinking: "x" }] } }, undefined],
    ["a user line", { type: "user", message: { role: "user", content: "q" } }, undefined],
    ["a tool result", { type: "user", message: { role: "user", content: [{ type: "tool_result", content: "x" }] } }, undefined],
    ["blank text", { type: "assistant", message: { role: "assistant", content: [{ type: "text", text: "  " }] } }, undefined],
    ["garbage", 42, undefined],
  ];
  for (const [name, rec, want] of cases) test(name, () => expect(assistantText(rec)).toBe(want));
});

describe("last assistant text of real transcripts", () => {
  const cases: [string, string][] = [
    ["ConfabulousDev__confab-web/backend/internal/analytics/testdata/session_comprehensive.jsonl", "Pushed `bab0ce4` to main."],
    ["entireio__cli/37/995ebed6e4/2/full.jsonl", "There's a `GetAgent()` function in `config.go`"],
    ["entireio__cli/73/7e6e3ea2ad/0/full.jsonl", "Done. Fixed in `9645240`"],
    ["entireio__cli/91/b42542f24f/1/full.jsonl", "Draft PR created: https://github.com/entireio/cli/pull/185"],
    ["git-ai-project__git-ai/tests/fixtures/example-claude-code.jsonl", "Now let me update the EvalBar.tsx:"],
    ["d-kimuson__claude-code-viewer/mock-global-claude-dir/projects/sample-project/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl", "CLAUDE.mdファイルを最新の状態にアップデートしました。"],
  ];
  for (const [file, prefix] of cases) {
    test(file.split("/")[0]!, () => {
      const text = lastAssistantTextInTranscript(join(FIXTURES, file));
      expect(text?.startsWith(prefix)).toBe(true);
    });
  }

  test("the resumed transcript with two records on line 128 keeps every record", () => {
    const text = require("node:fs").readFileSync(join(FIXTURES, "entireio__cli/37/995ebed6e4/2/full.jsonl"), "utf8") as string;
    const lines = text.split("\n").filter((l) => l.trim()).length;
    expect(parseJsonl(text).length).toBe(lines + 1);
  });

  test("reading only the tail drops the partial first line", () => {
    const dir = mkdtempSync(join(tmpdir(), "aiflare-unit-"));
    try {
      const file = join(dir, "t.jsonl");
      const rec = (t: string) => JSON.stringify({ type: "assistant", message: { role: "assistant", content: [{ type: "text", text: t }] } });
      writeFileSync(file, `${rec("x".repeat(5000))}\n${rec("last")}`);
      expect(readTail(file, 100).startsWith("{")).toBe(true);
      expect(lastAssistantTextInTranscript(file)).toBe("last");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
