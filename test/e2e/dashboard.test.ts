/**
 * `aiflare ui` in a real headless Chromium: a repository with entries captured for real, the dashboard served by
 * the compiled binary, and what a person sees on each screen.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { BIN, ROOT, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { writeConfig } from "../sync-fixtures.ts";
import { convo, fakeHash, makeEntry, writeTimeline } from "../timeline-fixture.ts";
import { answerLocalApi } from "../../src/core/dashboard/api.ts";
import { dashboardResponse } from "../../src/web/assets.ts";
import {
  ARTIFACTS,
  DOCS_AUTHOR,
  LONG_PROMPT,
  XSS_PROMPT,
  launchBrowser,
  replayable,
  seedRepo,
  startServe,
  startUi,
  visitOtherPort,
  type RunningUi,
  type Seeded,
} from "../dashboard-support.ts";

setDefaultTimeout(60_000);

// Functions passed to page.evaluate run in the page; the test's own type world has no DOM.
declare const document: any, window: any, location: any, getComputedStyle: any, HashChangeEvent: any, sessionStorage: any;

/** The related prompts of the commit made after the agent's four-question AskUserQuestion call. */
const QA = ["Agent's question", "Answer"];
const ANSWERED_LABELS = ["Assistant", ...QA, ...QA, ...QA, ...QA, "User"];

let repo: TempRepo;
let seeded: Seeded;
let ui: RunningUi;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const dialogs: string[] = [];

/** Saves a screenshot as a test artifact; UPDATE_SCREENSHOTS=1 also refreshes the README's copy. */
async function shot(p: Page, name: string): Promise<void> {
  const file = join(ARTIFACTS, `${name}.png`);
  await p.screenshot({ path: file, fullPage: true });
  if (process.env.UPDATE_SCREENSHOTS === "1") {
    mkdirSync(join(ROOT, "docs", "screenshots"), { recursive: true });
    copyFileSync(file, join(ROOT, "docs", "screenshots", `${name}.png`));
  }
}

/** Goes to a route of the page and waits for the screen to be drawn. */
async function go(route: string, ready: string): Promise<void> {
  await page.evaluate((r) => {
    document.body.dataset.route = "";
    if (location.hash === r) window.dispatchEvent(new HashChangeEvent("hashchange"));
    else location.hash = r;
  }, route);
  await page.waitForFunction((r) => document.body.dataset.route === r, route);
  await page.waitForSelector(ready);
}

const rowTexts = (p: Page, scope = "main") =>
  p.$$eval(`${scope} .entry-row`, (rows) => rows.map((r) => (r.querySelector(".title")?.textContent ?? "").trim()));

beforeAll(async () => {
  repo = tempRepo();
  seeded = await seedRepo(repo);
  ui = await startUi(repo.root, repo.env);
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: "light" });
  page = await context.newPage();
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.goto(ui.url);
  await page.waitForSelector("body[data-ready='1'] .session-card");
});

afterAll(async () => {
  await browser?.close();
  await ui?.stop();
  repo?.cleanup();
});

