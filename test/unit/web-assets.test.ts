/** The dashboard's embedded files: what is served where, compressed, under a CSP that allows no inline script. */
import { describe, expect, test } from "bun:test";
import { gunzipSync } from "node:zlib";
import { dashboardAssetBytes, dashboardResponse } from "../../src/web/assets.ts";

const body = async (res: Response) => gunzipSync(Buffer.from(await res.arrayBuffer())).toString("utf8");

describe("dashboardResponse", () => {
  test("serves the page at / in each mode, gzipped, with a strict CSP and no inline script or style", async () => {
    for (const mode of ["local", "team"] as const) {
      const res = dashboardResponse("/", mode)!;
      expect(res.headers.get("content-encoding")).toBe("gzip");
      const csp = res.headers.get("content-security-policy")!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
      const html = await body(res);
      expect(html).toContain(`<meta name="aiflare-mode" content="${mode}">`);
      // every script is an external file from this origin; no inline handlers, no style attributes
      // `aiflare ui`'s page also has the boot script, which signs in as soon as it arrives
      const app = expect.stringMatching(/^<script type="module" src="\/assets\/app\.js\?v=\w+">$/);
      const boot = expect.stringMatching(/^<script async src="\/assets\/boot\.js\?v=\w+">$/);
      expect(html.match(/<script[^>]*>/g)).toEqual(mode === "local" ? [boot, app] : [app]);
      expect(html).not.toMatch(/<script[^>]*>[^<]|\son\w+=|style=/);
      expect(html).not.toMatch(/https?:\/\//);
    }
    expect(dashboardResponse("/index.html", "local")).not.toBeNull();
  });

  test("serves the script and styles, plain when the client takes no gzip; other paths are not the dashboard's", async () => {
    const js = dashboardResponse("/assets/app.js", "local", "gzip, deflate, br")!;
    expect(js.headers.get("content-type")).toStartWith("text/javascript");
    expect((await body(js)).length).toBeGreaterThan(1000);
    const plain = dashboardResponse("/assets/app.css", "team", "identity")!;
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(await plain.text()).toContain("prefers-color-scheme: dark");
    // the scripts are carried gzipped; a client that takes no gzip gets them unpacked
    for (const name of ["app", "boot"]) {
      const script = dashboardResponse(`/assets/${name}.js`, "local", "identity")!;
      expect(script.headers.get("content-encoding")).toBeNull();
      expect(await script.text()).toBe(await body(dashboardResponse(`/assets/${name}.js`, "local")!));
    }
    // the boot script is a classic one (it runs as soon as it arrives): nothing a module alone may hold
    expect(await dashboardResponse("/assets/boot.js", "local", "identity")!.text()).not.toMatch(/^\s*(import|export)\b|\bimport\.meta\b/m);
    expect(dashboardResponse("/api/v1/timeline", "local")).toBeNull();
    expect(dashboardResponse("/assets/../../etc/passwd", "local")).toBeNull();
  });

  test("the script and styles together stay within 150 KB compressed, with no address of another origin", async () => {
    expect(dashboardAssetBytes()).toBeLessThan(150 * 1024);
    const js = await body(dashboardResponse("/assets/app.js", "local")!);
    expect(js).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
  });
});
