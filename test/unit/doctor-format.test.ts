/** doctor's verdicts and layout: a failed sync is a warning, times are local, lines wrap at words. */
import { describe, expect, test } from "bun:test";
import { checkSync, runDoctor, type DoctorContext } from "../../src/core/install/doctor.ts";
import { formatDoctor } from "../../src/core/install/format.ts";
import { clock, day, indent, wrapLine } from "../../src/core/history/style.ts";

function context(sync: Awaited<ReturnType<NonNullable<DoctorContext["providers"]["sync"]>>>): DoctorContext {
  return {
    repo: { root: "/r", gitDir: "/r/.git", commonDir: "/r/.git" },
    providers: { sync: async () => sync },
  } as unknown as DoctorContext;
}

describe("doctor", () => {
  test("a failed last sync with nothing else wrong is a warning (exit 0), dated in local time", async () => {
    const at = "2026-11-29T10:05:00.000Z";
    const report = await runDoctor(context({ pending: 0, lastError: { at, message: "backend answered 503" } }), [checkSync]);
    expect(report.ok).toBe(true);
    const line = report.results.find((r) => r.id === "sync:error")!;
    expect(line.status).toBe("warn");
    const ms = Date.parse(at);
    expect(line.message).toBe(`last sync failed at ${day(ms)} ${clock(ms)}: backend answered 503`);
    expect(formatDoctor(report)).toContain(`! last sync failed at ${day(ms)} ${clock(ms)}`);
  });

  test("on a narrow terminal lines wrap at word boundaries, the fix indented under itself", () => {
    const message = "hooks call /usr/local/bin/aiflare, version 0.0.9; this is 0.1.0 and the hooks should be refreshed";
    const text = formatDoctor(
      { root: "/r", ok: true, results: [{ id: "x", status: "warn", message, fix: "run aiflare install with the aiflare you mean to use" }] },
      40,
    );
    const lines = text.split("\n");
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(40);
    const words = (s: string) => s.replace(/[!✓✗]|fix:/g, " ").split(/\s+/).filter(Boolean);
    expect(words(lines.slice(1, -1).join(" "))).toEqual(words(`${message} run aiflare install with the aiflare you mean to use`));
    expect(lines[2]!.startsWith("  ")).toBe(true);
    expect(lines.find((l) => l.includes("fix:"))).toStartWith("    fix: ");
  });
});

describe("wrapLine", () => {
  test.each([
    ["short", 20, ["short"]],
    ["the quick brown fox jumps", 10, ["the quick", "brown fox", "jumps"]],
    ["  - a list item that goes on", 14, ["  - a list", "  item that", "  goes on"]],
    ["abcdefghijklmnop xy", 6, ["abcdef", "ghijkl", "mnop", "xy"]],
  ])("%p at %d columns", (line, cols, expected) => {
    expect(wrapLine(line, cols)).toEqual(expected);
  });

  test("indent with a width keeps list items hanging under their text and breaks no word", () => {
    const text = indent("- first point that is long enough to wrap\nplain sentence here", "    ", 24);
    expect(text).toBe("    - first point that\n      is long enough to\n      wrap\n    plain sentence here");
  });
});
