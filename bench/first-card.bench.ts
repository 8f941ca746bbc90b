/**
 * The first card on screen, at 10,000 entries (goal ≤ 1 s), in headless Chromium: `aiflare ui` started cold (from
 * spawning the process to the first session card visible, with the index already built and with it rebuilt from
 * the branches), `aiflare ui` already running (navigation to the first card), and the team server's timeline
 * (`aiflare serve` on SQLite holding the same entries: signing in, and opening the page signed in). Each also gives
 * the page's own "aiflare:first-render" mark, from navigation start.
 */
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { binary } from "../test/helpers.ts";
import { launchBrowser, startServe, startUi } from "../test/dashboard-support.ts";
import { benchRepo, dashboardEntries, writeDashboardTimeline } from "./dashboard-data.ts";
import { fmt, report } from "./lib.ts";

const ENTRIES = Number(process.env.DASHBOARD_ENTRIES ?? 10_000);
const RUNS = 6;
const { dir, home, root, env } = benchRepo();
binary();
const entries = dashboardEntries(ENTRIES);
writeDashboardTimeline(root, env, entries);

const browser = await launchBrowser();
const mark = (page: Page) => page.evaluate(() => performance.getEntriesByName("aiflare:first-render")[0]?.startTime ?? Number.NaN);
/** Waits for the first session card to be visible; checks the first page holds 50 entries. */
async function firstCard(page: Page): Promise<void> {
  await page.waitForSelector(".session-card", { state: "visible", timeout: 120_000 });
  const rows = await page.$$eval(".entry-row", (r) => r.length);
  if (rows !== 50) throw new Error(`expected the first page of 50 entries, saw ${rows}`);
}
const dropIndex = () => {
  const at = join(root, ".git", "aiflare");
  for (const f of readdirSync(at)) if (f.startsWith("index.sqlite")) rmSync(join(at, f));
};

const coldBuilt: number[] = [];
const coldRebuilt: number[] = [];
const warm: number[] = [];
const warmMark: number[] = [];
try {
  // `aiflare ui` cold: spawn → URL → navigation → first card visible; the first run of each kind warms the disk cache
  for (const [samples, rebuild] of [[coldBuilt, false], [coldRebuilt, true]] as const) {
    console.log(`ui cold start, index ${rebuild ? "rebuilt" : "built"}…`);
    for (let run = 0; run <= RUNS; run++) {
      if (rebuild) dropIndex();
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      const page = await context.newPage();
      const t0 = performance.now();
      const ui = await startUi(root, env);
      await page.goto(ui.url);
      await firstCard(page);
      if (run > 0) samples.push(performance.now() - t0);
      await context.close();
      await ui.stop();
    }
  }

  // `aiflare ui` running, index warm: navigation → first card
  const ui = await startUi(root, env);
  for (let run = 0; run <= RUNS; run++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    const t0 = performance.now();
    await page.goto(ui.url);
    await firstCard(page);
    if (run > 0) warm.push(performance.now() - t0), warmMark.push(await mark(page));
    await context.close();
  }
  await ui.stop();
} catch (err) {
  await browser.close();
  throw err;
}

// the team server: the same entries sent as `aiflare sync` sends them
const serve = await startServe(join(dir, "team.sqlite"), home, env, "Bench Owner", ["--rate-limit", "0"]);
const t0 = performance.now();
for (let i = 0; i < entries.length; i += 100) {
  const res = await fetch(`${serve.origin}/api/v1/captures/batch`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-Key": serve.key },
    body: JSON.stringify({ captures: entries.slice(i, i + 100) }),
  });
  if (res.status !== 200) throw new Error(`batch refused: ${res.status} ${await res.text()}`);
}
console.log(`team server: ${ENTRIES} entries sent in ${fmt(performance.now() - t0)} (before the page)`);
const signIn: number[] = [];
const teamOpen: number[] = [];
const teamMark: number[] = [];
try {
  for (let run = 0; run <= RUNS; run++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    // signing in: the key submitted → the first card
    await page.goto(`${serve.origin}/`);
    await page.waitForSelector("form.signin");
    await page.fill("#key", serve.key);
    const s0 = performance.now();
    await page.click("form.signin button[type=submit]");
    await firstCard(page);
    const signed = performance.now() - s0;
    // signed in (the tab keeps its session): opening the page → the first card
    const o0 = performance.now();
    await page.reload();
    await firstCard(page);
    if (run > 0) signIn.push(signed), teamOpen.push(performance.now() - o0), teamMark.push(await mark(page));
    await context.close();
  }
} finally {
  await browser.close();
  await serve.stop();
}

const goal = "≤ 1000 ms";
report(`ui cold start → first card (index built)`, coldBuilt, undefined, goal);
report(`ui cold start → first card (index rebuilt)`, coldRebuilt, undefined, goal);
report(`ui running → first card`, warm, undefined, goal);
report(`  (page's first-render mark)`, warmMark);
report(`team: sign-in → first card`, signIn, undefined, goal);
report(`team: open signed in → first card`, teamOpen, undefined, goal);
report(`  (page's first-render mark)`, teamMark);
console.log(`${ENTRIES.toLocaleString("en")} entries in ${ENTRIES / 20} sessions; ${RUNS} runs each after one warm-up`);
Bun.spawnSync(["rm", "-rf", dir]);
