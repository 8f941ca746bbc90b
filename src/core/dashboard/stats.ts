/**
 * The overview's window, shared by `aiflare ui` and `aiflare serve` so both count the same days: whole UTC days
 * ending today, every day of it present (a day without entries is a zero, not a gap).
 */

export const DAY_MS = 86_400_000;
export const DEFAULT_DAYS = 28;
export const MAX_DAYS = 3660;

/** `?days=` as a number of days, or the message explaining why not. */
export function readDays(text: string | null): number | string {
  if (text === null || text === "") return DEFAULT_DAYS;
  const days = Number(text);
  return Number.isInteger(days) && days >= 1 && days <= MAX_DAYS ? days : `days: a whole number from 1 to ${MAX_DAYS}`;
}

/** The first millisecond of a window of `days` days that ends with today (UTC). */
export function windowStart(now: Date, days: number): number {
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - (days - 1) * DAY_MS;
}

/** The UTC day (YYYY-MM-DD) of a time in ms. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Each of the window's days in order with its count; days missing from `counts` are zeros. */
export function everyDay(sinceMs: number, days: number, counts: Iterable<{ day: string; count: number }>): { day: string; count: number }[] {
  const byDay = new Map<string, number>();
  for (const c of counts) byDay.set(c.day, Number(c.count));
  const out: { day: string; count: number }[] = [];
  for (let d = 0; d < days; d++) {
    const day = utcDay(sinceMs + d * DAY_MS);
    out.push({ day, count: byDay.get(day) ?? 0 });
  }
  return out;
}
