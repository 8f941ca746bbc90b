import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadRedactConfig } from "../../src/core/config.ts";
import { tempRepo, type TempRepo } from "../helpers.ts";

let repo: TempRepo | undefined;
afterEach(() => repo?.cleanup());

describe("the redact settings cache", () => {
  test("parsed once, reused while nothing it depends on changed, re-read when aiflare.yml changes; never holds the key", () => {
    repo = tempRepo();
    const file = join(repo.root, "aiflare.yml");
    const cache = join(repo.root, ".git", "aiflare", "redact-cache.json");
    expect(loadRedactConfig(repo.root)).toEqual({ patterns: [], allow: [] });
    expect(existsSync(cache)).toBe(false);
    writeFileSync(file, 'api_key: ak_live_secret_1234\nredact:\n  allow: ["example.com"]\n');
    expect(loadRedactConfig(repo.root)).toEqual({ patterns: [], allow: ["example.com"] });
    const saved = readFileSync(cache, "utf8");
    expect(saved).not.toContain("ak_live_secret_1234");
    // a forged cache with the same stamp is what gets used: proof that the second call did not parse
    const forged = JSON.parse(saved) as { key: string };
    writeFileSync(cache, JSON.stringify({ key: forged.key, redact: { patterns: [], allow: ["from-cache"] } }));
    expect(loadRedactConfig(repo.root).allow).toEqual(["from-cache"]);
    writeFileSync(file, 'redact:\n  allow: ["other.org", "x"]\n');
    expect(loadRedactConfig(repo.root).allow).toEqual(["other.org", "x"]);
    // tracked by git, the file came with the repository: its allowlist no longer counts (the git index changed)
    repo.git("add", "aiflare.yml");
    expect(loadRedactConfig(repo.root).allow).toEqual([]);
    repo.git("rm", "-q", "--cached", "aiflare.yml");
    writeFileSync(file, "redact: [unclosed\n");
    expect(() => loadRedactConfig(repo!.root)).toThrow("aiflare.yml");
  });
});
