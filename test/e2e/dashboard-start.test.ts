/**
 * How `aiflare ui`'s page starts, in a real headless Chromium: the boot script trades the printed URL's token for a
 * session (with the first page) as soon as it arrives, whichever of it and the page's script runs first, and a
 * sign-in made while the server still reads the first page ahead gets that whole page.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, Route } from "playwright-core";
import { tempRepo, type TempRepo } from "../helpers.ts";
import { convo, fakeHash, makeEntry, writeTimeline } from "../timeline-fixture.ts";
import { launchBrowser, startUi, type RunningUi } from "../dashboard-support.ts";

setDefaultTimeout(60_000);

// Functions passed to page.evaluate run in the page; the test's own type world has no DOM.
declare const window: any, location: any, sessionStorage: any, document: any;

const FIRST = "/api/v1/timeline?limit=50";

let repo: TempRepo;
let ui: RunningUi;
let browser: Browser;

/** `n` entries, one a minute, in sessions of ten. */
function entries(n: number, from = 0) {
  const t0 = Date.UTC(2026, 10, 20, 9);
  return Array.from({ length: n }, (_, i) =>
    makeEntry({
      commitHash: fakeHash(from + i),
      title: `Work ${from + i}`,
      claudeSessionId: `start-${Math.floor((from + i) / 10)}`,
      capturedAt: new Date(t0 + (from + i) * 60_000).toISOString(),
      conversationSnippet: convo(["user", `Request ${from + i}`]),
      intent: "done",
    }),
  );
}

beforeAll(async () => {
  repo = tempRepo();
  writeTimeline(repo.root, repo.env, { entries: entries(60) });
  [ui, browser] = await Promise.all([startUi(repo.root, repo.env), launchBrowser()]);
});

afterAll(async () => {
  await browser?.close();
  await ui?.stop();
  repo?.cleanup();
});

/** A route held until `release()`: the request waits, unanswered, meanwhile. */
function held(): { handler: (route: Route) => void; arrived: Promise<void>; release(): void } {
  let route: Route | undefined;
  let arrived!: () => void;
  const seen = new Promise<void>((resolve) => (arrived = resolve));
  let released = false;
  return {
    handler(r) {
      if (released) return void r.continue();
      route = r;
      arrived();
    },
    arrived: seen,
    release() {
      released = true;
      void route?.continue();
    },
  };
}

