/** Object writes survive a `git gc` removing their directory; killed writers' temporary files are removed later. */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeStaleTempFiles, removeStaleTempFilesIfDue, TEMP_LOOK_EVERY_MS } from "../../src/store/cleanup.ts";
import { TMP_OBJECT_PREFIX, writeObjectAtomically } from "../../src/store/objects.ts";

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A pid that no process has (the highest possible pid on Linux is below 2^22). */
const DEAD_PID = 4_194_304 + 17;

function touch(path: string, ageMs: number): void {
  writeFileSync(path, "x");
  const t = (Date.now() - ageMs) / 1000;
  utimesSync(path, t, t);
}

describe("object writes", () => {
  test("the objects/xx directory removed between mkdir and write (git gc): made again, the object written", async () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-objects-"));
    const target = join(dir, "objects", "ab", "cdef");
    // the directory does not exist when the write starts, as after gc removed it
    writeObjectAtomically(target, new Uint8Array([1, 2, 3]));
    expect([...readFileSync(target)]).toEqual([1, 2, 3]);
    expect(readdirSync(join(dir, "objects", "ab"))).toEqual(["cdef"]);
  });

  test("an object that raced in is kept; no temporary file is left", async () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-objects-"));
    mkdirSync(join(dir, "ab"));
    writeFileSync(join(dir, "ab", "cd"), "same");
    writeObjectAtomically(join(dir, "ab", "cd"), Buffer.from("same"));
    expect(readdirSync(join(dir, "ab"))).toEqual(["cd"]);
  });
});

describe("removeStaleTempFiles", () => {
  test("removes a killed writer's tmp_obj_ and index.sqlite.tmp- files, keeps live and recent ones and everything else", () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-cleanup-"));
    mkdirSync(join(dir, "objects", "ab"), { recursive: true });
    mkdirSync(join(dir, "aiflare"));
    const stale = [
      join(dir, "objects", "ab", `${TMP_OBJECT_PREFIX}${DEAD_PID}_x1`),
      join(dir, "objects", "ab", `${TMP_OBJECT_PREFIX}${process.pid}_x2`),
      join(dir, "aiflare", `index.sqlite.tmp-${DEAD_PID}-y1`),
    ];
    touch(stale[0]!, 5 * 60_000); // dead writer, 5 minutes old
    touch(stale[1]!, 2 * 3_600_000); // live pid but two hours old: nothing writes that long
    touch(stale[2]!, 5 * 60_000);
    const kept = [
      join(dir, "objects", "ab", `${TMP_OBJECT_PREFIX}${DEAD_PID}_young`), // too young to judge
      join(dir, "objects", "ab", `${TMP_OBJECT_PREFIX}${process.pid}_live`), // a live writer
      join(dir, "objects", "ab", "cdef0123"), // an object
      join(dir, "objects", "ab", "tmp_obj_git_owned"), // git's own temporary file
      join(dir, "aiflare", "index.sqlite"),
    ];
    touch(kept[0]!, 1_000);
    touch(kept[1]!, 5 * 60_000);
    for (const p of kept.slice(2)) touch(p, 5 * 3_600_000);
    expect(removeStaleTempFiles(dir)).toBe(3);
    for (const p of stale) expect(existsSync(p)).toBe(false);
    for (const p of kept) expect(existsSync(p)).toBe(true);
  });

  test("capture's look comes at most every ten minutes; a clock set back looks again", () => {
    dir = mkdtempSync(join(tmpdir(), "aiflare-cleanup-"));
    mkdirSync(join(dir, "objects", "ab"), { recursive: true });
    const left = (name: string, age = 5 * 60_000) => {
      const p = join(dir, "objects", "ab", `${TMP_OBJECT_PREFIX}${DEAD_PID}_${name}`);
      touch(p, age);
      return p;
    };
    const first = left("a");
    expect(removeStaleTempFilesIfDue(dir)).toBe(1);
    expect(existsSync(first)).toBe(false);
    // a minute later: not looked at again
    const second = left("b");
    expect(removeStaleTempFilesIfDue(dir, Date.now() + 60_000)).toBe(0);
    expect(existsSync(second)).toBe(true);
    // past the interval, and with the clock set back an hour: looked at
    expect(removeStaleTempFilesIfDue(dir, Date.now() + TEMP_LOOK_EVERY_MS + 1_000)).toBe(1);
    const third = left("c", 3 * 3_600_000);
    expect(removeStaleTempFilesIfDue(dir, Date.now() - 3_600_000)).toBe(1);
    expect(existsSync(third)).toBe(false);
  });
});
