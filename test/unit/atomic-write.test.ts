/** atomicWrite: a reader sees the old text or the new one, with the mode asked for, whatever was left around it. */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { atomicWrite } from "../../src/core/fsutil.ts";

let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = "";
});
const fresh = () => (dir = mkdtempSync(join(tmpdir(), "aiflare-atomic-")));
const modeOf = (p: string) => lstatSync(p).mode & 0o777;

describe("atomicWrite", () => {
  test("creates the folders it needs, and leaves no temporary file", () => {
    const path = join(fresh(), "a", "b", "state.json");
    atomicWrite(path, "one\n", 0o600);
    expect(readFileSync(path, "utf8")).toBe("one\n");
    expect(modeOf(path)).toBe(0o600);
    expect(readdirSync(join(dir, "a", "b"))).toEqual(["state.json"]);
  });

  test("replaces a temporary file a killed process of the same pid left, and a link in its place", () => {
    const path = join(fresh(), "state.json");
    writeFileSync(`${path}.aiflare-tmp-${process.pid}`, "half a wri");
    atomicWrite(path, "two\n", 0o600);
    expect(readFileSync(path, "utf8")).toBe("two\n");
    const outside = join(dir, "outside.txt");
    writeFileSync(outside, "keep\n");
    symlinkSync(outside, `${path}.aiflare-tmp-${process.pid}`);
    atomicWrite(path, "three\n", 0o600);
    expect(readFileSync(path, "utf8")).toBe("three\n");
    expect(readFileSync(outside, "utf8")).toBe("keep\n");
    expect(existsSync(`${path}.aiflare-tmp-${process.pid}`)).toBe(false);
  });

  test("gives the mode asked for under a umask that takes bits off, and keeps an existing file's mode otherwise", () => {
    const path = join(fresh(), "state.json");
    const old = process.umask(0o277);
    try {
      atomicWrite(path, "x\n", 0o600);
      expect(modeOf(path)).toBe(0o600);
    } finally {
      process.umask(old);
    }
    const shared = join(dir, "shared.txt");
    writeFileSync(shared, "a\n", { mode: 0o640 });
    atomicWrite(shared, "b\n");
    expect(modeOf(shared)).toBe(0o640);
    expect(readFileSync(shared, "utf8")).toBe("b\n");
  });
});
