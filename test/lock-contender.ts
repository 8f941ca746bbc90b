/**
 * One contender of test/unit/lockfile.test.ts, run as its own process: each round it says it is ready, waits for the
 * round's start (opening the round's FIFO returns in every contender when the test opens its other end), takes one
 * lock in `dir` (`session`: a session's lock, `sync`: the sync lock, `ref`: a ref's lock) and appends to
 * `dir/marks` where its hold starts and ends.
 */
import { appendFileSync, closeSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withSessionLock } from "../src/core/session-log.ts";
import { acquireSyncLock } from "../src/core/sync/lock.ts";
import { updateRefLocked } from "../src/store/lock.ts";

const [kind, dir, roundsArg] = process.argv.slice(2) as [string, string, string];
const marks = join(dir, "marks");

function hold(round: number): void {
  appendFileSync(marks, `start ${round} ${process.pid}\n`);
  Bun.sleepSync(1);
  appendFileSync(marks, `end ${round} ${process.pid}\n`);
}

for (let round = 0; round < Number(roundsArg); round++) {
  writeFileSync(join(dir, `ready-${round}-${process.pid}`), "");
  closeSync(openSync(join(dir, `go-${round}`), "r"));
  if (kind === "session") {
    withSessionLock({ prompts: join(dir, "log") }, () => hold(round));
  } else if (kind === "sync") {
    const lock = await acquireSyncLock(join(dir, "sync.lock"), 60_000);
    try {
      hold(round);
    } finally {
      lock.release();
    }
  } else {
    await updateRefLocked(dir, "refs/heads/x", () => {
      hold(round);
      return null;
    }, { staleMs: 1000 });
  }
}
