/**
 * The entry page and the file view in a real headless Chromium: the commit's diff stat and patch, `git show` to
 * copy, the forge link and its trust rule, the full hash at phone width, and a file's story as `aiflare why` tells
 * it (renames followed, each entry's intent, the commits without an entry) — against `aiflare ui` over a real
 * repository, and against `aiflare serve` (SQLite) with the same work synced to it.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { agentCommit, capture, session } from "./capture-support.ts";
import { ARTIFACTS, launchBrowser, startUi, type RunningUi } from "../dashboard-support.ts";
import { admin, newProject, useServe } from "./serve-support.ts";
import { loadConfig } from "../../src/core/config.ts";

setDefaultTimeout(60_000);

// Functions passed to page.evaluate run in the page; the test's own type world has no DOM.
declare const document: any, location: any, navigator: any, window: any, HashChangeEvent: any;

const EXPORTER = Array.from({ length: 12 }, (_, i) => `export const field${i} = ${i};`).join("\n") + "\n";
const FORGE = "https://github.com/org/reports/commit/{sha}";
const PHISH = "https://evil.example/login?next={sha}";

let repo: TempRepo;
let ui: RunningUi;
let browser: Browser;
let page: Page;
const c: Record<"first" | "human" | "moved" | "big", string> = { first: "", human: "", moved: "", big: "" };

/** An agent commit recorded by the hooks and summarised with `aiflare capture`. */
async function recorded(s: ReturnType<typeof session>, message: string, files: Record<string, string>, summary: string[]): Promise<string> {
  const made = agentCommit(repo, message, files);
  expect((await s.bash(`git commit -am "${message}"`, made.stdout)).code).toBe(0);
  expect((await capture(repo, ["--commit-hash", made.hash, ...summary], { CLAUDE_SESSION_ID: "sess-entry-0001" })).code).toBe(0);
  return made.hash;
}

beforeAll(async () => {
  repo = tempRepo();
  // A tracked aiflare.yml came with the repository and points commit links elsewhere: it must not be believed.
  repo.commit("team settings", { "aiflare.yml": `forge_url: "${PHISH}"\n` });
  const dir = join(repo.home, ".config", "aiflare");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.yml"), `forge_url: "${FORGE}"\n`, { mode: 0o600 });

  // Whole seconds apart, so git's order and the entries' order are the story's order.
  let last = Math.floor(Date.now() / 1000);
  const tick = () => {
    last += 1;
    repo.env.GIT_COMMITTER_DATE = repo.env.GIT_AUTHOR_DATE = `${last} +0000`;
  };
  const s = session(repo, "sess-entry-0001");
  await s.prompt("Write the CSV exporter");
  tick();
  c.first = await recorded(s, "feat: csv exporter", { "src/export.ts": EXPORTER }, [
    "--title", "Add the CSV exporter", "--tag", "FEATURE", "--intent", "Reports could only be printed.", "--diff-summary", "- src/export.ts: the exporter",
  ]);
  // a person's commit, outside any agent session: no entry
  tick();
  c.human = repo.commit("tweak: quote fields", { "src/export.ts": EXPORTER.replace("field3 = 3", "field3 = '3'") });
  await s.prompt("Move the exporter under csv/");
  tick();
  mkdirSync(join(repo.root, "src", "csv"), { recursive: true });
  repo.git("mv", "src/export.ts", "src/csv/export.ts");
  c.moved = await recorded(s, "refactor: move exporter", { "src/csv/export.ts": `${EXPORTER.replace("field3 = 3", "field3 = '3'")}export const moved = true;\n` }, [
    "--title", "Move the exporter under csv/", "--tag", "REFACTORING", "--intent", "The exporter belongs with the other **CSV** code.",
  ]);
  await s.prompt("Add sample data");
  tick();
  const big = Array.from({ length: 9000 }, (_, i) => `row ${i}, ${"x".repeat(30)}`).join("\n") + "\n";
  c.big = await recorded(s, "data: samples", { "data/sample.csv": big }, ["--title", "Add the sample data", "--tag", "FEATURE", "--intent", "Fixtures."]);
  await s.end();
  delete repo.env.GIT_COMMITTER_DATE;
  delete repo.env.GIT_AUTHOR_DATE;

  ui = await startUi(repo.root, repo.env);
  browser = await launchBrowser();
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await ctx.grantPermissions(["clipboard-read", "clipboard-write"], { origin: ui.origin });
  page = await ctx.newPage();
  await page.goto(ui.url);
  await page.waitForSelector("body[data-ready='1']");
});

afterAll(async () => {
  await browser?.close();
  await ui?.stop();
  repo?.cleanup();
});

