import { afterEach, describe, expect, test } from "bun:test";
import { closeSync, constants, existsSync, lstatSync, lutimesSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { lockFileSync, tryLockFile, type LockFileOptions } from "../../src/util/lockfile.ts";

const CONTENDER = resolve(import.meta.dir, "..", "lock-contender.ts");
const CONTENDERS = 8;
const ROUNDS = 40;

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** The pid of a process that has exited. */
function deadPid(): number {
  return Bun.spawnSync(["true"]).pid;
}

async function until(what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}

/** Opens a FIFO's write end once a reader has it open (without blocking this thread: a contender may have died). */
async function openWriteEnd(fifo: string): Promise<number> {
  let fd: number | undefined;
  await until(`a reader of ${fifo}`, () => {
    try {
      fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENXIO") throw err;
      return false;
    }
  });
  return fd!;
}

/**
 * Runs CONTENDERS processes over ROUNDS rounds; before each round `leave` puts a lock left behind by a dead holder
 * at the path they all lock, then they all start at once. Returns the holds in the order they were marked.
 */
async function contend(kind: string, leave: (dir: string) => void): Promise<string[]> {
  dir = mkdtempSync(join(tmpdir(), "aiflare-lock-"));
  const fifos = Array.from({ length: ROUNDS }, (_, round) => join(dir!, `go-${round}`));
  expect(Bun.spawnSync(["mkfifo", ...fifos]).exitCode).toBe(0);
  const procs = Array.from({ length: CONTENDERS }, () =>
    Bun.spawn([process.execPath, CONTENDER, kind, dir!, String(ROUNDS)], { stdout: "ignore", stderr: "inherit" }),
  );
  const marks = join(dir, "marks");
  const count = (round: number, mark: string) =>
    existsSync(marks) ? readFileSync(marks, "utf8").split("\n").filter((l) => l.startsWith(`${mark} ${round} `)).length : 0;
  for (let round = 0; round < ROUNDS; round++) {
    await until(`round ${round}'s contenders`, () => readdirSync(dir!).filter((n) => n.startsWith(`ready-${round}-`)).length === CONTENDERS);
    leave(dir);
    // every contender waiting to open the FIFO goes on at once; one late to open it goes on while it stays open
    const start = await openWriteEnd(fifos[round]!);
    await until(`round ${round}'s holds`, () => count(round, "end") === CONTENDERS);
    closeSync(start);
  }
  for (const p of procs) expect(await p.exited).toBe(0);
  return readFileSync(marks, "utf8").trim().split("\n");
}

/** Every hold ends before the next starts, and each contender held the lock once per round. */
function expectOneHolderAtATime(lines: string[]): void {
  const overlaps: string[] = [];
  for (let i = 0; i < lines.length; i += 2) {
    const [mark, round, pid] = lines[i]!.split(" ");
    if (mark !== "start" || lines[i + 1] !== `end ${round} ${pid}`) overlaps.push(`${lines[i]} / ${lines[i + 1]}`);
  }
  expect(overlaps).toEqual([]);
  expect(lines.length).toBe(2 * CONTENDERS * ROUNDS);
}

describe("a lock left behind, found by many processes at once", () => {
  test("the session lock of a dead holder is taken by one of them at a time", async () => {
    const lines = await contend("session", (d) => writeFileSync(join(d, "log.lock"), `${deadPid()}\n`));
    expectOneHolderAtATime(lines);
  }, 120_000);

  test("the sync lock of a dead holder is taken by one of them at a time", async () => {
    const lines = await contend("sync", (d) => writeFileSync(join(d, "sync.lock"), `${deadPid()}\n`));
    expectOneHolderAtATime(lines);
  }, 120_000);

  test("a ref's lock left by a killed writer is taken by one of them at a time", async () => {
    const lines = await contend("ref", (d) => {
      const lock = join(d, "refs", "heads", "x.lock");
      mkdirSync(join(d, "refs", "heads"), { recursive: true });
      writeFileSync(lock, "");
      const old = new Date(Date.now() - 60_000);
      utimesSync(lock, old, old);
    });
    expectOneHolderAtATime(lines);
  }, 120_000);
});

describe("lock files", () => {
  const opts = (more: Partial<LockFileOptions> = {}): LockFileOptions => ({
    pid: true,
    waitMs: 0,
    maxPollMs: 10,
    mode: 0o600,
    busy: (holder) => new Error(`held by ${holder}`),
    ...more,
  });
  const temp = () => (dir = mkdtempSync(join(tmpdir(), "aiflare-lock-")));
  const age = (path: string, ms: number) => {
    const then = new Date(Date.now() - ms);
    utimesSync(path, then, then);
  };

  test("a live holder makes the next one wait, then fail with the caller's error naming the holder; released, it is free", () => {
    const path = join(temp(), "a.lock");
    const first = lockFileSync(path, opts());
    expect(readFileSync(path, "utf8")).toBe(`${process.pid}\n`);
    expect(() => lockFileSync(path, opts({ waitMs: 50 }))).toThrow(`held by ${process.pid}`);
    first.release();
    first.release();
    expect(existsSync(path)).toBe(false);
    lockFileSync(path, opts()).release();
  });

  test("a lock held past staleMs is taken over, and its first holder's release leaves the new holder's lock", () => {
    const path = join(temp(), "a.lock");
    const first = lockFileSync(path, opts({ staleMs: 1000 }));
    age(path, 5000);
    const second = lockFileSync(path, opts({ staleMs: 1000 }));
    expect([first.stillHeld(), second.stillHeld()]).toEqual([false, true]);
    first.release();
    expect(existsSync(path)).toBe(true);
    second.release();
    expect(existsSync(path)).toBe(false);
  });

  test("a lock without its pid yet is waited for; one left so for over a second is taken over", () => {
    const path = join(temp(), "a.lock");
    writeFileSync(path, "");
    expect(tryLockFile(path, opts())).toBeNull();
    age(path, 2000);
    const lock = tryLockFile(path, opts());
    expect(lock).not.toBeNull();
    expect(readFileSync(path, "utf8")).toBe(`${process.pid}\n`);
    lock!.release();
  });

  test("a takeover cut short by a kill (its steal lock left behind) does not keep the lock from being taken over", () => {
    const path = join(temp(), "a.lock");
    writeFileSync(path, `${deadPid()}\n`);
    writeFileSync(join(dir!, "a.aiflare-steal.lock"), `${deadPid()}\n`);
    lockFileSync(path, opts({ waitMs: 5_000 })).release();
    expect(readdirSync(dir!)).toEqual([]);
  });

  test("a symlink in a lock's place is not followed: its target is neither read as a holder nor removed", () => {
    const path = join(temp(), "a.lock");
    const target = join(dir!, "elsewhere");
    writeFileSync(target, `${process.pid}\n`);
    symlinkSync(target, path);
    const then = new Date(Date.now() - 2000);
    lutimesSync(path, then, then);
    const lock = tryLockFile(path, opts());
    expect(lock).not.toBeNull();
    expect(lstatSync(path).isSymbolicLink()).toBe(false);
    expect(readFileSync(target, "utf8")).toBe(`${process.pid}\n`);
    lock!.release();
  });

  test("a missing directory is made on request; otherwise its ENOENT reaches the caller", () => {
    const path = join(temp(), "sub", "a.lock");
    expect(() => tryLockFile(path, opts())).toThrow(expect.objectContaining({ code: "ENOENT" }));
    tryLockFile(path, opts({ createDir: true }))!.release();
    expect(readdirSync(join(dir!, "sub"))).toEqual([]);
  });

  test("without a pid the lock is left open for the caller to write", () => {
    const path = join(temp(), "a.lock");
    const lock = tryLockFile(path, opts({ pid: false, mode: 0o644 }))!;
    writeFileSync(lock.fd, "value\n");
    lock.close();
    expect(readFileSync(path, "utf8")).toBe("value\n");
    lock.release();
    expect(existsSync(path)).toBe(false);
  });
});