describe("aiflare ui's page as it starts", () => {
  test("the boot script signs in, the first page in its answer, before the page's script has arrived", async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const app = held();
      await ctx.route("**/assets/app.js*", app.handler);
      const p = await ctx.newPage();
      const asked: string[] = [];
      p.on("request", (r) => void (r.url().includes("/api/") && asked.push(new URL(r.url()).pathname + new URL(r.url()).search)));
      const signedIn = p.waitForResponse((r) => r.url().includes("/api/v1/auth/login"));
      await p.goto(ui.url, { waitUntil: "commit" });
      await app.arrived;
      // the page's script is still held back: the sign-in is the boot script's
      const login = await signedIn;
      expect(login.status()).toBe(200);
      expect(((await login.json()) as { first: { entries: unknown[] } }).first.entries).toHaveLength(50);
      expect(await p.evaluate(() => location.hash)).toBe("");
      expect(await p.evaluate(() => sessionStorage.getItem("aiflare.session"))).toBeNull();
      app.release();
      await p.waitForSelector("body[data-ready='1'] .session-card");
      expect(await p.$$eval(".entry-row", (r) => r.length)).toBe(50);
      // the page's first form has its date filters made date fields once the first page is painted
      await p.waitForSelector("input[name=since][type=date]", { state: "attached" });
      expect(await p.$$eval("input[data-date]", (f) => f.map((i) => `${i.getAttribute("type")} ${i.getAttribute("pattern")}`))).toEqual(["date null", "date null"]);
      // and nothing on the page moved when they did: a text field there is as tall as a date field
      const heights = await p.evaluate(() => {
        const field = document.querySelector("input[name=since]");
        const date = field.getBoundingClientRect().height;
        field.type = "text";
        return [date, field.getBoundingClientRect().height];
      });
      expect(heights[1]).toBe(heights[0]);
      // the token went out once, in the header of the one sign-in; the first page asked nothing more
      expect(asked).toEqual([`/api/v1/auth/login?first=${encodeURIComponent(FIRST)}`]);
      expect(login.request().headers().authorization).toBe(`Bearer ${ui.token}`);
      expect(await p.evaluate(() => sessionStorage.getItem("aiflare.session"))).toMatch(/^afu_/);
    } finally {
      await ctx.close();
    }
  });

  test("the page's script signs in itself when the boot script comes late, which then signs in no second time", async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const boot = held();
      await ctx.route("**/assets/boot.js*", boot.handler);
      const p = await ctx.newPage();
      const asked: string[] = [];
      p.on("request", (r) => void (r.url().includes("/api/") && asked.push(new URL(r.url()).pathname)));
      await p.goto(ui.url, { waitUntil: "commit" });
      await boot.arrived;
      await p.waitForSelector("body[data-ready='1'] .session-card");
      expect(await p.$$eval(".entry-row", (r) => r.length)).toBe(50);
      expect(asked).toEqual(["/api/v1/auth/login"]);
      const session = await p.evaluate(() => sessionStorage.getItem("aiflare.session"));
      boot.release();
      // the boot script ran, found no token in the address, and left the session as it was
      await p.waitForFunction(() => "aiflareSignIn" in window);
      expect(await p.evaluate(() => window.aiflareSignIn)).toBeUndefined();
      expect(asked).toEqual(["/api/v1/auth/login"]);
      expect(await p.evaluate(() => sessionStorage.getItem("aiflare.session"))).toBe(session);
      // the session works for the next screen
      await p.evaluate(() => (location.hash = "#/overview"));
      await p.waitForSelector(".day-chart");
      expect(asked.filter((a) => a === "/api/v1/stats")).toHaveLength(1);
    } finally {
      await ctx.close();
    }
  });

  test("the first page read ahead answers a sign-in only while it is fresh: one a while later shows what was recorded since", async () => {
    const fresh = tempRepo();
    writeTimeline(fresh.root, fresh.env, { entries: entries(60) });
    const other = await startUi(fresh.root, fresh.env);
    try {
      // the page's script going out starts the read ahead
      expect((await fetch(`${other.origin}/assets/app.js`)).status).toBe(200);
      await Bun.sleep(500);
      writeTimeline(fresh.root, fresh.env, { entries: entries(1, 60) });
      await Bun.sleep(1500);
      const login = await fetch(`${other.origin}/api/v1/auth/login?first=${encodeURIComponent(FIRST)}`, { method: "POST", headers: { Authorization: `Bearer ${other.token}` } });
      const answer = (await login.json()) as { first: { entries: { commitHash: string }[] } };
      expect(answer.first.entries[0]!.commitHash).toBe(fakeHash(60));
    } finally {
      await other.stop();
      fresh.cleanup();
    }
  });

  test("sign-ins while the server still reads the first page ahead (the index rebuilt from the branches) each get that whole page", async () => {
    const fresh = tempRepo();
    writeTimeline(fresh.root, fresh.env, { entries: entries(2000, 1000) });
    const other = await startUi(fresh.root, fresh.env);
    try {
      // two tabs signing in at once: each gets the whole first page
      const signIn = () => fetch(`${other.origin}/api/v1/auth/login?first=${encodeURIComponent(FIRST)}`, { method: "POST", headers: { Authorization: `Bearer ${other.token}` } });
      const logins = await Promise.all([signIn(), signIn()]);
      const newest = Array.from({ length: 50 }, (_, i) => fakeHash(2999 - i));
      for (const login of logins) {
        expect(login.headers.get("cache-control")).toBe("no-store");
        const answer = (await login.json()) as { session: string; first: { entries: { commitHash: string }[] } };
        expect(answer.first.entries.map((e) => e.commitHash)).toEqual(newest);
        const read = await fetch(`${other.origin}${FIRST}`, { headers: { Authorization: `Bearer ${answer.session}` } });
        expect(answer.first).toEqual((await read.json()) as typeof answer.first);
      }
    } finally {
      await other.stop();
      fresh.cleanup();
    }
  });
});
