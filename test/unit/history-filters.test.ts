import { describe, expect, test } from "bun:test";
import { buildFilter, ftsQuery, parseTimeSpec } from "../../src/core/history/filters.ts";
import { parseWhyTarget } from "../../src/core/history/why.ts";
import { isAiflareError } from "../../src/errors.ts";

process.env.TZ = "UTC";
const NOW = new Date("2026-11-29T12:00:00Z");
const H = 3_600_000;
const D = 24 * H;

describe("parseTimeSpec", () => {
  const cases: [string, "since" | "until", number | null][] = [
    ["7d", "since", NOW.getTime() - 7 * D],
    ["12h", "since", NOW.getTime() - 12 * H],
    ["2w", "since", NOW.getTime() - 14 * D],
    ["3 days ago", "since", NOW.getTime() - 3 * D],
    ["30 minutes", "since", NOW.getTime() - 30 * 60_000],
    ["today", "since", Date.parse("2026-11-29T00:00:00Z")],
    ["today", "until", Date.parse("2026-11-30T00:00:00Z")],
    ["yesterday", "since", Date.parse("2026-11-28T00:00:00Z")],
    ["2026-11-20", "since", Date.parse("2026-11-20T00:00:00Z")],
    ["2026-11-20", "until", Date.parse("2026-11-21T00:00:00Z")],
    ["2026-11-20 10:30", "since", Date.parse("2026-11-20T10:30:00Z")],
    ["2026-11-20T10:30:15", "until", Date.parse("2026-11-20T10:30:15Z")],
    ["2026-11-20T10:30:00+02:00", "since", Date.parse("2026-11-20T08:30:00Z")],
    ["2026-11-20T10:30:00Z", "since", Date.parse("2026-11-20T10:30:00Z")],
    ["2026-02-30", "since", null],
    ["last tuesday", "since", null],
    ["7 parsecs", "since", null],
    ["", "since", null],
  ];
  for (const [text, bound, want] of cases) {
    test(`${bound} "${text}"`, () => expect(parseTimeSpec(text, NOW, bound)).toBe(want));
  }
});

describe("ftsQuery", () => {
  const cases: [string, string | undefined][] = [
    ["korean", '"korean"*'],
    ["  getting   started ", '"getting"* "started"*'],
    ['say "hi"', '"say"* "hi"*'],
    ["한국어", '"한국어"*'],
    ["AND OR NOT", '"AND"* "OR"* "NOT"*'],
    ["*** ()", undefined],
    ["foo-bar src/app.ts", '"foo"* "bar"* "src"* "app"* "ts"*'],
    ["parser Parser parser", '"parser"* "Parser"*'],
  ];
  for (const [words, want] of cases) test(JSON.stringify(words), () => expect(ftsQuery(words)).toBe(want));
});

describe("buildFilter", () => {
  const ctx = { cwd: "/repo/src", root: "/repo", now: NOW };
  test("normalises every flag", () => {
    expect(
      buildFilter(
        { session: " 3f2a ", tag: "feature,BugFix", file: "app/", grep: "crash", since: "2026-11-01", until: "1d", limit: "20" },
        ctx,
      ),
    ).toEqual({
      session: "3f2a",
      tags: ["FEATURE", "BUGFIX"],
      file: "src/app",
      match: '"crash"*',
      sinceMs: Date.parse("2026-11-01T00:00:00Z"),
      untilMs: NOW.getTime() - D,
      limit: 20,
      limitGiven: true,
    });
  });
  test("a path at the root and an absolute path", () => {
    expect(buildFilter({ file: ".." }, ctx).file).toBe("");
    expect(buildFilter({ file: "/repo/docs/a.md" }, ctx).file).toBe("docs/a.md");
  });
  const bad: [string, Record<string, string>, RegExp][] = [
    ["unknown tag", { tag: "feature,chore" }, /Unknown tag "CHORE".*FEATURE, BUGFIX/],
    ["negative limit", { limit: "-1" }, /--limit must be a whole number/],
    ["word limit", { limit: "ten" }, /--limit/],
    ["bad since", { since: "someday" }, /Cannot read --since "someday"/],
    ["bad until", { until: "2026-13-01" }, /Cannot read --until/],
    ["path outside", { file: "../../etc/passwd" }, /outside the repository/],
    ["empty grep", { grep: "  " }, /--grep needs at least one word/],
  ];
  for (const [name, input, message] of bad) {
    test(`rejects ${name}`, () => {
      let err: unknown;
      try {
        buildFilter(input, ctx);
      } catch (e) {
        err = e;
      }
      expect(isAiflareError(err, "INVALID_ARGUMENT")).toBe(true);
      expect((err as Error).message).toMatch(message);
    });
  }
});

describe("parseWhyTarget", () => {
  const cases: [string, unknown][] = [
    ["src/app.ts", { file: "src/app.ts" }],
    ["src/app.ts:42", { file: "src/app.ts", start: 42, end: 42 }],
    ["src/app.ts:10-20", { file: "src/app.ts", start: 10, end: 20 }],
    ["src/app.ts:10,20", { file: "src/app.ts", start: 10, end: 20 }],
    ["C:odd:name", { file: "C:odd:name" }],
    ["a:b:7", { file: "a:b", start: 7, end: 7 }],
  ];
  for (const [spec, want] of cases) test(spec, () => expect(parseWhyTarget(spec, "/nonexistent-dir")).toEqual(want as never));
  test("rejects a backwards range", () => expect(() => parseWhyTarget("a.ts:20-10", "/nonexistent-dir")).toThrow(/Bad line range/));
  test("rejects line 0", () => expect(() => parseWhyTarget("a.ts:0", "/nonexistent-dir")).toThrow(/Bad line range/));
});
