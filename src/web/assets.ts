/**
 * The dashboard's static files, embedded in the executable: `scripts/build.ts` bundles `page/app.ts` for the
 * browser and bakes it in as AIFLARE_WEB_JS; the styles are a text import and the page is the template below.
 * Everything is served gzipped (a client that says it takes no gzip gets plain text) under a
 * Content-Security-Policy that allows only this origin's own script and styles.
 */
import { gzipSync } from "node:zlib";
import css from "./style.css" with { type: "text" };

declare const AIFLARE_WEB_JS: string | undefined;

/** No inline script, no third-party anything: the page talks only to the server that served it. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The page: no inline script or style; the mode tells the script whether to expect a sign-in. */
function pageHtml(mode: "local" | "team", version: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="aiflare-mode" content="${mode}">
<title>aiflare</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/app.css?v=${version}">
<script type="module" src="/assets/app.js?v=${version}"></script>
</head>
<body>
<header class="top">
<a class="brand" href="#/">aiflare</a>
<nav><a href="#/" data-nav="timeline">Timeline</a> <a href="#/overview" data-nav="overview">Overview</a></nav>
<span class="project" id="project"></span>
</header>
<main id="main" tabindex="-1"><p class="muted">Loading…</p></main>
<noscript>The aiflare dashboard needs JavaScript.</noscript>
</body>
</html>
`;
}

interface Asset {
  /** gzipped */
  body: Uint8Array<ArrayBuffer>;
  plain: string;
  type: string;
}

let cache: Map<string, Asset> | undefined;

/** Running from source (tests of the server code, `bun src/cli.ts`): bundle the page the way the build does. */
function bundleFromSource(): string {
  const r = Bun.spawnSync(["bun", "build", "--target=browser", "--minify", `${import.meta.dir}/page/app.ts`], { stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`bundling the dashboard failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

function assets(): Map<string, Asset> {
  if (cache) return cache;
  const js = typeof AIFLARE_WEB_JS === "string" ? AIFLARE_WEB_JS : bundleFromSource();
  const version = Bun.hash(js + css).toString(36);
  const asset = (plain: string, type: string): Asset => ({ body: new Uint8Array(gzipSync(Buffer.from(plain), { level: 9 })), plain, type });
  cache = new Map([
    ["page:local", asset(pageHtml("local", version), "text/html; charset=utf-8")],
    ["page:team", asset(pageHtml("team", version), "text/html; charset=utf-8")],
    ["/assets/app.js", asset(js, "text/javascript; charset=utf-8")],
    ["/assets/app.css", asset(css, "text/css; charset=utf-8")],
  ]);
  return cache;
}

/** The compressed size of the page's script and styles together, in bytes. */
export function dashboardAssetBytes(): number {
  const a = assets();
  return a.get("/assets/app.js")!.body.length + a.get("/assets/app.css")!.body.length;
}

/**
 * The dashboard's answer for `pathname` (`/`, `/index.html`, `/assets/…`), or null when the path is not the
 * dashboard's. `mode` tells the page whether to expect a sign-in (team) or a token cookie (local). The answer is
 * gzipped unless `acceptEncoding` (the request's Accept-Encoding, when the caller passes it) leaves gzip out.
 */
export function dashboardResponse(pathname: string, mode: "local" | "team", acceptEncoding?: string | null): Response | null {
  const key = pathname === "/" || pathname === "/index.html" ? `page:${mode}` : pathname;
  const asset = assets().get(key);
  if (!asset) return null;
  const gzip = acceptEncoding === undefined || acceptEncoding === null || /\bgzip\b/i.test(acceptEncoding);
  return new Response(gzip ? asset.body : asset.plain, {
    headers: {
      "Content-Type": asset.type,
      ...(gzip ? { "Content-Encoding": "gzip" } : {}),
      Vary: "Accept-Encoding",
      "Cache-Control": key.startsWith("page:") ? "no-store" : "public, max-age=3600",
      "Content-Security-Policy": CONTENT_SECURITY_POLICY,
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
      "X-Frame-Options": "DENY",
    },
  });
}