describe("aiflare ui in a browser", () => {
  test("the token is required: the API answers 401 without it, 403 to a foreign Host", async () => {
    expect(ui.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]{20,}$/);
    const bearer = (value: string, extra: Record<string, string> = {}) => ({ headers: { Authorization: `Bearer ${value}`, ...extra } });
    expect((await fetch(`${ui.origin}/api/v1/timeline`)).status).toBe(401);
    expect((await fetch(`${ui.origin}/api/v1/timeline`, bearer("wrong"))).status).toBe(401);
    expect((await fetch(`${ui.origin}/api/v1/auth/login`, { method: "POST", ...bearer("wrong") })).status).toBe(401);
    expect((await fetch(`${ui.origin}/api/v1/auth/login`, bearer(ui.token))).status).toBe(405);
    expect((await fetch(`${ui.origin}/api/v1/timeline`, bearer(ui.token))).status).toBe(200);
    const rebound = await fetch(`${ui.origin}/api/v1/timeline`, bearer(ui.token, { Host: "evil.example:80" }));
    expect(rebound.status).toBe(403);
    expect((await fetch(`${ui.origin}/api/v1/auth/login`, { method: "POST", ...bearer(ui.token, { Host: "evil.example:80" }) })).status).toBe(403);
    // the page traded the token for a session of its own tab, took it out of the address bar, and set no cookie
    const session = await page.evaluate(() => sessionStorage.getItem("aiflare.session"));
    expect(session).toMatch(/^[\w-]{20,}$/);
    expect(session).not.toBe(ui.token);
    expect((await fetch(`${ui.origin}/api/v1/timeline`, bearer(session!))).status).toBe(200);
    expect(page.url()).toBe(`${ui.origin}/`);
    expect(await context.cookies()).toEqual([]);
    // a browser without it sees no data, only how to get in
    const stranger = await browser.newContext();
    const p = await stranger.newPage();
    await p.goto(`${ui.origin}/`);
    await p.waitForSelector("text=This dashboard needs its link");
    expect(await p.$$(".entry-row")).toHaveLength(0);
    await stranger.close();
  });

  test("no credential reaches another port of 127.0.0.1 or localhost that the page is sent to", async () => {
    const ctx = await browser.newContext();
    try {
      const p = await ctx.newPage();
      await p.goto(ui.url);
      await p.waitForSelector("body[data-ready='1'] .session-card");
      const secrets = [ui.token, (await p.evaluate(() => sessionStorage.getItem("aiflare.session")))!, ...(await ctx.cookies()).map((c) => c.value)];
      const got = await visitOtherPort(p);
      const seen = JSON.stringify(got);
      for (const s of secrets) expect(seen).not.toContain(s);
      for (const r of got) expect((await fetch(`${ui.origin}/api/v1/timeline`, { headers: replayable(r) })).status).toBe(401);
      // back on the dashboard, the tab is still signed in
      await p.waitForSelector("body[data-ready='1'] .session-card");
    } finally {
      await ctx.close();
    }
  });

  test("the browser is opened at a file that only the user can read, never with a credential on its command line", async () => {
    const bin = join(repo.dir, "opener-bin");
    mkdirSync(bin, { recursive: true });
    const argvFile = join(repo.dir, "opener-argv");
    // a stand-in for the desktop's opener that records how it was called
    writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\nprintf '%s\\n' "$0" "$@" > "${argvFile}.tmp" && mv "${argvFile}.tmp" "${argvFile}"\n`, { mode: 0o755 });
    const opened = await startUi(repo.root, { ...repo.env, PATH: `${bin}:${repo.env.PATH}` }, true);
    const ctx = await browser.newContext();
    try {
      for (let i = 0; !existsSync(argvFile); i++) {
        if (i > 400) throw new Error("aiflare ui never called the opener");
        await Bun.sleep(50);
      }
      const argv = readFileSync(argvFile, "utf8").trimEnd().split("\n");
      expect(argv).toHaveLength(2);
      const target = argv[1]!;
      expect(target).toMatch(/^file:\/\/\/.*\/\.context-capture\/ui-open-[0-9a-f]+\.html$/);
      const launcher = fileURLToPath(target);
      expect(statSync(launcher).mode & 0o777).toBe(0o600);
      expect(statSync(join(repo.root, ".context-capture")).mode & 0o777).toBe(0o700);
      const code = /#token=([\w-]+)/.exec(readFileSync(launcher, "utf8"))![1]!;
      expect(code).not.toBe(opened.token);
      expect(argv.join(" ")).not.toContain(opened.token);
      expect(argv.join(" ")).not.toContain(code);
      // the user's browser follows the file to the dashboard, which uses the code once and deletes the file
      const p = await ctx.newPage();
      await p.goto(target);
      await p.waitForSelector("body[data-ready='1'] .session-card");
      expect(p.url()).toBe(`${opened.origin}/`);
      expect(existsSync(launcher)).toBe(false);
      const again = await fetch(`${opened.origin}/api/v1/auth/login`, { method: "POST", headers: { Authorization: `Bearer ${code}` } });
      expect(again.status).toBe(401);
      const secrets = [opened.token, code, (await p.evaluate(() => sessionStorage.getItem("aiflare.session")))!];
      const got = await visitOtherPort(p);
      for (const s of secrets) expect(JSON.stringify(got)).not.toContain(s);
      for (const r of got) expect((await fetch(`${opened.origin}/api/v1/timeline`, { headers: replayable(r) })).status).toBe(401);
    } finally {
      await ctx.close();
      await opened.stop();
    }
  });

  test("timeline: sessions as cards headed by their request, the request group nested under its root", async () => {
    await go("#/", ".session-card");
    const cards = await page.$$eval(".session-card", (cs) =>
      cs.map((c) => ({
        request: c.querySelector(".request")?.textContent ?? "",
        meta: c.querySelector(".meta")?.textContent ?? "",
        rows: [...c.querySelectorAll(".entry-row")].map((r) => ({
          text: r.textContent ?? "",
          member: r.classList.contains("member"),
          href: r.getAttribute("href"),
        })),
      })),
    );
    expect(cards.map((c) => c.request)).toEqual(["Document the reports API", XSS_PROMPT, "Add a CSV export to the reports page"]);
    expect(await page.$$eval("h2.day", (d) => d.length)).toBe(1);
    const alpha = cards[2]!;
    expect(alpha.meta).toContain("Claude Code");
    expect(alpha.meta).toContain("main");
    expect(alpha.meta).toContain("3 commits");
    expect(alpha.rows.map((r) => [r.text.replace(/\d\d:\d\d.*$/, "").trim(), r.member])).toEqual([
      [`${seeded.csvRoot.slice(0, 7)}FEATUREAdd CSV export to reports`, false],
      [`└${seeded.csvPart2.slice(0, 7)}TESTTest the CSV export`, true],
      [`└${seeded.csvAnswered.slice(0, 7)}FEATURELocalise the CSV headerafter the agent's question`, true],
    ]);
    expect(alpha.rows[0]!.href).toBe(`#/entry/${seeded.csvRoot}`);
    expect(cards[0]!.meta).toContain("feature/docs");
    // the person who ran each session
    expect(alpha.meta).toContain("Test Committer");
    expect(cards[0]!.meta).toContain(DOCS_AUTHOR.name);
    expect(cards[0]!.meta).not.toContain("Test Committer");
    // the commit the agent never summarised is marked, the others are not
    const beta = cards[1]!;
    expect(beta.rows.find((r) => r.text.includes("feat: log failed logins"))!.text).toContain("not yet summarised");
    expect(beta.rows.filter((r) => r.text.includes("not yet summarised"))).toHaveLength(1);
    expect(alpha.rows.some((r) => r.text.includes("not yet summarised"))).toBe(false);
    await shot(page, "timeline");
  });

  test("filters narrow the timeline and are held in the URL", async () => {
    await go("#/", ".session-card");
    await page.selectOption("select[name=tag]", "BUGFIX");
    await page.waitForFunction(() => location.hash.includes("tag=BUGFIX"));
    await page.waitForFunction(() => document.querySelectorAll(".entry-row").length === 1);
    expect((await rowTexts(page))[0]).toContain("Fix <script>");
    await go("#/?file=src/reports", ".session-card");
    expect(await rowTexts(page)).toEqual(["Add CSV export to reports", "Localise the CSV header"]);
    await go("#/?branch=feature/docs", ".session-card");
    expect(await rowTexts(page)).toEqual(["Document the reports API"]);
    await go("#/?session=sess-beta", ".session-card");
    expect((await rowTexts(page)).sort()).toEqual(["feat: log failed logins", expect.stringContaining("Fix <script>")].sort());
    await go("#/?author=DANA", ".session-card");
    expect(await rowTexts(page)).toEqual(["Document the reports API"]);
    expect(await page.inputValue("input[name=author]")).toBe("DANA");
    await go("#/?author=committer%40example.com", ".session-card");
    expect(await rowTexts(page)).not.toContain("Document the reports API");
    expect(await rowTexts(page)).toHaveLength(5);
    await go("#/?since=2000-01-01&until=2000-12-31", ".status");
    await page.waitForSelector("text=No entries match these filters.");
    // past the page's first form, the date filters are date fields from the start, holding the URL's dates
    expect(await page.$$eval("input[data-date]", (f) => f.map((i) => `${i.getAttribute("type")} ${(i as unknown as { value: string }).value}`))).toEqual([
      "date 2000-01-01",
      "date 2000-12-31",
    ]);
    // a filter the server cannot read is explained above the form, which stays to fix it
    await go("#/?since=last%20tuesday", ".status.error");
    expect(await page.textContent(".status.error")).toContain('Cannot read since "last tuesday"');
    expect(await page.inputValue("input[name=since]")).toBe("");
    expect(await page.isVisible("#search")).toBe(true);
    // "/" jumps to the search box; the query goes into the URL
    await go("#/", ".session-card");
    await page.keyboard.press("/");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("search");
    await page.keyboard.type("localise");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => location.hash.includes("q=localise"));
    await page.waitForFunction(() => document.querySelectorAll(".entry-row").length === 1);
    expect(await rowTexts(page)).toEqual(["Localise the CSV header"]);
    expect(await page.inputValue("#search")).toBe("localise");
    await shot(page, "timeline-filtered");
  });

  test("keyboard: j/k move through entries, Enter opens one", async () => {
    await go("#/", ".session-card");
    await page.locator("main h2.day").click();
    // a card lists its commits oldest first, as history list does: the docs entry, then beta's two requests
    await page.keyboard.press("j");
    await page.keyboard.press("j");
    await page.keyboard.press("j");
    await page.keyboard.press("j");
    await page.keyboard.press("k");
    const hash = await page.$eval(".entry-row.selected", (r) => r.getAttribute("data-hash"));
    expect(hash).toBe(seeded.pending);
    await page.keyboard.press("Enter");
    await page.waitForFunction((h) => location.hash === `#/entry/${h}`, seeded.pending);
    await page.waitForSelector("article.entry h1");
    expect(await page.textContent("article.entry h1")).toBe("feat: log failed logins");
    expect(await page.textContent("article.entry .badges")).toContain("not yet summarised");
  });

  test("entry: facts, group, Markdown summary and the related prompts by role", async () => {
    await go(`#/entry/${seeded.csvAnswered}`, "article.entry .prompts");
    expect(await page.textContent("article.entry h1")).toBe("Localise the CSV header");
    expect(await page.textContent(".facts")).toContain(seeded.csvAnswered);
    expect(await page.textContent(".facts .author")).toBe("Test Committer <committer@example.com>");
    // the local timeline has no keys: nobody else is named as the sender
    expect(await page.$(".facts .key-owner")).toBeNull();
    const group = await page.$$eval(".group li", (li) => li.map((l) => l.textContent ?? ""));
    expect(group).toHaveLength(3);
    expect(group[0]).toContain("Add CSV export to reports");
    expect(group[2]).toContain("(this commit)");
    const turns = await page.$$eval(".prompts .turn", (ts) => ts.map((t) => [t.querySelector(".turn-role")?.textContent, t.querySelector(".turn-body")?.textContent]));
    // exactly the questions and answers the AskUserQuestion call recorded, each pair on its own; the reply before them
    // (itself ending in a question) and the prompt typed after them are labelled by role
    expect(turns.map((t) => t[0])).toEqual(ANSWERED_LABELS);
    expect(turns[0]![1]).toBe("Export added. Should the header row be localised?");
    expect(turns[1]![1]).toBe("How should the ~19 issues be packaged into PRs?");
    expect(turns[2]![1]).toBe("~9 grouped PRs (Recommended)");
    expect(turns[9]![1]).toBe("Yes, localise it");
    await shot(page, "entry");

    await go(`#/entry/${seeded.csvRoot}`, "article.entry .prompts .turn");
    expect(await page.$$eval(".prompts .turn-role", (r) => r.map((x) => x.textContent))).toEqual(["User"]);
    expect(await page.textContent(".prompts .turn-body")).toBe("Add a CSV export to the reports page");
    // Markdown becomes structure, its link a safe external anchor
    expect(await page.textContent(".md code")).toBe("exportCsv()");
    expect(await page.textContent(".md strong")).toBe("streams");
    expect(await page.$$eval(".md li", (li) => li.length)).toBe(3);
    const link = await page.$eval(".md a", (a) => [a.getAttribute("href"), a.getAttribute("rel"), a.textContent]);
    expect(link).toEqual(["https://www.rfc-editor.org/rfc/rfc4180", "noopener noreferrer nofollow", "RFC 4180"]);
    expect(await page.textContent(".files")).toContain("src/reports/export.ts");

    await go(`#/entry/${seeded.csvPart2}`, "article.entry .prompts");
    expect(await page.textContent(".prompts")).toContain("answers the same request as");

    // a long turn is folded: a preview, the whole text behind "Show all"
    await go(`#/entry/${seeded.docs}`, "article.entry .prompts .turn");
    const long = page.locator(".prompts .turn.folded");
    expect(await long.count()).toBe(1);
    expect(await long.locator("details").getAttribute("open")).toBeNull();
    expect(await long.locator("details .turn-body").isVisible()).toBe(false);
    expect(await long.locator(".turn-preview").textContent()).toContain("1. section 1 of the reports API");
    await long.locator("summary").click();
    expect(await long.locator("details .turn-body").isVisible()).toBe(true);
    expect(await long.locator(".turn-preview").isVisible()).toBe(false);
    expect(await long.locator("details .turn-body").textContent()).toBe(LONG_PROMPT);
  });

  test("XSS payloads in prompts, replies, titles and summaries render as inert text", async () => {
    for (const [route, ready] of [
      ["#/", ".session-card"],
      [`#/entry/${seeded.xss}`, "article.entry .prompts .turn"],
      ["#/session/sess-beta-0002", ".transcript .turn"],
      [`#/?q=login`, ".session-card"],
    ] as const) {
      await go(route, ready);
      const found = await page.evaluate(() => ({
        pwned: (window as unknown as { __pwned?: unknown }).__pwned ?? null,
        elements: document.querySelectorAll("main img, main script, main iframe, main b, [onerror], [onmouseover]").length,
        jsLinks: [...document.querySelectorAll("a")].filter((a) => /^\s*javascript:/i.test(a.getAttribute("href") ?? "")).length,
        text: document.querySelector("main")?.textContent ?? "",
      }));
      expect(found.pwned).toBeNull();
      expect(found.elements).toBe(0);
      expect(found.jsLinks).toBe(0);
      expect(found.text).toContain("<script>window.__pwned=");
    }
    await go(`#/entry/${seeded.xss}`, "article.entry .prompts .turn");
    expect(await page.textContent("article.entry h1")).toBe(`<img src=x onerror="window.__pwned='title'">Fix <script>window.__pwned="t2"</script> login`);
    expect(await page.textContent(".md")).toContain('[evil](javascript:window.__pwned="md")');
    await shot(page, "entry-untrusted-text");
    await go("#/session/sess-beta-0002", ".transcript .turn");
    expect(await page.textContent(".transcript")).toContain(`<iframe src="javascript:window.__pwned='reply'"></iframe>`);
    expect(dialogs).toEqual([]);
    const res = await fetch(`${ui.origin}/`);
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(res.headers.get("content-security-policy")).not.toContain("unsafe-inline");
  });

  test("session: the whole transcript with a marker at each commit, linking to its entry", async () => {
    await go("#/session/sess-alpha-0001", ".transcript .cut");
    const seq = await page.$$eval(".transcript > *", (els) =>
      els.map((e) => (e.classList.contains("cut") ? `cut:${e.getAttribute("data-hash")}` : `turn:${e.querySelector(".turn-role")?.textContent}`)),
    );
    expect(seq).toEqual([
      "turn:User",
      `cut:${seeded.csvRoot}`,
      `cut:${seeded.csvPart2}`,
      "turn:Assistant",
      // the four questions of the AskUserQuestion call, each followed by its answer, then the user's prompt
      ...[...QA, ...QA, ...QA, ...QA].map((r) => `turn:${r}`),
      "turn:User",
      `cut:${seeded.csvAnswered}`,
    ]);
    expect(await page.textContent(".transcript .cut:last-child")).toContain("Localise the CSV header");
    await shot(page, "session");
    await page.click(".transcript .cut:last-child");
    await page.waitForFunction((h) => location.hash === `#/entry/${h}`, seeded.csvAnswered);
    await page.waitForSelector("article.entry h1");
  });

  test("file: the entries that changed a path, newest first", async () => {
    await go("#/file?path=src/auth", "main .card");
    expect(await rowTexts(page)).toEqual(["feat: log failed logins", expect.stringContaining("Fix <script>")]);
    await shot(page, "file");
    await go("#/file?path=docs/api.md", "main .card");
    expect(await rowTexts(page)).toEqual(["Document the reports API"]);
  });

  test("overview: entries per day and per tag as charts, the most active files", async () => {
    await go("#/overview", ".chart");
    expect(await page.textContent(".figures")).toContain("6 entries");
    expect(await page.textContent(".figures")).toContain("3 sessions");
    const days = await page.$$eval("svg[aria-label='Entries per day'] rect", (r) => r.map((x) => Number(x.getAttribute("height"))));
    expect(days).toHaveLength(28);
    expect(days.filter((h) => h > 0)).toHaveLength(1);
    expect(await page.textContent("[aria-label='Entries per tag']")).toContain("FEATURE");
    expect(await page.$$eval(".top-files li", (li) => li.length)).toBe(6);
    await shot(page, "overview");
  });

  test("phone width and dark colour scheme: no sideways scrolling, dark background", async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: "dark", isMobile: true });
    const p = await phone.newPage();
    await p.goto(ui.url);
    await p.waitForSelector(".session-card");
    const look = await p.evaluate(() => ({
      overflow: document.documentElement.scrollWidth - window.innerWidth,
      bg: getComputedStyle(document.body).backgroundColor,
    }));
    expect(look.overflow).toBeLessThanOrEqual(0);
    expect(look.bg).toBe("rgb(21, 23, 26)");
    await shot(p, "timeline-phone-dark");
    await phone.close();
  });
});

