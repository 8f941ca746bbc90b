/** The read API's shared shaping: where a search hit, and the roots a timeline page lacks. */
import { describe, expect, test } from "bun:test";
import { matchContext, missingRoots, searchWords } from "../../src/core/dashboard/answers.ts";

const long = `${"lorem ipsum ".repeat(20)}the retry upload fix ${"dolor sit ".repeat(30)}`;

describe("matchContext", () => {
  const cases: [string, [string, string][], string, { field: string; text: string } | null][] = [
    ["the first field that holds a word", [["intent", "Nothing here"], ["reply", "Added a Retry for uploads"]], "retry", { field: "reply", text: "Added a Retry for uploads" }],
    ["words match where a word starts", [["intent", "reupload and uploads"]], "upload", { field: "intent", text: "reupload and uploads" }],
    ["inside a word is no hit", [["intent", "reupload"]], "upload", null],
    ["whitespace folds", [["prompt", "line one\n\n  retry   it"]], "retry", { field: "prompt", text: "line one retry it" }],
    ["no words, no context", [["intent", "retry"]], "  ", null],
    ["regex characters are plain text", [["intent", "a (b) c+"]], "c+", { field: "intent", text: "a (b) c+" }],
  ];
  for (const [name, fields, q, want] of cases) test(name, () => expect(matchContext(fields, searchWords(q))).toEqual(want));

  test("a long text is cut to whole words around the hit", () => {
    const m = matchContext([["intent", long]], ["upload"])!;
    expect(m.text.startsWith("…")).toBe(true);
    expect(m.text.endsWith("…")).toBe(true);
    expect(m.text).toContain("the retry upload fix");
    expect(m.text.length).toBeLessThan(200);
    const words = new Set(m.text.replace(/…/g, "").split(" "));
    for (const w of words) expect(["lorem", "ipsum", "the", "retry", "upload", "fix", "dolor", "sit"]).toContain(w);
  });
});

test("missingRoots: the roots a page refers to without holding them, once each", () => {
  const page = [
    { commitHash: "c", groupRootId: "a" },
    { commitHash: "b", groupRootId: "a" },
    { commitHash: "e", groupRootId: "d" },
    { commitHash: "d", groupRootId: null },
  ];
  expect(missingRoots(page)).toEqual(["a"]);
});
