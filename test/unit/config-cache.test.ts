import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadRedactConfig } from "../../src/core/config.ts";
import { tempRepo, type TempRepo } from "../helpers.ts";

let repo: TempRepo | undefined;
afterEach(() => repo?.cleanup());

describe("the redact settings cache", () => {
  test("parsed once, reused while aiflare.yml is unchanged, re-read when it changes; never holds the key", () => {
    repo = tempRepo();
    const file = join(repo.root, "aiflare.yml");
    const cache = join(repo.root, ".context-capture", "config-cache.json");
    expect(loadRedactConfig(repo.root)).toEqual({ patterns: [], allow: [] });
    expect(existsSync(cache)).toBe(false);
    writeFileSync(file, 'api_key: ak_live_secret_1234\nredact:\n  allow: ["example.com"]\n');
    expect(loadRedactConfig(repo.root)).toEqual({ patterns: [], allow: ["example.com"] });
    const saved = readFileSync(cache, "utf8");
    expect(saved).not.toContain("ak_live_secret_1234");
    // a forged cache with the same stamp is what gets used: proof that the second call did not parse
    const forged = JSON.parse(saved) as { stamp: string };
    writeFileSync(cache, JSON.stringify({ stamp: forged.stamp, redact: { patterns: [], allow: ["from-cache"] } }));
    expect(loadRedactConfig(repo.root).allow).toEqual(["from-cache"]);
    writeFileSync(file, 'redact:\n  allow: ["other.org", "x"]\n');
    expect(loadRedactConfig(repo.root).allow).toEqual(["other.org", "x"]);
    writeFileSync(file, "redact: [unclosed\n");
    expect(() => loadRedactConfig(repo!.root)).toThrow("aiflare.yml");
  });
});