describe("aiflare ui with a longer history", () => {
  test("the timeline loads 50 entries, then the next pages as the end comes into view, under a header per day", async () => {
    const big = tempRepo();
    const day0 = Date.UTC(2026, 10, 20, 9);
    const entries = Array.from({ length: 120 }, (_, i) =>
      makeEntry({
        commitHash: fakeHash(1000 + i),
        title: `Step ${i}`,
        claudeSessionId: `long-${Math.floor(i / 20)}`,
        capturedAt: new Date(day0 + Math.floor(i / 40) * 86_400_000 + (i % 40) * 60_000).toISOString(),
        intent: "done",
      }),
    );
    writeTimeline(big.root, big.env, { entries });
    const other = await startUi(big.root, big.env);
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const p = await ctx.newPage();
      await p.goto(other.url);
      await p.waitForSelector("body[data-ready='1'] .session-card");
      expect(await p.$$eval(".entry-row", (r) => r.length)).toBe(50);
      // the newest session first, its commits oldest first
      expect((await rowTexts(p)).slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, i) => `Step ${100 + i}`));
      await p.locator("button.more").scrollIntoViewIfNeeded();
      await p.waitForFunction(() => document.querySelectorAll(".entry-row").length === 100);
      await p.locator("button.more").scrollIntoViewIfNeeded();
      await p.waitForFunction(() => document.querySelectorAll(".entry-row").length === 120);
      expect(await p.isVisible("button.more")).toBe(false);
      const titles = await rowTexts(p);
      expect(new Set(titles).size).toBe(120);
      expect(await p.$$eval("h2.day", (d) => d.length)).toBe(3);
      expect(await p.$$eval(".session-card", (c) => c.length)).toBe(6);
      expect(await p.textContent(".status")).toBe("120 entries");
    } finally {
      await ctx.close();
      await other.stop();
      big.cleanup();
    }
  });

  test("the first page rides in the sign-in's answer, the same as the read API's first page, and the page asks nothing more before its first card", async () => {
    const big = tempRepo();
    const t0 = Date.UTC(2026, 10, 20, 9);
    // groups of three, two sessions interleaved, several commits in the same second
    const entries = Array.from({ length: 80 }, (_, i) =>
      makeEntry({
        commitHash: fakeHash(3000 + i),
        title: `Work ${i}`,
        claudeSessionId: `mix-${i % 2}`,
        groupRootId: i % 3 === 0 ? null : fakeHash(3000 + i - (i % 3)),
        capturedAt: new Date(t0 + Math.floor(i / 4) * 1000).toISOString(),
        conversationSnippet: i % 3 === 0 ? convo(["user", `Request ${i}`]) : "",
        intent: "done",
      }),
    );
    writeTimeline(big.root, big.env, { entries });
    const other = await startUi(big.root, big.env);
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const first = "/api/v1/timeline?limit=50";
      const login = await fetch(`${other.origin}/api/v1/auth/login?first=${encodeURIComponent(first)}`, { method: "POST", headers: { Authorization: `Bearer ${other.token}` } });
      const answer = (await login.json()) as { session: string; first: { entries: { commitHash: string }[] } };
      const read = await fetch(`${other.origin}${first}`, { headers: { Authorization: `Bearer ${answer.session}` } });
      expect(answer.first).toEqual((await read.json()) as typeof answer.first);
      expect(answer.first.entries).toHaveLength(50);
      // only reads are answered beside a sign-in
      const odd = await fetch(`${other.origin}/api/v1/auth/login?first=${encodeURIComponent("/api/v1/auth/login")}`, { method: "POST", headers: { Authorization: `Bearer ${other.token}` } });
      expect(Object.keys((await odd.json()) as object)).toEqual(["session"]);

      const p = await ctx.newPage();
      const asked: string[] = [];
      p.on("request", (r) => void (r.url().includes("/api/") && asked.push(new URL(r.url()).pathname)));
      await p.goto(other.url);
      await p.waitForSelector("body[data-ready='1'] .session-card");
      expect(asked).toEqual(["/api/v1/auth/login"]);
      expect(await p.$$eval(".entry-row", (r) => r.map((x) => x.getAttribute("data-hash")))).toHaveLength(50);
      // what the page shows from the sign-in's answer is what it shows from the read itself
      const shown = await p.$$eval(".session-card", (cards) => cards.map((c) => c.textContent));
      await p.evaluate(() => {
        document.body.dataset.route = "";
        window.dispatchEvent(new HashChangeEvent("hashchange"));
      });
      await p.waitForFunction(() => document.body.dataset.route === "#/" && document.querySelectorAll(".entry-row").length === 50);
      expect(asked).toContain("/api/v1/timeline");
      expect(await p.$$eval(".session-card", (cards) => cards.map((c) => c.textContent))).toEqual(shown);
    } finally {
      await ctx.close();
      await other.stop();
      big.cleanup();
    }
  });

  test("aiflare ui opens the index and brings it up to the branches as it starts, before the page asks", async () => {
    const fresh = tempRepo();
    writeTimeline(fresh.root, fresh.env, { entries: [makeEntry({ commitHash: fakeHash(4000), title: "Before any visit" })] });
    const index = join(fresh.root, ".git", "aiflare", "index.sqlite");
    expect(existsSync(index)).toBe(false);
    const other = await startUi(fresh.root, fresh.env);
    try {
      // no request is made: the index appears with the entry in it
      const deadline = Date.now() + 30_000;
      const has = () => {
        if (!existsSync(index)) return false;
        let db: Database | undefined;
        try {
          // the file may be mid-way through being put in place: not there yet
          db = new Database(index, { readonly: true });
          return (db.query("SELECT count(*) AS n FROM entries").get() as { n: number }).n === 1;
        } catch {
          return false;
        } finally {
          db?.close();
        }
      };
      while (!has() && Date.now() < deadline) await Bun.sleep(50);
      expect(has()).toBe(true);
    } finally {
      await other.stop();
      fresh.cleanup();
    }
  });

  test("outside a repository aiflare ui says so and exits 1", async () => {
    const r = await runBin(["ui", "--no-open", "--port", "0"], { cwd: repo.home, env: repo.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("is not inside a git repository");
    const bad = await runBin(["ui", "--no-open", "--port", "99999"], { cwd: repo.root, env: repo.env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--port must be a port number");
  });
});

/**
 * The page in team mode, against a stand-in for `aiflare serve` that follows the read API contract (key sign-in
 * setting an HttpOnly cookie, `/auth/me`, `?project=`) over two local repositories.
 */
function standInServer(projects: Record<string, { name: string; root: string }>, keys: Record<string, string[]>) {
  const sessions = new Map<string, string[]>();
  const list = (ids: string[]) => ids.map((id) => ({ id, name: projects[id]!.name }));
  const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const sid = /aiflare_session=([\w-]+)/.exec(req.headers.get("cookie") ?? "")?.[1];
      const mine = (sid && sessions.get(sid)) || null;
      if (url.pathname === "/api/v1/auth/login" && req.method === "POST") {
        const { key } = (await req.json()) as { key: string };
        if (!keys[key]) return json({ error: "unknown key" }, 401);
        const id = sid && sessions.has(sid) ? sid : crypto.randomUUID();
        sessions.set(id, [...new Set([...(sessions.get(id) ?? []), ...keys[key]!])]);
        return json({ projects: list(sessions.get(id)!) }, 200, { "Set-Cookie": `aiflare_session=${id}; HttpOnly; SameSite=Strict; Path=/` });
      }
      if (url.pathname === "/api/v1/auth/logout" && req.method === "POST") {
        if (sid) sessions.delete(sid);
        return json({});
      }
      if (url.pathname.startsWith("/api/")) {
        if (!mine) return json({ error: "sign in" }, 401);
        if (url.pathname === "/api/v1/auth/me") return json({ projects: list(mine) });
        const project = url.searchParams.get("project") ?? (mine.length === 1 ? mine[0] : null);
        if (!project || !mine.includes(project)) return json({ error: "which project?" }, 400);
        const root = projects[project]!.root;
        return (await answerLocalApi(url, { root, commonDir: join(root, ".git") })) ?? json({ error: "no such path" }, 404);
      }
      return dashboardResponse(url.pathname, "team") ?? new Response("not found", { status: 404 });
    },
  });
  return { origin: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

describe("the page in team mode", () => {
  test("asks for a key, shows the project's work after sign-in, switches projects, signs out", async () => {
    const second = tempRepo();
    writeTimeline(second.root, second.env, {
      entries: [makeEntry({ commitHash: fakeHash(77), title: "Second project's only entry", claudeSessionId: "other-1", intent: "x" })],
    });
    const team = standInServer(
      { p1: { name: "Reports", root: repo.root }, p2: { name: "Billing", root: second.root } },
      { "key-reports": ["p1"], "key-billing": ["p2"] },
    );
    const ctx = await browser.newContext();
    try {
      const p = await ctx.newPage();
      await p.goto(`${team.origin}/`);
      await p.waitForSelector("form.signin");
      expect(await p.$$(".entry-row")).toHaveLength(0);
      await shot(p, "sign-in");
      await p.fill("#key", "not-a-key");
      await p.click("form.signin button[type=submit]");
      await p.waitForSelector("text=That key was not accepted.");
      await p.fill("#key", "key-reports");
      await p.click("form.signin button[type=submit]");
      await p.waitForSelector(".session-card");
      expect(await p.$$eval(".session-card .request", (r) => r.map((x) => x.textContent))).toContain("Add a CSV export to the reports page");
      expect(await p.textContent("#project")).toContain("Reports");
      // signed in, opening the page reads the first page while the sign-in is checked, once
      const asked: string[] = [];
      p.on("request", (r) => void (r.url().includes("/api/") && asked.push(new URL(r.url()).pathname)));
      await p.reload();
      await p.waitForSelector("body[data-ready='1'] .session-card");
      expect(asked).toEqual(["/api/v1/timeline", "/api/v1/auth/me"]);
      p.removeAllListeners("request");
      // signing in with a second key adds its project: a picker appears
      await p.evaluate(async () => {
        await fetch("/api/v1/auth/login", { method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ key: "key-billing" }) });
      });
      await p.reload();
      await p.waitForSelector("#project select");
      expect(await p.$$eval("#project option", (o) => o.map((x) => x.textContent))).toEqual(["Reports", "Billing"]);
      await p.waitForSelector(".session-card");
      await p.selectOption("#project select", "p2");
      await p.waitForFunction(() => document.querySelector(".entry-row .title")?.textContent === "Second project's only entry");
      expect(await p.$$eval(".entry-row", (r) => r.length)).toBe(1);
      await p.click("#project button");
      await p.waitForSelector("form.signin");
      expect(await p.$$(".entry-row")).toHaveLength(0);
    } finally {
      await ctx.close();
      team.stop();
      second.cleanup();
    }
  });
});

