/** The time each conversation line was said: read where present, older lines without it unchanged, import's times. */
import { describe, expect, test } from "bun:test";
import { conversationLines } from "../../src/util/jsonl.ts";
import { questionLines } from "../../src/core/hook/events.ts";
import { replaySession } from "../../src/core/import/replay.ts";
import { CommitCatalog } from "../../src/core/import/commits.ts";
import type { PastEvent } from "../../src/core/import/events.ts";

describe("conversation lines carry the time they were said", () => {
  const cases: [name: string, jsonl: string, expected: unknown[]][] = [
    ["an older line without a time", '{"role":"user","content":"hi"}', [{ role: "user", content: "hi" }]],
    ["a line with its time", '{"role":"user","content":"hi","at":"2026-11-30T09:15:02.120Z"}', [{ role: "user", content: "hi", at: "2026-11-30T09:15:02.120Z" }]],
    [
      "a question with its time and kind",
      '{"role":"assistant","kind":"question","content":"Which?","at":"2026-11-30T09:16:00.000Z"}',
      [{ role: "assistant", kind: "question", content: "Which?", at: "2026-11-30T09:16:00.000Z" }],
    ],
    ["a time that is no time is left out", '{"role":"user","content":"hi","at":"soon"}', [{ role: "user", content: "hi" }]],
    ["a time that is not a string is left out", '{"role":"user","content":"hi","at":1764494102}', [{ role: "user", content: "hi" }]],
    ["a time far too long is left out", `{"role":"user","content":"hi","at":"2026-11-30T09:15:02.120Z${" ".repeat(40)}"}`, [{ role: "user", content: "hi" }]],
    [
      "old and new lines mixed",
      '{"role":"user","content":"a"}\n{"role":"assistant","content":"b","at":"2026-11-30T09:15:09.000Z"}\n',
      [{ role: "user", content: "a" }, { role: "assistant", content: "b", at: "2026-11-30T09:15:09.000Z" }],
    ],
  ];
  for (const [name, jsonl, expected] of cases) test(name, () => expect(conversationLines(jsonl)).toEqual(expected as never));

  test("a question and its answer share the time the answer came", () => {
    expect(questionLines([{ question: "Which?", answer: "B" }], "2026-11-30T09:16:00.000Z")).toEqual([
      { role: "assistant", kind: "question", content: "Which?", at: "2026-11-30T09:16:00.000Z" },
      { role: "user", kind: "answer", content: "B", at: "2026-11-30T09:16:00.000Z" },
    ]);
    expect(questionLines([{ question: "Which?", answer: "B" }])[0]).not.toHaveProperty("at");
  });
});

describe("import takes each line's time from the transcript", () => {
  const t = (s: string) => Date.parse(`2026-11-30T09:${s}Z`);
  test("prompts, replies and answers carry their transcript time; a line without one has none", () => {
    const events: PastEvent[] = [
      { kind: "prompt", text: "Add a parser", time: t("00:01.000") },
      { kind: "assistant", text: "thinking", time: t("00:05.000") },
      { kind: "assistant", text: "Added it.", time: t("00:09.500") },
      { kind: "question", answers: [{ question: "Tests too?", answer: "Yes" }], time: t("01:00.000") },
      { kind: "prompt", text: "And docs", time: Number.NaN },
    ];
    const replay = replaySession(events, new CommitCatalog([]), new Set());
    expect(conversationLines(replay.transcript)).toEqual([
      { role: "user", content: "Add a parser", at: "2026-11-30T09:00:01.000Z" },
      { role: "assistant", kind: "question", content: "Tests too?", at: "2026-11-30T09:01:00.000Z" },
      { role: "user", kind: "answer", content: "Yes", at: "2026-11-30T09:01:00.000Z" },
      // the turn's last reply, recorded when the turn ends (as the Stop hook records it), with the time it was written
      { role: "assistant", content: "Added it.", at: "2026-11-30T09:00:09.500Z" },
      { role: "user", content: "And docs" },
    ]);
  });
});
