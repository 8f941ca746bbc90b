/**
 * GitHub Copilot CLI itself (the npm package at the pinned version) runs `copilot -p` sessions in a test repository
 * with aiflare installed, against a scripted Chat Completions API on 127.0.0.1: its folder trust, hook file,
 * payloads, the reply read from its events file, the shell's session variable, and Claude Code's hooks it also runs.
 */
import { afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { binary, runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { fsckClean, importReproduces, records, showEntry, storedTranscript, timelinePaths } from "../e2e/capture-support.ts";
import { copilotEnv, copilotRun, trustFolder } from "./copilot-support.ts";
import { ensureAgent } from "./install.ts";
import { chatCompletionsServer, type ModelServer, type Step } from "./model-server.ts";

setDefaultTimeout(240_000);

let cleanups: (() => void)[] = [];
beforeAll(() => {
  binary();
  ensureAgent("copilot");
});
afterEach(() => {
  for (const c of cleanups.reverse()) c();
  cleanups = [];
});

const shell = (command: string): Step => ({ tool: "bash", input: { command, description: "Run a command" } });

function setup(script: Step[]): { repo: TempRepo; server: ModelServer; env: Record<string, string> } {
  const repo = tempRepo();
  const server = chatCompletionsServer(script, "bash");
  cleanups.push(() => repo.cleanup(), () => server.stop());
  return { repo, server, env: copilotEnv(repo, server) };
}

const aiflare = (repo: TempRepo, env: Record<string, string>, ...args: string[]) => runBin(args, { cwd: repo.root, env, timeoutMs: 60_000 });

describe("GitHub Copilot CLI, the real client", () => {
  test("trust, then requests recorded as Copilot's: grouping, the reply, the why from its shell, Claude's hooks not twice", async () => {
    const { repo, server, env } = setup([
      // the untrusted run: Copilot runs the session and none of the repository's hooks
      shell("echo u > u.txt && git add u.txt && git commit -q -m 'feat: u'"),
      { text: "Committed u." },
      // request one: two commits, a reply, then the Stop reminder comes back and the agent writes one summary
      shell("printf 'export const add = (a, b) => a + b;\\n' > add.ts && git add add.ts && git commit -q -m 'Add add helper'"),
      shell("printf 'export const sub = (a, b) => a - b;\\n' > sub.ts && git add sub.ts && git commit -q -m 'Add sub helper'"),
      { text: "Committed add and sub." },
      shell(`${binary()} capture --title 'Add sub' --intent 'Why sub: the calculator needs it.' --diff-summary '- sub.ts' --tag FEATURE`),
      { text: "Summary of sub written." },
      // request two, in the same session resumed
      shell("echo '# math' > MATH.md && git add MATH.md && git commit -q -m 'Document helpers'"),
      { text: "Documented them." },
      { text: "I will summarise later." },
    ]);
    // Claude Code's hooks as well: Copilot runs them too, and they must not record the session a second time
    expect((await aiflare(repo, env, "install")).code).toBe(0);
    const installed = await aiflare(repo, env, "install", "--agent", "copilot");
    expect(installed.code).toBe(0);
    expect(installed.stdout).toContain("trust the folder");
    const hooks = JSON.parse(readFileSync(join(repo.root, ".github/hooks/aiflare.json"), "utf8"));
    expect(hooks.version).toBe(1);
    expect(hooks.hooks.agentStop[0].bash).toContain("hook stop --agent copilot");

    // not trusted: the hooks are skipped without a word, and doctor says so and how to trust
    const untrusted = await copilotRun(repo, env, "Add u.");
    expect(untrusted.code).toBe(0);
    expect(repo.git("log", "-1", "--format=%s")).toBe("feat: u");
    expect(timelinePaths(repo)).toEqual([]);
    const before = await aiflare(repo, env, "doctor");
    expect(before.code).not.toBe(0);
    expect(before.stdout).toContain("Copilot CLI skips the hooks of .github/hooks/aiflare.json");
    expect(before.stdout).toContain("trust the folder");

    trustFolder(repo);
    const after = await aiflare(repo, env, "doctor");
    expect(after.stdout).toContain("Copilot CLI trusts this folder");
    expect(after.stdout).toContain("Copilot CLI hooks in .github/hooks/aiflare.json");

    const one = await copilotRun(repo, env, "Add math helpers (request one)");
    expect(one.code).toBe(0);
    const [sub, add] = repo.git("log", "-2", "--format=%H").split("\n");
    const addEntry = showEntry(repo, add!)!;
    const subEntry = showEntry(repo, sub!)!;
    expect(addEntry.agentType).toBe("COPILOT_CLI");
    expect(subEntry.agentType).toBe("COPILOT_CLI");
    expect(addEntry.claudeSessionId).toBe(one.sessionId!);
    expect(addEntry.groupRootId).toBeNull();
    expect(subEntry.groupRootId).toBe(add);
    expect(records(addEntry.conversationSnippet)).toEqual([{ role: "user", content: "Add math helpers (request one)" }]);
    // the summary written through `aiflare capture`, which found the session in COPILOT_AGENT_SESSION_ID
    expect(subEntry.intent).toBe("Why sub: the calculator needs it.");
    expect(addEntry.summaryStatus).toBe("pending");
    // what reached the model: the capture context after the commits, and the Stop reminder as the next prompt
    const seen = server.seen();
    expect(seen).toContain("aiflare recorded commit");
    expect(seen).toContain("still have no summary");

    const two = await copilotRun(repo, env, "Now document them (request two)", true);
    expect(two.code).toBe(0);
    expect(two.sessionId).toBe(one.sessionId);
    const docs = repo.git("rev-parse", "HEAD");
    const docsEntry = showEntry(repo, docs)!;
    expect(docsEntry.agentType).toBe("COPILOT_CLI");
    expect(docsEntry.groupRootId).toBeNull();
    // the reminder Copilot handed back as a prompt is not the user's request
    const docLines = records(docsEntry.conversationSnippet);
    expect(docLines.filter((l) => l.role === "user").map((l) => l.content)).toEqual(["Now document them (request two)"]);

    // the session as stored: prompts and the replies read from Copilot's events file, once each
    const stored = records(storedTranscript(repo, one.sessionId!));
    expect(stored.filter((l) => l.role === "user").map((l) => l.content)).toEqual(["Add math helpers (request one)", "Now document them (request two)"]);
    // every reply, once: one not yet in Copilot's events file at agentStop is read at the session's next hook.
    // Known gap (README "GitHub Copilot CLI"): in about one run of three on a busy machine, the reply of the turn whose
    // Stop hands commits back is found neither then nor later; every other reply is always there.
    const replies = stored.filter((l) => l.role === "assistant").map((l) => l.content);
    const expected = ["Committed add and sub.", "Summary of sub written.", "Documented them.", "I will summarise later."];
    expect(replies).toEqual(replies.length === expected.length ? expected : expected.slice(1));
    // Claude Code's hooks ran too and left nothing
    expect(readdirSync(join(repo.root, ".context-capture")).some((n) => n.startsWith(".claude-"))).toBe(false);
    expect(timelinePaths(repo).length).toBe(3);

    const list = await aiflare(repo, env, "history", "list");
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("Copilot CLI");
    expect(list.stdout).toContain("Add sub");
    expect(fsckClean(repo)).toBe(true);

    // import reads the same sessions back from Copilot's own store (~/.copilot/session-state/<id>/events.jsonl):
    // at first every recorded commit is known, and the untrusted run's commit is the one it adds
    const u = repo.git("rev-parse", "HEAD~3");
    const first = JSON.parse((await aiflare(repo, env, "import", "--json", "--agent", "copilot")).stdout);
    expect(first.alreadyRecorded).toBe(3);
    expect(first.imported).toBe(1);
    expect(showEntry(repo, u)!.agentType).toBe("COPILOT_CLI");
    // with the timeline gone, import alone gives the entries the hooks wrote: the same sessions, groups and prompts
    await importReproduces(repo, env, [add!, sub!, docs], 4);

    // uninstall takes out exactly what install wrote, a hook file of the user's own stays
    writeFileSync(join(repo.root, ".github/hooks/team.json"), '{"version":1,"hooks":{"sessionEnd":[{"type":"command","bash":"true"}]}}\n');
    expect((await aiflare(repo, env, "uninstall")).code).toBe(0);
    expect(existsSync(join(repo.root, ".github/hooks/aiflare.json"))).toBe(false);
    expect(readFileSync(join(repo.root, ".github/hooks/team.json"), "utf8")).toContain('"bash":"true"');
  });
});
