import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { dateTimeLabel, dayKey, dayLabel, groupDigits, timeLabel } from "../../src/web/page/dates.ts";

describe("the dashboard's dates and times", () => {
  // local time: built from local parts, so the test holds in any time zone
  const d = new Date(2026, 11, 2, 9, 5, 30);
  test("in the forms history list prints", () => {
    expect(dayKey(d)).toBe("2026-12-02");
    expect(dayLabel(d)).toBe("Wed 2026-12-02");
    expect(timeLabel(d)).toBe("09:05");
    expect(dateTimeLabel(d)).toBe("2026-12-02 09:05");
    expect(timeLabel(new Date(2026, 0, 1, 23, 59))).toBe("23:59");
  });
  test("counts grouped in threes", () => {
    expect([0, 7, 999, 1000, 12345, 1234567, -4321].map(groupDigits)).toEqual(["0", "7", "999", "1,000", "12,345", "1,234,567", "-4,321"]);
  });
  test("the page's code creates no Intl formatter (the first one costs a fresh page tens of milliseconds)", () => {
    const dir = join(import.meta.dir, "..", "..", "src", "web", "page");
    for (const f of ["dates.ts", "format.ts", "timeline.ts", "session.ts", "entry.ts", "file.ts", "overview.ts", "people.ts", "app.ts"]) {
      const text = readFileSync(join(dir, f), "utf8");
      expect({ f, intl: /Intl\.|toLocale(Date|Time)?String/.test(text) }).toEqual({ f, intl: false });
    }
  });
});
