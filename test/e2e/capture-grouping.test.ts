import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { FIXTURES, runBin, tempRepo, type TempRepo, untimed } from "../helpers.ts";
import { agentCommit, capture, fsckClean, session, showEntry, storedTranscript } from "./capture-support.ts";

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

/** The recorded AskUserQuestion call the session driver replays. */
const ASK = (
  JSON.parse(
    readFileSync(join(FIXTURES, "CoorpAcademy__serverless-plugins", "logs", "abc7156b-6420-4373-a150-9b2eecad6805", "post_tool_use.json"), "utf8"),
  ) as { tool_name: string; tool_input: { questions: { question: string }[] }; tool_response: { answers: Record<string, string> } }[]
).find((p) => p.tool_name === "AskUserQuestion")!;

function roles(snippet: string): string[] {
  return snippet.split("\n").filter(Boolean).map((l) => JSON.parse(l).role);
}

describe("grouping examples of SPEC §5, end to end", () => {
  test("(A) one request, three commits: A is the root, B and C point to A", async () => {
    repo = tempRepo();
    const s = session(repo, "sess-A");
    await s.prompt("Please implement A, B and C");
    const hashes: string[] = [];
    for (const name of ["A", "B", "C"]) {
      const c = agentCommit(repo, `feat: implement ${name}`, { [`${name}.txt`]: name });
      const out = await s.bash(`git add -A && git commit -m "feat: implement ${name}"`, c.stdout);
      expect(out.code).toBe(0);
      const json = JSON.parse(out.stdout);
      expect(json.hookSpecificOutput.hookEventName).toBe("PostToolUse");
      expect(json.hookSpecificOutput.additionalContext).toContain(c.hash);
      expect(json.hookSpecificOutput.additionalContext).toContain("context-capture");
      hashes.push(c.hash);
    }
    const [a, b, c] = hashes.map((h) => showEntry(repo!, h)!);
    expect(a!.groupRootId).toBeNull();
    expect(b!.groupRootId).toBe(hashes[0]);
    expect(c!.groupRootId).toBe(hashes[0]);
    expect(roles(a!.conversationSnippet)).toEqual(["user"]);
    expect(b!.conversationSnippet).toBe("");
    expect(a!.title).toBe("feat: implement A");
    expect(a!.changedFiles).toEqual(["A.txt"]);
    expect(a!.branch).toBe("main");
    expect(a!.agentType).toBe("CLAUDE_CODE");
    expect(a!.claudeSessionId).toBe("sess-A");
    expect(a!.intent).toBe("");
    // the agent's summary completes the entries and keeps the group
    const r = await capture(repo, ["--commit-hash", hashes[1]!, "--title", "B", "--intent", "why B", "--tag", "FEATURE"], {
      CLAUDE_SESSION_ID: "sess-A",
    });
    expect(r.code).toBe(0);
    const b2 = showEntry(repo, hashes[1]!)!;
    expect(b2.intent).toBe("why B");
    expect(b2.groupRootId).toBe(hashes[0]);
    expect(fsckClean(repo)).toBe(true);
  });

  test("(B) AskUserQuestion answered between two commits: part 2 points to part 1", async () => {
    repo = tempRepo();
    const s = session(repo, "sess-B");
    await s.prompt("Build the export in two parts");
    const p1 = agentCommit(repo, "feat: export part 1", { "p1.txt": "1" });
    await s.bash(`git commit -am "feat: export part 1"`, p1.stdout);
    await s.ask();
    expect(existsSync(join(repo.root, ".context-capture", ".pending-question-sess-B"))).toBe(true);
    await s.prompt("CSV, please");
    const p2 = agentCommit(repo, "feat: export part 2", { "p2.txt": "2" });
    await s.bash(`git commit -am "feat: export part 2"`, p2.stdout);
    const e1 = showEntry(repo, p1.hash)!;
    const e2 = showEntry(repo, p2.hash)!;
    expect(e1.groupRootId).toBeNull();
    expect(e1.continuation).toBe(false);
    expect(e2.groupRootId).toBe(p1.hash);
    expect(e2.continuation).toBe(true);
    // each question of the AskUserQuestion call and the user's answer to it, recorded as such, before the next prompt
    const lines = untimed<{ role: string; kind?: string; content?: string }>(e2.conversationSnippet.split("\n").filter(Boolean).map((l: string) => JSON.parse(l)));
    const asked = ASK.tool_input.questions.map((q) => q.question);
    expect(asked).toHaveLength(4);
    expect(lines).toEqual([
      ...asked.flatMap((q) => [
        { role: "assistant", kind: "question", content: q },
        { role: "user", kind: "answer", content: ASK.tool_response.answers[q] },
      ]),
      { role: "user", content: "CSV, please" },
    ]);
    expect(lines[1]!.content).toBe("~9 grouped PRs (Recommended)");
    // history show labels them as what they are
    const show = (await runBin(["history", "show", p2.hash], { cwd: repo.root, env: repo.env })).stdout;
    expect(show.match(/Agent's question/g)).toHaveLength(4);
    expect(show.match(/^ {2}Answer$/gm)).toHaveLength(4);
    expect(show).toContain(`Agent's question\n    ${asked[0]}\n  Answer\n    ~9 grouped PRs (Recommended)`);
    // the marker is consumed by the capture
    expect(existsSync(join(repo.root, ".context-capture", ".pending-question-sess-B"))).toBe(false);
  });

  test("(C) a new request typed in plain text starts a new root", async () => {
    repo = tempRepo();
    const s = session(repo, "sess-C");
    await s.prompt("Fix the login bug");
    const c1 = agentCommit(repo, "fix: login", { "login.txt": "ok" });
    await s.bash(`git commit -am "fix: login"`, c1.stdout);
    await s.stop("Fixed the login bug.");
    await s.prompt("Now add a logout button");
    const c2 = agentCommit(repo, "feat: logout button", { "logout.txt": "ok" });
    await s.bash(`git commit -am "feat: logout button"`, c2.stdout);
    const e1 = showEntry(repo, c1.hash)!;
    const e2 = showEntry(repo, c2.hash)!;
    expect(e1.groupRootId).toBeNull();
    expect(e1.tag).toBe("BUGFIX");
    expect(e2.groupRootId).toBeNull();
    expect(e2.continuation).toBe(false);
    expect(e2.tag).toBe("FEATURE");
    expect(roles(e2.conversationSnippet)).toEqual(["assistant", "user"]);
  });

  test("two commits before the agent summarises keep their own deltas", async () => {
    repo = tempRepo();
    const s = session(repo, "sess-D");
    await s.prompt("first thing");
    const c1 = agentCommit(repo, "feat: one", { "1.txt": "1" });
    await s.bash(`git commit -q -am one`);
    await s.stop("did one");
    await s.prompt("second thing");
    const c2 = agentCommit(repo, "feat: two", { "2.txt": "2" });
    await s.bash(`git commit -q -am two`);
    expect((await capture(repo, ["--commit-hash", c1.hash, "--intent", "one"], { CLAUDE_SESSION_ID: "sess-D" })).code).toBe(0);
    expect((await capture(repo, ["--intent", "two"], { CLAUDE_SESSION_ID: "sess-D" })).code).toBe(0);
    const e1 = showEntry(repo, c1.hash)!;
    const e2 = showEntry(repo, c2.hash)!;
    expect(e1.conversationSnippet).toContain("first thing");
    expect(e1.conversationSnippet).not.toContain("second thing");
    expect(e2.conversationSnippet).toContain("second thing");
    expect(e2.conversationSnippet).not.toContain("first thing");
    expect([e1.intent, e2.intent]).toEqual(["one", "two"]);
  });

  test("session transcripts are stored on aiflare/sessions/v1 at commits and at session end", async () => {
    repo = tempRepo();
    const s = session(repo, "sess-E");
    await s.prompt("hello from /home/alice/project");
    const c1 = agentCommit(repo, "feat: x", { "x.txt": "x" });
    await s.bash("git commit -am x", c1.stdout);
    const mid = storedTranscript(repo, "sess-E");
    expect(mid).toContain("hello from");
    expect(mid).not.toContain("/home/alice");
    await s.stop("all done");
    const end = await s.end();
    expect(end.code).toBe(0);
    const final = storedTranscript(repo, "sess-E");
    expect(final).toContain("all done");
    expect(final.indexOf("hello from")).toBeLessThan(final.indexOf("all done"));
    // the reply no commit took yet stays for the next commit of a resumed session
    expect(readFileSync(join(repo.root, ".context-capture", ".claude-prompts-sess-E"), "utf8")).toContain("all done");
    expect(readFileSync(join(repo.root, ".context-capture", ".gitignore"), "utf8")).toBe("*\n");
  });
});
