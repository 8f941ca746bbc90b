/** Every `aiflare hook …` call exits 0 unless pre-push deliberately refuses: git's wrapper reads exit 1 as a refusal. */
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runBin, tempRepo, type TempRepo } from "../helpers.ts";

const repos: TempRepo[] = [];
afterAll(() => {
  for (const r of repos) r.cleanup();
});
function repo(): TempRepo {
  const r = tempRepo();
  repos.push(r);
  return r;
}

const PAYLOAD = JSON.stringify({ session_id: "s1", prompt: "hello" });

describe("hooks exit 0 on arguments they cannot use", () => {
  const cases: [string, string[]][] = [
    ["an event this version does not know", ["hook", "pre-compact"]],
    ["an agent this version does not know", ["hook", "user-prompt-submit", "--agent", "some-future-agent"]],
    ["no event at all", ["hook"]],
  ];
  for (const [name, args] of cases) {
    test(name, async () => {
      const r = repo();
      const res = await runBin(args, { cwd: r.root, env: r.env, stdin: PAYLOAD });
      expect(res.code).toBe(0);
      expect(res.stdout).toBe("");
      expect(res.stderr).toContain(`aiflare: ${args.slice(0, 2).join(" ")} failed`);
      // nothing recorded; the problem is in the log file, for whoever wonders why a session left no trace
      const dir = join(r.root, ".context-capture");
      expect(readdirSync(dir).filter((n) => n !== ".gitignore")).toEqual(["aiflare.log"]);
      expect(readFileSync(join(dir, "aiflare.log"), "utf8")).toContain(`${args.slice(0, 2).join(" ")} failed`);
    });
  }

  test("pre-push still refuses with exit 1, and only then", async () => {
    const r = repo();
    const head = r.git("rev-parse", "HEAD");
    r.git("update-ref", "refs/heads/aiflare/timeline/v1", head);
    const line = `refs/heads/aiflare/timeline/v1 ${head} refs/heads/aiflare/timeline/v1 ${"0".repeat(40)}\n`;
    const refused = await runBin(["hook", "pre-push", "origin", "/nowhere"], { cwd: r.root, env: r.env, stdin: line });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("push refused");
    const next = r.commit("work");
    const other = `refs/heads/main ${next} refs/heads/main ${head}\n`;
    const allowed = await runBin(["hook", "pre-push", "origin", "/nowhere"], { cwd: r.root, env: r.env, stdin: other });
    expect(allowed.code).toBe(0);
  });

  test("an unknown command outside hook still fails, with the usage exit code 2", async () => {
    const r = repo();
    const res = await runBin(["hookx"], { cwd: r.root, env: r.env });
    expect(res.code).toBe(2);
  });
});