async function go(p: Page, route: string, ready: string): Promise<void> {
  await p.evaluate((r) => {
    document.body.dataset.route = "";
    if (location.hash === r) window.dispatchEvent(new HashChangeEvent("hashchange"));
    else location.hash = r;
  }, route);
  await p.waitForFunction((r) => document.body.dataset.route === r, route);
  await p.waitForSelector(ready);
}

/** The file view's items: hash, whether it has an entry, its text. */
const storyItems = (p: Page) =>
  p.$$eval(".file-story .file-item", (items) =>
    items.map((i) => ({ hash: i.getAttribute("data-hash"), entry: i.classList.contains("has-entry"), text: i.textContent ?? "" })),
  );

describe("aiflare ui: the entry page shows the commit", () => {
  test("diff stat with the rename, the patch as text, git show to copy, the forge link from the user's own settings", async () => {
    await go(page, `#/entry/${c.moved}`, "article.entry .files .stat");
    const stat = await page.$$eval(".files .stat li", (li) => li.map((l) => l.textContent ?? ""));
    expect(stat).toEqual([`src/csv/export.ts ← src/export.ts+1 −0`]);
    expect(await page.textContent(".stat-total")).toBe("1 file changed, +1 −0");
    const patch = await page.textContent("pre.patch");
    expect(patch).toContain("rename from src/export.ts");
    expect(patch).toContain("+export const moved = true;");
    expect(await page.$eval("pre.patch .add", (e) => e.textContent)).toBe("+export const moved = true;\n");
    expect(await page.textContent(".facts .copyable .command")).toBe(`git show ${c.moved}`);
    await page.click(".facts button.copy");
    await page.waitForFunction(() => document.querySelector(".facts button.copy")?.textContent === "Copied");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`git show ${c.moved}`);
    // the forge link: the user's own setting, never the tracked file's
    const link = await page.$eval(".forge-link", (a) => [a.getAttribute("href"), a.getAttribute("rel"), a.textContent]);
    expect(link).toEqual([`https://github.com/org/reports/commit/${c.moved}`, "noopener noreferrer nofollow", "Open on github.com"]);
    expect(await page.evaluate(() => document.body.innerHTML.includes("evil.example"))).toBe(false);
    await page.screenshot({ path: join(ARTIFACTS, "entry-commit.png"), fullPage: true });
  });

  test("a patch over 256 KB is cut, and the page says so", async () => {
    await go(page, `#/entry/${c.big}`, "article.entry .files .stat");
    expect(await page.$$eval(".files .stat li", (li) => li.map((l) => l.textContent ?? ""))).toEqual(["data/sample.csv+9000 −0"]);
    expect(await page.textContent(".patch-note")).toContain("The patch is cut at 256 KB");
    const length = await page.$eval("pre.patch", (p) => p.textContent.length);
    expect(length).toBeGreaterThan(200 * 1024);
    expect(length).toBeLessThanOrEqual(256 * 1024 + 20_000);
  });

  test("phone width: the 40-character hash stays whole or breaks evenly, never leaving a lone character", async () => {
    const phone = await browser.newContext({ viewport: { width: 360, height: 780 }, isMobile: true, deviceScaleFactor: 2 });
    try {
      const p = await phone.newPage();
      await p.goto(ui.url);
      await p.waitForSelector("body[data-ready='1']");
      for (const width of [320, 360, 390, 412]) {
        await p.setViewportSize({ width, height: 780 });
        await go(p, `#/entry/${c.first}`, "article.entry .full-hash");
        // characters per rendered line of the hash
        const lines = await p.$eval(".full-hash", (el) => {
          const tops = new Map<number, number>();
          const walker = document.createTreeWalker(el, 4);
          for (let n = walker.nextNode(); n; n = walker.nextNode()) {
            for (let i = 0; i < n.textContent.length; i++) {
              const r = document.createRange();
              r.setStart(n, i);
              r.setEnd(n, i + 1);
              const top = Math.round(r.getBoundingClientRect().top);
              tops.set(top, (tops.get(top) ?? 0) + 1);
            }
          }
          return [...tops.values()];
        });
        expect(lines.reduce((a, b) => a + b, 0)).toBe(40);
        expect(lines.length).toBeLessThanOrEqual(2);
        expect(Math.min(...lines)).toBeGreaterThanOrEqual(lines.length === 1 ? 40 : 20);
        const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(overflow).toBeLessThanOrEqual(0);
      }
      await p.screenshot({ path: join(ARTIFACTS, "entry-phone.png"), fullPage: true });
    } finally {
      await phone.close();
    }
  });

  test("a tracked aiflare.yml may not set the forge link; the user's config and an untracked file of theirs may", () => {
    const config = loadConfig(repo.root, repo.env);
    expect(config.forgeUrl).toBe(FORGE);
    expect(config.ignored.find((i) => i.setting === "forge_url")?.reason).toContain("tracked by git");
    // a template that is not an http(s) URL with {sha} is left out, with why
    writeFileSync(join(repo.home, ".config", "aiflare", "config.yml"), `forge_url: "javascript:alert('{sha}')"\n`, { mode: 0o600 });
    try {
      const bad = loadConfig(repo.root, repo.env);
      expect(bad.forgeUrl).toBeUndefined();
      expect(bad.ignored.map((i) => i.reason).join("\n")).toContain("http:// or https://");
    } finally {
      writeFileSync(join(repo.home, ".config", "aiflare", "config.yml"), `forge_url: "${FORGE}"\n`, { mode: 0o600 });
    }
  });
});

