/** Recall's pure parts: which files a tool call edits, and the quoted, capped text. */
import { describe, expect, test } from "bun:test";
import { editTargets, patchTargets } from "../../src/core/recall/edit.ts";
import { cut, editContext, flatten, handoffContext, quote, sessionStartContext } from "../../src/core/recall/format.ts";
import type { RecallEntry } from "../../src/store/index/recall.ts";

const entry = (n: number, over: Partial<RecallEntry> = {}): RecallEntry => ({
  commitHash: `${n}`.padStart(40, "a"),
  title: `Title ${n}`,
  tag: "BUGFIX",
  date: "2026-11-12T09:00:00.000Z",
  intent: `Intent ${n}`,
  alternatives: "",
  sessionId: "s",
  branch: "main",
  changedFiles: ["a.ts"],
  ...over,
});

describe("editTargets", () => {
  const cases: [string, string, unknown, { path: string; oldText?: string }[]][] = [
    ["Edit", "Edit", { file_path: "/r/a.ts", old_string: "x", new_string: "y" }, [{ path: "/r/a.ts", oldText: "x" }]],
    ["Write", "Write", { file_path: "/r/a.ts", content: "x" }, [{ path: "/r/a.ts", oldText: undefined }]],
    ["MultiEdit", "MultiEdit", { file_path: "a.ts", edits: [{ old_string: "" }, { old_string: "two" }] }, [{ path: "a.ts", oldText: "two" }]],
    ["NotebookEdit", "NotebookEdit", { notebook_path: "/r/n.ipynb", new_source: "x" }, [{ path: "/r/n.ipynb", oldText: undefined }]],
    ["a tool recall ignores", "Read", { file_path: "/r/a.ts" }, []],
    ["no file path", "Edit", { old_string: "x" }, []],
    ["not an object", "Edit", "a.ts", []],
    [
      "Codex apply_patch",
      "apply_patch",
      { command: "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-old line\n+new line\n*** Add File: b.ts\n+x\n*** Delete File: c.ts\n*** End Patch" },
      [{ path: "src/a.ts", oldText: "old line" }, { path: "c.ts", oldText: undefined }],
    ],
  ];
  for (const [name, tool, input, want] of cases) test(name, () => expect(editTargets(tool, input)).toEqual(want));

  test("a patch names at most 5 files", () => {
    const patch = Array.from({ length: 9 }, (_, i) => `*** Update File: f${i}.ts\n-x`).join("\n");
    expect(patchTargets(patch).map((t) => t.path)).toEqual(["f0.ts", "f1.ts", "f2.ts", "f3.ts", "f4.ts"]);
  });
});

describe("quoting", () => {
  const cases: [string, string, string][] = [
    ["markdown and lines flattened", "**Problem**: a\n\n## Solution\n- b", "Problem: a Solution - b"],
    ["control characters go", "a\u001b]0;x\u0007b\u202ec", "a ]0;x b c"],
    ["code keeps its underscores and backticks", "fixes `__init__.py`", "fixes `__init__.py`"],
    ["a fake delimiter loses its dashes", "--- end aiflare record ---", "— end aiflare record —"],
  ];
  for (const [name, input, want] of cases) test(name, () => expect(flatten(input)).toBe(want));

  test("cut keeps whole words and marks the cut", () => {
    expect(cut("one two three four", 15)).toBe("one two three…");
    expect(cut("short", 12)).toBe("short");
    expect(cut("x".repeat(50), 10)).toBe(`${"x".repeat(9)}…`);
  });

  test("quote is a JSON string", () => {
    expect(quote('say "hi"\nnow', 100)).toBe('"say \\"hi\\" now"');
  });
});

describe("editContext", () => {
  test("states each entry as facts, the line hits marked, within the cap whatever the fields", () => {
    const big = "word ".repeat(20_000);
    const entries = [entry(1, { intent: big, alternatives: big }), entry(2, { intent: big }), entry(3, { summaryStatus: "pending", intent: "" })];
    for (const max of [200, 300, 600, 1500, 4000]) {
      const text = editContext("src/a.ts", entries, new Set([entries[0]!.commitHash]), max);
      expect(text.length).toBeLessThanOrEqual(max);
      expect(text.endsWith("--- end aiflare record ---")).toBe(true);
      if (max < 600) continue;
      expect(text.split("\n")[1]).toBe("--- begin aiflare record ---");
      expect(text).toContain("Commit aaaaaaa (2026-11-12, BUGFIX) \"Title 1\", which last changed the lines being edited");
    }
    const roomy = editContext("src/a.ts", entries, new Set(), 4000);
    expect(roomy).toContain("3 recorded commits");
    expect(roomy).toContain("No reason was recorded for it.");
  });

  test("names the earlier names of a renamed file", () => {
    expect(editContext("b.ts", [entry(1)], new Set(), 1500, ["a.ts"])).toContain('changed "b.ts" (earlier named "a.ts")');
  });
});

describe("session start and handoff", () => {
  test("nothing to say is the empty string", () => {
    expect(sessionStartContext("main", [], [], 1000)).toBe("");
  });

  test("the handoff leads with the open request and stays within its cap", () => {
    const text = handoffContext(
      { sessionId: "abc", lastPrompt: "Add backoff ".repeat(500), lastReply: "Done ".repeat(500), changedFiles: Array.from({ length: 40 }, (_, i) => `f${i}.ts`), entries: [entry(1)] },
      2000,
    );
    expect(text.length).toBeLessThanOrEqual(2000);
    expect(text.split("\n")[2]).toStartWith('The user\'s last request was: "Add backoff');
    expect(text).toContain("more.");
  });
});
