/**
 * `aiflare ui`'s HTTP server: the dashboard and its read API over this repository, on 127.0.0.1 only. A random
 * per-run token, handed over once in the printed URL and then kept in an HttpOnly cookie, keeps other local users
 * and other web pages out; the Host check keeps DNS-rebinding pages out.
 */
import { timingSafeEqual } from "node:crypto";
import type { RepoPaths } from "../repo.ts";
import { answerLocalApi, apiError } from "./api.ts";
import { newUiToken } from "./token.ts";

/** The cookie that carries the token after the first visit (name fixed by the read API contract). */
export const UI_COOKIE = "aiflare_ui";

export interface LocalDashboard {
  /** the URL to open, token included */
  url: string;
  port: number;
  stop(): void;
}

export interface LocalDashboardOptions {
  repo: Pick<RepoPaths, "root" | "commonDir">;
  /** 0 picks a free port */
  port: number;
  /** the page's static files (`dashboardResponse` bound to local mode) */
  assets: (pathname: string, acceptEncoding: string | null) => Response | null;
  token?: string;
}

function sameSecret(given: string | null | undefined, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookie(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

function plain(status: number, text: string): Response {
  return new Response(`${text}\n`, { status, headers: { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff" } });
}

/** Starts the server; it runs until `stop()`. */
export function startLocalDashboard(opts: LocalDashboardOptions): LocalDashboard {
  const token = opts.token ?? newUiToken();
  let port = opts.port;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: opts.port,
    async fetch(req) {
      const url = new URL(req.url);
      const host = req.headers.get("host");
      if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) return plain(403, "This dashboard answers only at 127.0.0.1.");
      if (req.method !== "GET" && req.method !== "HEAD") return plain(405, "Only GET is served here.");
      const given = url.searchParams.get("token");
      if (given !== null) {
        if (!sameSecret(given, token)) return plain(403, "Wrong token: open the URL that `aiflare ui` printed.");
        return new Response(null, {
          status: 303,
          headers: {
            Location: "/",
            "Set-Cookie": `${UI_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`,
            "Cache-Control": "no-store",
            "Referrer-Policy": "no-referrer",
          },
        });
      }
      if (url.pathname.startsWith("/api/")) {
        const ok = sameSecret(cookie(req.headers.get("cookie"), UI_COOKIE), token) || sameSecret(req.headers.get("x-aiflare-token"), token);
        if (!ok) return apiError(401, "open the URL that `aiflare ui` printed (it carries this run's token)");
        return (await answerLocalApi(url, opts.repo)) ?? apiError(404, `no such API path: ${url.pathname}`);
      }
      return opts.assets(url.pathname, req.headers.get("accept-encoding")) ?? plain(404, "Not found.");
    },
  });
  port = server.port ?? opts.port;
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    stop: () => void server.stop(true),
  };
}
