/*
 * Dates and times in the forms `history list` prints, in the browser's time zone: `YYYY-MM-DD`, a 24-hour `HH:MM`, and
 * the day headings' English weekday (the page is in English). No Intl formatter: the first one a fresh page creates
 * sets up ICU, which took 26–105 ms of the first render's main thread in headless Chromium on a 2-core machine.
 */
const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

/** A local YYYY-MM-DD: the key of a day, and how a date is shown. */
export function dayKey(d: Date): string {
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())}`;
}

/** A day heading: `Wed 2026-12-02`. */
export function dayLabel(d: Date): string {
  return `${WEEKDAYS[d.getDay()]} ${dayKey(d)}`;
}

/** `14:05`. */
export function timeLabel(d: Date): string {
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
}

/** `2026-12-02 14:05`. */
export function dateTimeLabel(d: Date): string {
  return `${dayKey(d)} ${timeLabel(d)}`;
}

/** `12,345`: a count's digits grouped in threes (no Intl number format either). */
export function groupDigits(n: number): string {
  const digits = String(Math.trunc(Math.abs(n)));
  let out = "";
  for (let i = 0; i < digits.length; i++) {
    if (i > 0 && (digits.length - i) % 3 === 0) out += ",";
    out += digits[i];
  }
  return n < 0 ? `-${out}` : out;
}
