/**
 * The conversation hooks' usual paths run no regular expression (src/README.md, hot paths): the first one a process
 * runs brings in the engine's regexp compiler, which costs a hook more than its checks. JavaScriptCore names every
 * pattern it compiles when asked to (BUN_JSC_dumpCompiledRegExpPatterns); a hook that logs a warning compiles some,
 * which shows the option is heard.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { runBin, tempRepo, type TempRepo } from "../helpers.ts";

const repos: TempRepo[] = [];
afterAll(() => {
  for (const r of repos) r.cleanup();
});

const COMPILED = "RegExp pattern for";

describe("the conversation hooks compile no regular expression", () => {
  test("session-start, user-prompt-submit, stop and session-end, in a repository and in a linked worktree", async () => {
    const r = tempRepo();
    repos.push(r);
    const wt = join(r.dir, "wt");
    r.git("worktree", "add", "-q", "-b", "feature", wt);
    const env = { ...r.env, BUN_JSC_dumpCompiledRegExpPatterns: "1", AIFLARE_NO_CAPTURE_WORKER: "1" };
    for (const root of [r.root, wt]) {
      const payloads: [string, Record<string, unknown>][] = [
        ["session-start", { source: "startup", model: "claude-opus-4-1" }],
        ["user-prompt-submit", { prompt: "make the change" }],
        ["stop", { last_assistant_message: "done", stop_hook_active: false }],
        ["session-end", { reason: "exit" }],
      ];
      for (const [event, payload] of payloads) {
        const res = await runBin(["hook", event], { cwd: root, env, stdin: JSON.stringify({ session_id: "s-1", cwd: root, ...payload }) });
        expect(res.code).toBe(0);
        expect({ event, root, compiled: res.stderr.includes(COMPILED) }).toEqual({ event, root, compiled: false });
      }
    }
    // the same hook warning about an unusable session id compiles the log line's patterns: the option is heard
    const warned = await runBin(["hook", "user-prompt-submit"], { cwd: r.root, env, stdin: JSON.stringify({ session_id: "no such id!", prompt: "x" }) });
    expect(warned.stderr).toContain(COMPILED);
  });
});
