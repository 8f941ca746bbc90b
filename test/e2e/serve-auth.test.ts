/**
 * `aiflare serve`'s trust settings end to end, against the compiled binary: wrong keys are counted per client and in
 * total without ever locking a valid key out, the proxy's X-Forwarded-* headers are believed only when the operator
 * says so, and a sign-in ends on the server at logout and when its key is revoked.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { binary } from "../helpers.ts";
import { useBackends } from "../server/backends.ts";
import { admin, database, newProject, useServe } from "./serve-support.ts";

setDefaultTimeout(90_000);
const BACKENDS = useBackends();
beforeAll(() => {
  binary();
});
const { tempDir, serve } = useServe();

/** A server on a fresh SQLite file with one project; `key` is its key. */
async function server(extra: string[] = [], env: Record<string, string> = {}) {
  const home = tempDir();
  const db = join(home, "db.sqlite");
  const key = await newProject(db, home);
  const s = await serve(db, home, extra, env);
  const get = async (key: string, headers: Record<string, string> = {}) =>
    (await fetch(`${s.url}/api/v1/auth/me`, { headers: { "x-api-key": key, ...headers } })).status;
  return { ...s, db, home, key, get };
}

const wrong = (i: number) => `afk_${String(i).padStart(43, "x")}`;

describe("failed key checks", () => {
  test("a flood of wrong keys from one address: that address gets 429, a valid key from it still gets 200", async () => {
    const s = await server();
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push(await s.get(wrong(i)));
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses.slice(20)).toEqual(Array(10).fill(429));
    const slowed = await fetch(`${s.url}/api/v1/auth/me`, { headers: { "x-api-key": wrong(99) } });
    expect(Number(slowed.headers.get("retry-after"))).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) expect(await s.get(s.key)).toBe(200);
    // signing in with the valid key works too
    const login = await fetch(`${s.url}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ key: s.key }) });
    expect(login.status).toBe(200);
  });

  test("without --trust-proxy, a rotating X-Forwarded-For does not escape the count of the connection's address", async () => {
    const s = await server();
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push(await s.get(wrong(i), { "x-forwarded-for": `198.51.100.${i}` }));
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses.slice(20)).toEqual(Array(5).fill(429));
    expect(await s.get(s.key, { "x-forwarded-for": "198.51.100.1" })).toBe(200);
  });

  test("with --trust-proxy, the proxy's address names the client; past the total budget wrong keys wait, valid keys pass", async () => {
    const s = await server(["--trust-proxy"]);
    expect(s.output()).toContain("trusting the proxy's X-Forwarded-For");
    // the last address is the one the proxy added; what the client put before it does not count
    for (let i = 0; i < 20; i++) expect(await s.get(wrong(i), { "x-forwarded-for": `10.0.0.${i}, 203.0.113.7` })).toBe(401);
    expect(await s.get(wrong(20), { "x-forwarded-for": "10.9.9.9, 203.0.113.7" })).toBe(429);
    expect(await s.get(wrong(21), { "x-forwarded-for": "203.0.113.8" })).toBe(401);
    expect(await s.get(s.key, { "x-forwarded-for": "203.0.113.7" })).toBe(200);
    // many addresses, a few wrong keys each: the total budget (200 a minute) is spent, then every wrong key waits
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) statuses.push(await s.get(wrong(i), { "x-forwarded-for": `2001:db8:${i.toString(16)}::1` }));
    expect(statuses.filter((x) => x === 401).length).toBe(200 - 21);
    expect(statuses.slice(-21)).toEqual(Array(21).fill(429));
    expect(await s.get(wrong(1), { "x-forwarded-for": "192.0.2.200" })).toBe(429);
    expect(await s.get(s.key, { "x-forwarded-for": "192.0.2.201" })).toBe(200);
    expect(await s.get(s.key)).toBe(200);
  });

  test("one IPv6 /64 is one client: rotating within it does not escape the count", async () => {
    const s = await server(["--trust-proxy"]);
    const statuses: number[] = [];
    for (let i = 0; i < 22; i++) statuses.push(await s.get(wrong(i), { "x-forwarded-for": `2001:db8:1:2::${i.toString(16)}` }));
    expect(statuses.slice(20)).toEqual([429, 429]);
    expect(await s.get(wrong(0), { "x-forwarded-for": "2001:db8:1:3::1" })).toBe(401);
  });
});

describe("the proxy's headers", () => {
  const login = (url: string, key: string, headers: Record<string, string>) =>
    fetch(`${url}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ key }) });

  for (const [how, extra, env] of [
    ["--trust-proxy", ["--trust-proxy"], {}],
    ["AIFLARE_TRUST_PROXY=1", [], { AIFLARE_TRUST_PROXY: "1" }],
  ] as const) {
    test(`trusted (${how}): X-Forwarded-Host is this site's name and X-Forwarded-Proto: https marks the cookie Secure`, async () => {
      const s = await server([...extra], env);
      const r = await login(s.url, s.key, { origin: "https://aiflare.example.com", "x-forwarded-host": "aiflare.example.com", "x-forwarded-proto": "https" });
      expect(r.status).toBe(200);
      expect(r.headers.get("set-cookie")).toContain("; Secure");
    });
  }

  test("not trusted (the default): X-Forwarded-Host and -Proto are ignored", async () => {
    const s = await server([], { AIFLARE_TRUST_PROXY: "0" });
    const r = await login(s.url, s.key, { origin: "https://aiflare.example.com", "x-forwarded-host": "aiflare.example.com" });
    expect(r.status).toBe(403);
    const plain = await login(s.url, s.key, { "x-forwarded-proto": "https" });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("set-cookie")).not.toContain("Secure");
  });
});

