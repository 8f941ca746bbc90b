/** What the user reads when something fails: one line saying what to do; a stack only when asked for. */
import { describe, expect, test } from "bun:test";
import { describeExpectedFailure, unexpectedFailure } from "../../src/errors.ts";

function systemError(code: string, path?: string): Error {
  return Object.assign(new Error(`${code}: something, open '${path}'`), { code, path });
}

describe("describeExpectedFailure", () => {
  test.each([
    [systemError("EROFS", "/repo/.git/aiflare"), "/repo/.git/aiflare is on a read-only file system"],
    [systemError("EACCES", "/repo/.git/objects/ab"), "/repo/.git/objects/ab is not writable by you (permission denied)"],
    [systemError("ENOSPC", "/repo/.git/objects/ab/tmp"), "the disk is full. Free some space and run the command again"],
    [systemError("EPERM"), "a file aiflare needs may not be changed"],
    [Object.assign(new Error("attempt to write a readonly database"), { name: "SQLiteError", code: "SQLITE_READONLY" }), "aiflare's index cannot be written (read-only)"],
    [Object.assign(new Error("database or disk is full"), { name: "SQLiteError", code: "SQLITE_FULL" }), "the disk is full"],
  ])("%p", (err, expected) => {
    const line = describeExpectedFailure(err)!;
    expect(line).toContain(expected);
    expect(line).not.toContain("\n");
  });

  test("anything else is not an expected failure", () => {
    expect(describeExpectedFailure(new TypeError("x is undefined"))).toBeUndefined();
    expect(describeExpectedFailure(systemError("EEXIST", "/x"))).toBeUndefined();
    expect(describeExpectedFailure("text")).toBeUndefined();
  });
});

describe("unexpectedFailure", () => {
  const bug = new TypeError("cannot read properties of undefined");
  test("one line naming the log file, no stack", () => {
    const line = unexpectedFailure(bug, { debug: false, logPath: "/repo/.context-capture/aiflare.log" });
    expect(line).toBe(
      "unexpected error: TypeError: cannot read properties of undefined (details in /repo/.context-capture/aiflare.log; AIFLARE_DEBUG=1 prints them)",
    );
  });
  test("outside a repository it points to AIFLARE_DEBUG", () => {
    expect(unexpectedFailure(bug, { debug: false })).toContain("(AIFLARE_DEBUG=1 prints the details)");
  });
  test("with AIFLARE_DEBUG=1 the stack", () => {
    expect(unexpectedFailure(bug, { debug: true })).toContain("    at ");
  });
});
