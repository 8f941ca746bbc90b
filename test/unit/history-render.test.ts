import { describe, expect, test } from "bun:test";
import type { EntryRow, SessionInfo } from "../../src/core/history/query.ts";
import { renderList, renderWhy, toBlocks } from "../../src/core/history/render.ts";
import { isUtcZoneName, oneLine, truncate } from "../../src/core/history/style.ts";
import { makeEntry } from "../timeline-fixture.ts";

process.env.TZ = "UTC";
const plain = { color: false, width: 100 };
const t = (hhmm: string, day = "2026-11-29") => Date.parse(`${day}T${hhmm}:00Z`);
const h = (c: string) => c.repeat(40);

function row(over: Partial<EntryRow> & { commitHash: string }): EntryRow {
  return { sessionId: "3f2a9c1e-aaaa", groupRoot: null, tag: "FEATURE", agentType: "CLAUDE_CODE", title: "t", capturedMs: t("10:00"), prompts: [], ...over };
}

const session = (id: string, from: number, to: number, first: string | null): [string, SessionInfo] => [
  id,
  { sessionId: id, firstRequest: first, fromMs: from, toMs: to, entryCount: 2 },
];

describe("renderList", () => {
  test("reads like the issue's example", () => {
    const rows = [
      row({ commitHash: h("7"), groupRoot: h("e"), title: "Add English and Chinese translations", capturedMs: t("10:39"), prompts: ["Add English and Chinese too"] }),
      row({ commitHash: h("e"), title: "Add Korean keys for the Getting Started guide", capturedMs: t("10:14"), prompts: ["Make a Getting Started guide page"] }),
    ];
    const sessions = new Map([session("3f2a9c1e-aaaa", t("10:02"), t("10:41"), "Getting Started guide in three languages")]);
    expect(renderList(rows, sessions, plain)).toBe(
      [
        'Session 3f2a9c1e · "Getting Started guide in three languages" · Claude Code · 2026-11-29 10:02–10:41',
        "● eeeeeee  FEATURE  Add Korean keys for the Getting Started guide      10:14",
        '     💬 "Make a Getting Started guide page"',
        "  └ 7777777  FEATURE  Add English and Chinese translations             10:39",
        '     💬 "Add English and Chinese too"',
        "",
      ].join("\n"),
    );
  });

  test("sessions newest first, dates when a session crosses midnight, long prompts cut", () => {
    const long = `Please ${"refactor the parser ".repeat(20)}`;
    const rows = [
      row({ commitHash: h("b"), sessionId: "bbbbbbbb-2", tag: "BUGFIX", title: "Fix it", capturedMs: t("00:10", "2026-11-30"), prompts: [long, "b", "c", "d", "e"] }),
      row({ commitHash: h("a"), sessionId: "aaaaaaaa-1", title: "First", capturedMs: t("09:00"), agentType: "CODEX" }),
      row({ commitHash: h("c"), sessionId: "bbbbbbbb-2", tag: "BUGFIX", title: "Start", capturedMs: t("23:50") }),
    ];
    const sessions = new Map([
      session("aaaaaaaa-1", t("09:00"), t("09:00"), null),
      session("bbbbbbbb-2", t("23:50"), t("00:10", "2026-11-30"), "Fix the parser"),
    ]);
    const out = renderList(rows, sessions, { color: false, width: 60 });
    const lines = out.split("\n");
    expect(lines[0]).toBe('Session bbbbbbbb · "Fix the parser" · Claude Code · 2026-11-29 23:50 – 2026-11-30 00:10');
    expect(lines[1]).toBe("● ccccccc  BUGFIX   Start       2026-11-29 23:50");
    expect(lines[2]).toBe("● bbbbbbb  BUGFIX   Fix it      2026-11-30 00:10");
    expect(lines[3]).toStartWith('     💬 "Please refactor the parser');
    expect(lines[3]).toEndWith('…"');
    expect(Bun.stringWidth(lines[3]!)).toBeLessThanOrEqual(60);
    expect(lines[6]).toBe("        … and 2 more");
    expect(lines[7]).toBe("");
    expect(lines[8]).toBe("Session aaaaaaaa · Codex · 2026-11-29 09:00");
  });

  test("a member whose root is filtered out stands alone", () => {
    const blocks = toBlocks([row({ commitHash: h("7"), groupRoot: h("e") })], new Map());
    expect(blocks[0]!.lines.map((l) => l.member)).toEqual([false]);
  });

  test("colour only when asked", () => {
    const rows = [row({ commitHash: h("e"), title: "T" })];
    const sessions = new Map([session("3f2a9c1e-aaaa", t("10:00"), t("10:00"), "x")]);
    expect(renderList(rows, sessions, plain)).not.toContain("\x1b[");
    expect(renderList(rows, sessions, { color: true, width: 100 })).toContain("\x1b[32mFEATURE\x1b[39m");
  });

  // A prompt is shown as its start, whitespace collapsed, cut to the line: the whole start collapsed first, then cut
  // to display columns. Most prompts are plain ASCII from their first word, and only a short prefix of them is
  // looked at: the line must come out the same for every kind of text.
  const reference = (text: string, cols: number) => {
    const keep = cols * 4 + 16;
    const line = text.length > keep ? `${oneLine(text.slice(0, keep))}…` : oneLine(text);
    return `     💬 "${truncate(line, Math.max(10, cols - 2))}"`;
  };
  const texts = [
    `Please ${"refactor the parser ".repeat(30)}`,
    "x".repeat(500),
    "short",
    `  \n\t leading whitespace ${"and words ".repeat(40)}`,
    `${"a \n\n\n   ".repeat(40)}tail`,
    `${" ".repeat(40)}${"spaced   out\t\twords ".repeat(30)}`,
    `${"word ".repeat(17)}é${"more ".repeat(40)}`,
    `${"日本語のテキスト".repeat(30)}`,
    `emoji 👍🏽 ${"then ascii ".repeat(30)}`,
    `${"e\u0301".repeat(300)}`,
    `${"ab ".repeat(200)}\u{1F600}`,
    "",
    "   ",
    `${"y".repeat(57)}`,
    `${"y".repeat(58)}`,
    `${"y".repeat(59)}`,
    `${"z ".repeat(60)}`,
  ];
  for (const width of [14, 40, 60, 100, 200]) {
    test(`a prompt's line at ${width} columns is its collapsed start, cut`, () => {
      for (const text of texts) {
        const rows = [row({ commitHash: h("e"), prompts: [text] })];
        const out = renderList(rows, new Map([session("3f2a9c1e-aaaa", t("10:00"), t("10:00"), null)]), { color: false, width });
        expect({ text, line: out.split("\n")[2] }).toEqual({ text, line: reference(text, width - 5 - 3) });
      }
    });
  }

  test("control sequences in any field are taken out; rows without any are shown as they are", () => {
    const evil = "\x1b]0;owned\x07\x1b[2J\x9b31m";
    const rows = [row({ commitHash: h("e"), title: `T${evil}`, prompts: ["fine", `p${evil}`], author: `A${evil} <a@b>`, tag: "BUGFIX" })];
    const sessions = new Map([session("3f2a9c1e-aaaa", t("10:00"), t("10:00"), `first${evil}`)]);
    const out = renderList(rows, sessions, plain);
    expect(out).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    expect(out).toContain('"first" · Claude Code · A ·');
    expect(out).toContain('💬 "p"\n');
    // the same rows clean from the start give the same text
    const clean = [row({ commitHash: h("e"), title: "T", prompts: ["fine", "p"], author: "A <a@b>", tag: "BUGFIX" })];
    expect(renderList(clean, new Map([session("3f2a9c1e-aaaa", t("10:00"), t("10:00"), "first")]), plain)).toBe(out);
  });
});

