/**
 * The dashboard's static files, embedded in the executable: `scripts/build.ts` bundles `page/app.ts` (and
 * `page/boot.ts`) for the browser and bakes them in already gzipped (`packScripts`), so neither a start nor the first
 * request compresses them; the styles are a text import and the page is the template below. Everything is served
 * gzipped (a client that says it takes no gzip gets plain text) under a Content-Security-Policy that allows only
 * this origin's own script and styles.
 */
import css from "./style.css" with { type: "text" };

/** The page's scripts as the build bakes them in: gzipped (nothing left to compress when serving), base64. */
declare const AIFLARE_WEB_SCRIPTS: PackedScripts | undefined;

export interface PackedScripts {
  /** `page/app.ts` bundled, gzipped, base64 */
  app: string;
  /** `page/boot.ts` bundled, gzipped, base64 */
  boot: string;
  /** names this build's scripts and styles in their URLs */
  version: string;
}

const gzip = (text: string) => Bun.gzipSync(new TextEncoder().encode(text), { level: 9 });

/** The bundled scripts as the executable carries them. */
export function packScripts(app: string, boot: string): PackedScripts {
  const b64 = (text: string) => Buffer.from(gzip(text)).toString("base64");
  return { app: b64(app), boot: b64(boot), version: Bun.hash(app + boot + css).toString(36) };
}

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

/**
 * The page: no inline script or style; the mode tells the script whether to expect a sign-in. `aiflare ui`'s page
 * also loads the boot script, which trades the URL's token for a session as soon as it arrives, while the page's
 * script is still being compiled.
 */
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
${mode === "local" ? `<script async src="/assets/boot.js?v=${version}"></script>\n` : ""}<link rel="stylesheet" href="/assets/app.css?v=${version}">
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

class Asset {
  #plain: string | undefined;
  constructor(
    /** gzipped */
    readonly body: Uint8Array<ArrayBuffer>,
    readonly type: string,
    plain?: string,
  ) {
    this.#plain = plain;
  }

  /** The text itself, for a client that takes no gzip. */
  get plain(): string {
    return (this.#plain ??= new TextDecoder().decode(Bun.gunzipSync(this.body)));
  }
}

let cache: Map<string, Asset> | undefined;

/** The page's script is a module; the boot script a classic one, which runs as soon as it arrives. */
export const PAGE_FORMAT = { app: "esm", boot: "iife" } as const;

/** Running from source (tests of the server code, `bun src/cli.ts`): bundles the page the way the build does. */
function bundlePage(entry: "app" | "boot"): string {
  const r = Bun.spawnSync(["bun", "build", "--target=browser", "--minify", `--format=${PAGE_FORMAT[entry]}`, `${import.meta.dir}/page/${entry}.ts`], {
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`bundling the dashboard failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

function assets(): Map<string, Asset> {
  if (cache) return cache;
  const packed = typeof AIFLARE_WEB_SCRIPTS === "object" ? AIFLARE_WEB_SCRIPTS : packScripts(bundlePage("app"), bundlePage("boot"));
  const baked = (b64: string) => new Asset(new Uint8Array(Buffer.from(b64, "base64")), "text/javascript; charset=utf-8");
  const text = (plain: string, type: string) => new Asset(new Uint8Array(gzip(plain)), type, plain);
  cache = new Map([
    ["page:local", text(pageHtml("local", packed.version), "text/html; charset=utf-8")],
    ["page:team", text(pageHtml("team", packed.version), "text/html; charset=utf-8")],
    ["/assets/app.js", baked(packed.app)],
    ["/assets/boot.js", baked(packed.boot)],
    ["/assets/app.css", text(css, "text/css; charset=utf-8")],
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
  const gzipped = acceptEncoding === undefined || acceptEncoding === null || /\bgzip\b/i.test(acceptEncoding);
  return new Response(gzipped ? asset.body : asset.plain, {
    headers: {
      "Content-Type": asset.type,
      ...(gzipped ? { "Content-Encoding": "gzip" } : {}),
      Vary: "Accept-Encoding",
      "Cache-Control": key.startsWith("page:") ? "no-store" : "public, max-age=3600",
      "Content-Security-Policy": CONTENT_SECURITY_POLICY,
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
      "X-Frame-Options": "DENY",
    },
  });
}