describe("aiflare ui: the file view tells what aiflare why tells", () => {
  test("a renamed file: its whole history, each entry's intent, the commit without an entry", async () => {
    await go(page, "#/file?path=src/csv/export.ts", ".file-story .file-item");
    const items = await storyItems(page);
    expect(items.map((i) => [i.hash, i.entry])).toEqual([
      [c.moved, true],
      [c.human, false],
      [c.first, true],
    ]);
    expect(items[0]!.text).toContain("The exporter belongs with the other CSV code.");
    expect(items[1]!.text).toContain("tweak: quote fields");
    expect(items[1]!.text).toContain("no entry");
    expect(items[1]!.text).toContain("as src/export.ts");
    expect(items[2]!.text).toContain("Reports could only be printed.");
    expect(items[2]!.text).toContain("as src/export.ts");
    expect(await page.textContent(".file-story .md.intent strong")).toBe("CSV");
    expect(await page.textContent(".status")).toBe("3 commits touched it; 2 entries");
    await page.screenshot({ path: join(ARTIFACTS, "file-renamed.png"), fullPage: true });
  });

  test("a directory lists a file and its renamed self once, under its last name", async () => {
    await go(page, "#/file?path=src", ".dir-files li");
    const files = await page.$$eval(".dir-files li", (li) => li.map((l) => l.textContent ?? ""));
    expect(files).toEqual(["src/csv/export.ts (was src/export.ts) · 3 commits"]);
    expect((await storyItems(page)).map((i) => i.hash)).toEqual([c.moved, c.human, c.first]);
  });
});

describe("aiflare serve: the entry page and file view in team mode", () => {
  const { tempDir, serve } = useServe();

  test("the entry's files and diff summary, where to find the patch, the project's forge link", async () => {
    const home = tempDir();
    const db = join(home, "team.sqlite");
    const key = await newProject(db, home, "reports");
    const refused = await admin(db, ["project", "forge", "reports", "javascript:alert(1)//{sha}"], home);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("http:// or https://");
    const set = await admin(db, ["project", "forge", "reports", "https://forge.example/reports/-/commit/{sha}"], home);
    expect(set.code).toBe(0);
    const server = await serve(db, home);
    const synced = await runBin(["sync", "--all"], { cwd: repo.root, env: { ...repo.env, AIFLARE_ENDPOINT: server.url, AIFLARE_API_KEY: key } });
    expect(synced.code).toBe(0);

    const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const p = await ctx.newPage();
      await p.goto(`${server.url}/`);
      await p.waitForSelector("form.signin");
      await p.fill("#key", key);
      await p.click("form.signin button[type=submit]");
      await p.waitForSelector(".session-card");
      await go(p, `#/entry/${c.first}`, "article.entry .files");
      expect(await p.textContent(".files")).toContain("src/export.ts");
      expect(await p.$$("pre.patch")).toHaveLength(0);
      expect(await p.textContent(".patch-note")).toContain("The team server keeps no patches");
      expect(await p.textContent(".patch-note .command")).toBe(`git show ${c.first}`);
      expect(await p.textContent(".facts .copyable .command")).toBe(`git show ${c.first}`);
      expect(await p.$eval(".forge-link", (a) => [a.getAttribute("href"), a.getAttribute("rel")])).toEqual([
        `https://forge.example/reports/-/commit/${c.first}`,
        "noopener noreferrer nofollow",
      ]);
      const summary = await p.$$eval("section.prose", (ss) => ss.find((s) => s.querySelector("h3")?.textContent === "Diff summary")?.textContent);
      expect(summary).toContain("src/export.ts: the exporter");

      // unset: no link
      expect((await admin(db, ["project", "forge", "reports", "none"], home)).code).toBe(0);
      await go(p, `#/entry/${c.moved}`, "article.entry .files");
      expect(await p.$$(".forge-link")).toHaveLength(0);

      // the file view: each entry with its intent
      await go(p, "#/file?path=src/csv/export.ts", ".file-story .file-item");
      const items = await storyItems(p);
      expect(items.map((i) => i.hash)).toEqual([c.moved]);
      expect(items[0]!.text).toContain("The exporter belongs with the other CSV code.");
      expect(await p.textContent(".note")).toContain("aiflare why src/csv/export.ts");
    } finally {
      await ctx.close();
    }
  });
});