/** `aiflare serve` (the compiled binary) with the seeded repository's work pushed to it by `aiflare sync`. */
describe("aiflare serve in a browser", () => {
  test("sign-in is required; after it the team's pushed work shows, down to an entry's related prompts", async () => {
    // the key that sends everyone's work belongs to the docs writer
    const serve = await startServe(join(repo.dir, "team.sqlite"), repo.home, repo.env, DOCS_AUTHOR.name);
    const { origin, key } = serve;
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      writeConfig(repo.root, origin, key);
      const synced = await runBin(["sync", "--all"], { cwd: repo.root, env: repo.env });
      expect(synced.code).toBe(0);
      // no key, no data
      expect((await fetch(`${origin}/api/v1/timeline`)).status).toBe(401);
      const p = await ctx.newPage();
      p.on("dialog", (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      await p.goto(`${origin}/`);
      await p.waitForSelector("form.signin");
      expect(await p.$$(".entry-row")).toHaveLength(0);
      await p.fill("#key", "afk_wrong");
      await p.click("form.signin button[type=submit]");
      await p.waitForSelector("text=That key was not accepted.");
      await p.fill("#key", key);
      await p.click("form.signin button[type=submit]");
      await p.waitForSelector(".session-card");
      const requests = await p.$$eval(".session-card .request", (r) => r.map((x) => x.textContent));
      expect(requests).toEqual(["Document the reports API", XSS_PROMPT, "Add a CSV export to the reports page"]);
      const alpha = await p.$$eval(".session-card:last-child .entry-row", (rows) => rows.map((r) => r.classList.contains("member")));
      expect(alpha).toEqual([false, true, true]);
      // where the key's owner is not the author, both are shown; where it is, the author alone
      const people = await p.$$eval(".session-card .person", (x) => x.map((e) => e.textContent));
      expect(people).toEqual([DOCS_AUTHOR.name, `Test Committer (sent by ${DOCS_AUTHOR.name})`, `Test Committer (sent by ${DOCS_AUTHOR.name})`]);
      await shot(p, "team-timeline");
      await p.evaluate((h) => {
        location.hash = `#/entry/${h}`;
      }, seeded.csvAnswered);
      await p.waitForSelector("article.entry .prompts .turn");
      expect(await p.$$eval(".prompts .turn-role", (r) => r.map((x) => x.textContent))).toEqual(ANSWERED_LABELS);
      expect(await p.textContent(".facts .author")).toBe("Test Committer <committer@example.com>");
      expect(await p.textContent(".facts .key-owner")).toBe(DOCS_AUTHOR.name);
      // the sign-in lasts across a reload
      await p.reload();
      await p.waitForSelector("article.entry h1");
      // served at 127.0.0.1, the sign-in is no cookie (every port of the machine would get it) but a session kept
      // in the tab: another port that the page is sent to receives nothing that signs in
      const session = await p.evaluate(() => sessionStorage.getItem("aiflare.session"));
      const cookies = (await ctx.cookies()).map((c) => c.value);
      const got = await visitOtherPort(p);
      for (const s of [key, session ?? key, ...cookies]) expect(JSON.stringify(got)).not.toContain(s);
      for (const r of got) expect((await fetch(`${origin}/api/v1/auth/me`, { headers: replayable(r) })).status).toBe(401);
      expect(session).toMatch(/^\S{20,}$/);
      expect(cookies).toEqual([]);
      await p.waitForSelector("article.entry h1");
      // the other screens read the server's answers the same way
      await p.evaluate(() => {
        location.hash = "#/session/sess-alpha-0001";
      });
      await p.waitForSelector(".transcript .cut");
      expect(await p.$$eval(".transcript .cut", (c) => c.map((x) => x.getAttribute("data-hash")))).toEqual([seeded.csvRoot, seeded.csvPart2, seeded.csvAnswered]);
      await p.evaluate(() => {
        location.hash = "#/file?path=src/reports";
      });
      await p.waitForSelector("main .card .entry-row");
      expect(await rowTexts(p)).toEqual(["Localise the CSV header", "Add CSV export to reports"]);
      await p.evaluate(() => {
        location.hash = "#/overview";
      });
      await p.waitForSelector(".figures");
      expect(await p.textContent(".figures")).toContain("6 entries");
      expect(await p.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned ?? null)).toBeNull();
      expect(dialogs).toEqual([]);
    } finally {
      rmSync(join(repo.root, "aiflare.yml"), { force: true });
      await ctx.close();
      await serve.stop();
    }
  });
});