describe("renderWhy", () => {
  const entry = makeEntry({
    commitHash: h("e"),
    title: "Guard empty config",
    tag: "BUGFIX",
    intent: "Problem: crash.\nSolution: guard.",
    alternatives: "- try/catch: hides errors",
    conversationSnippet: '{"role":"user","content":"It crashes"}\n{"role":"assistant","content":"Fixed"}\n',
    capturedAt: "2026-11-29T10:14:00Z",
  });
  test("says when capped and shows entries and plain commits", () => {
    const out = renderWhy(
      "src/app.ts:3-4",
      [
        { commitHash: h("e"), subject: "guard", author: "Ann", dateMs: t("10:14"), entry },
        { commitHash: h("1"), subject: "initial import", author: "Bob", dateMs: t("09:00", "2026-11-01"), entry: null },
      ],
      12,
      plain,
    );
    expect(out).toBe(
      [
        "src/app.ts:3-4 · 2 most recent of 12 commits",
        "",
        "● eeeeeee  BUGFIX  Guard empty config",
        "  2026-11-29 10:14 · Session session- · Claude Code · Ann",
        "  Intent",
        "    Problem: crash.",
        "    Solution: guard.",
        "  Alternatives",
        "    - try/catch: hides errors",
        '  💬 "It crashes"',
        "",
        "○ 1111111  initial import  (Bob, 2026-11-01) · no aiflare entry",
        "",
      ].join("\n"),
    );
  });
  test("no cap note when everything is shown", () => {
    const one = { commitHash: h("1"), subject: "s", author: "A", dateMs: 0, entry: null };
    expect(renderWhy("a.ts", [one], 1, plain).split("\n")[0]).toBe("a.ts · 1 commit");
  });
});

describe("truncate", () => {
  const cases: [string, number, string][] = [
    ["short", 10, "short"],
    ["exactly10!", 10, "exactly10!"],
    ["longer than ten", 10, "longer th…"],
    ["한국어한국어", 7, "한국어…"],
  ];
  for (const [text, cols, want] of cases) test(`${text} @${cols}`, () => expect(truncate(text, cols)).toBe(want));
});

describe("truncate and local time", () => {
  test("cuts to display columns whether the text is ASCII, wide or mixed", () => {
    expect(truncate("abcdefghij", 10)).toBe("abcdefghij");
    expect(truncate("abcdefghijk", 10)).toBe("abcdefghi…");
    expect(truncate("abcdefghijk…", 10)).toBe("abcdefghi…");
    expect(truncate("abcdefghij…", 10)).toBe("abcdefghi…");
    expect(truncate("abc💬", 5)).toBe("abc💬");
    expect(truncate("abc💬def", 5)).toBe("abc…");
    expect(truncate("한국어한국어", 7)).toBe("한국어…");
    expect(truncate("abc", 1)).toBe("…");
  });

  test("UTC zone names are told from others (UTC needs no time-zone database)", () => {
    for (const z of ["UTC", "Etc/UTC", ":UTC", "GMT", "Etc/GMT0", "Universal", "Zulu", "UTC0", ""]) expect(isUtcZoneName(z)).toBe(true);
    for (const z of ["Europe/Berlin", "America/New_York", "CET-1CEST", "EST5EDT", "Etc/GMT+5", "UTC-3"]) expect(isUtcZoneName(z)).toBe(false);
  });
});
