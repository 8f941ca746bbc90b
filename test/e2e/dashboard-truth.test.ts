/**
 * The dashboard tells the truth, the same in `aiflare ui` and `aiflare serve`: sessions that overlap in time stay
 * one card each, the overview counts only its window, the timeline shows what the terminal shows, and the page
 * reads on a phone. Real binary, real git and hooks, real headless Chromium.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { tempRepo, type TempRepo } from "../helpers.ts";
import { makeEntry, writeTimeline } from "../timeline-fixture.ts";
import { launchBrowser, signInTeam, startServe, startUi, type RunningServe, type RunningUi } from "../dashboard-support.ts";

setDefaultTimeout(90_000);

// Functions passed to page.evaluate run in the page; the test's own type world has no DOM.
declare const document: any, location: any, window: any;

let browser: Browser;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  browser = await launchBrowser();
});

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await browser?.close();
});

/** A repository served both ways: `aiflare ui` on it, and `aiflare serve` holding the same entries. */
interface BothWays {
  repo: TempRepo;
  ui: RunningUi;
  serve: RunningServe;
}

async function bothWays(repo: TempRepo, push: (serve: RunningServe) => Promise<void>): Promise<BothWays> {
  const ui = await startUi(repo.root, repo.env);
  const serve = await startServe(join(repo.dir, "team.sqlite"), repo.home, repo.env);
  cleanups.push(() => repo.cleanup(), () => ui.stop(), () => serve.stop());
  await push(serve);
  return { repo, ui, serve };
}

/** Posts entries to the team server as `aiflare sync` would. */
async function postEntries(serve: RunningServe, captures: unknown[]): Promise<void> {
  const res = await fetch(`${serve.origin}/api/v1/captures/batch`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-Key": serve.key },
    body: JSON.stringify({ captures }),
  });
  if (res.status !== 200) throw new Error(`batch refused: ${res.status} ${await res.text()}`);
}

/** A page on `aiflare ui` (local) or on `aiflare serve` (team, signed in), at `route`, once `ready` shows. */
async function open(where: BothWays, mode: "local" | "team", route: string, ready: string, viewport = { width: 1280, height: 860 }): Promise<Page> {
  const ctx = await browser.newContext({ viewport, ...(viewport.width < 500 ? { isMobile: true } : {}) });
  cleanups.push(() => ctx.close());
  const page = await ctx.newPage();
  if (mode === "local") await page.goto(where.ui.url);
  else await signInTeam(page, where.serve.origin, where.serve.key);
  await page.waitForSelector("body[data-ready='1']");
  await page.evaluate((r) => {
    document.body.dataset.route = "";
    location.hash = r;
  }, route);
  await page.waitForFunction((r) => document.body.dataset.route === r, route);
  await page.waitForSelector(ready);
  return page;
}

const DAY = 86_400_000;

describe("overview: every number uses the chosen window, the same in both modes", () => {
  let world: BothWays;
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  const at = (daysAgo: number, hour = 9) => new Date(today - daysAgo * DAY + hour * 3_600_000).toISOString();
  const entries = [
    makeEntry({ commitHash: "a".repeat(40), tag: "DOCS", claudeSessionId: "old-1", committedAt: at(40), capturedAt: at(40), changedFiles: ["old.md"] }),
    makeEntry({ commitHash: "b".repeat(40), tag: "TEST", claudeSessionId: "s-3", committedAt: at(10), capturedAt: at(10), changedFiles: ["t.ts"] }),
    makeEntry({ commitHash: "c".repeat(40), tag: "BUGFIX", claudeSessionId: "s-2", committedAt: at(3), capturedAt: at(3), changedFiles: ["a.ts"] }),
    makeEntry({ commitHash: "d".repeat(40), tag: "FEATURE", claudeSessionId: "s-1", committedAt: at(0, 0), capturedAt: at(0, 0), changedFiles: ["a.ts"] }),
    makeEntry({ commitHash: "e".repeat(40), tag: "FEATURE", claudeSessionId: "s-1", committedAt: at(0, 0), capturedAt: at(0, 0), changedFiles: ["b.ts"] }),
  ];

  beforeAll(async () => {
    const repo = tempRepo();
    writeTimeline(repo.root, repo.env, { entries });
    world = await bothWays(repo, (serve) => postEntries(serve, entries));
  });

  const read = (p: Page) =>
    p.evaluate(() => ({
      heading: document.querySelector("main h1")?.textContent,
      figures: document.querySelector(".figures")?.textContent,
      days: [...document.querySelectorAll("[aria-label='Entries per day'] rect")].map((r: any) => Number(r.getAttribute("height"))),
      tags: [...document.querySelectorAll("[aria-label='Entries per tag'] li")].map((l: any) => l.textContent),
      files: [...document.querySelectorAll(".top-files li")].map((l: any) => l.textContent),
    }));

  for (const mode of ["local", "team"] as const) {
    test(`${mode}: the last 28 days count only their entries; empty days are zero bars`, async () => {
      const p = await open(world, mode, "#/overview", ".figures");
      const seen = await read(p);
      expect(seen.heading).toBe("The last 28 days");
      expect(seen.figures).toContain("4 entries");
      expect(seen.figures).toContain("3 sessions");
      expect(seen.tags).toEqual(["FEATURE2", "BUGFIX1", "REFACTORING0", "TEST1", "DOCS0"]);
      expect(seen.days).toHaveLength(28);
      expect(seen.days.filter((h) => h > 0)).toHaveLength(3);
      expect(seen.days.at(-1)).toBe(Math.max(...seen.days));
      expect(seen.files.some((f: string) => f.includes("old.md"))).toBe(false);
      // a wider window takes the older entry in, everywhere on the page
      await p.click("text=90 days");
      await p.waitForFunction(() => document.querySelector("main h1")?.textContent === "The last 90 days");
      const wide = await read(p);
      expect(wide.figures).toContain("5 entries");
      expect(wide.figures).toContain("4 sessions");
      expect(wide.tags).toContain("DOCS1");
      expect(wide.days).toHaveLength(90);
      expect(wide.files.some((f: string) => f.includes("old.md"))).toBe(true);
    });
  }

  test("both modes show the same page for the same data", async () => {
    const local = await read(await open(world, "local", "#/overview?days=28", ".figures"));
    const team = await read(await open(world, "team", "#/overview?days=28", ".figures"));
    expect(team).toEqual(local);
  });

  test("on a phone the chart labels are as large as the page's text", async () => {
    const p = await open(world, "local", "#/overview", ".figures", { width: 390, height: 844 });
    const sizes = await p.evaluate(() => {
      const heightOf = (scope: string, text: string) => {
        const el = [...document.querySelectorAll(`${scope} *`)].find((e: any) => e.children.length === 0 && e.textContent === text);
        return el ? el.getBoundingClientRect().height : 0;
      };
      return { tag: heightOf("[aria-label='Entries per tag']", "FEATURE"), count: heightOf("[aria-label='Entries per tag']", "2") };
    });
    expect(sizes.tag).toBeGreaterThanOrEqual(11);
    expect(sizes.count).toBeGreaterThanOrEqual(11);
    expect(await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
  });
});