for (const backend of BACKENDS) {
  describe(`${backend.name}: sign-ins end on the server`, () => {
    // under a public host name (behind a proxy) the session is a cookie; loopback names get it in the body
    const signIn = async (url: string, key: string, cookie = "") => {
      const headers = { "content-type": "application/json", cookie, host: "aiflare.example.com" };
      const r = await fetch(`${url}/api/v1/auth/login`, { method: "POST", headers, body: JSON.stringify({ key }) });
      expect(r.status).toBe(200);
      return r.headers.get("set-cookie")!.split(";")[0]!;
    };
    const me = async (url: string, cookie: string) => (await fetch(`${url}/api/v1/auth/me`, { headers: { cookie } })).status;

    test("after logout the old cookie gets 401, on this server process and on another one on the same database", async () => {
      const db = await database(backend);
      const home = tempDir();
      const key = await newProject(db, home);
      const [a, b] = [await serve(db, home), await serve(db, home)];
      const cookie = await signIn(a.url, key);
      const kept = await signIn(a.url, key);
      expect([await me(a.url, cookie), await me(b.url, cookie)]).toEqual([200, 200]);
      const out = await fetch(`${b.url}/api/v1/auth/logout`, { method: "POST", headers: { cookie } });
      expect(out.status).toBe(200);
      expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
      // a browser that kept the cookie, or anyone who copied it, is refused everywhere
      expect([await me(a.url, cookie), await me(b.url, cookie)]).toEqual([401, 401]);
      expect(await me(a.url, kept)).toBe(200);
    });

    test("after `aiflare serve key revoke` the sign-ins made with that key get 401; those of other keys stay", async () => {
      const db = await database(backend);
      const home = tempDir();
      const first = await newProject(db, home);
      const second = JSON.parse((await admin(db, ["key", "create", "team", "--label", "laptop", "--json"], home)).stdout);
      const s = await serve(db, home);
      const withSecond = await signIn(s.url, second.key);
      const withBoth = await signIn(s.url, second.key, await signIn(s.url, first));
      const withFirst = await signIn(s.url, first);
      expect([await me(s.url, withSecond), await me(s.url, withBoth), await me(s.url, withFirst)]).toEqual([200, 200, 200]);
      expect((await admin(db, ["key", "revoke", second.keyId], home)).code).toBe(0);
      expect([await me(s.url, withSecond), await me(s.url, withBoth), await me(s.url, withFirst)]).toEqual([401, 401, 200]);
    });
  });
}
