/**
 * `aiflare import` of Gemini CLI chats (`~/.gemini/tmp/<project>/chats/session-*.jsonl`), written in the shape
 * Gemini CLI 0.61.0 writes them: a header line, `$set` updates, message lines repeated under their id.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runBin, tempRepo, type TempRepo } from "../helpers.ts";
import { importJson, records, showEntry, storedTranscript } from "./capture-support.ts";

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.cleanup();
  repo = undefined;
});

describe("import of Gemini CLI chats", () => {
  test("a chat of the repository's project folder becomes a GEMINI_CLI entry with its prompt and reply", async () => {
    const r = (repo = tempRepo());
    const id = "6e805953-5432-42ef-aca2-228f40eac907";
    const t0 = Date.now() - 60_000;
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    const command = "echo a > a.txt && git add a.txt && git commit -q -m 'Add a'";
    const when = at(3);
    const made = Bun.spawnSync(["bash", "-c", command], { cwd: r.root, env: { ...r.env, GIT_COMMITTER_DATE: when, GIT_AUTHOR_DATE: when } });
    expect(made.exitCode).toBe(0);
    const hash = r.git("rev-parse", "HEAD");
    const reply = { id: "m3", timestamp: at(2), type: "gemini", content: "", model: "gemini-2.5-flash" };
    const call = {
      id: "run_shell_command_1",
      name: "run_shell_command",
      args: { command, description: "Run a command" },
      result: [{ functionResponse: { id: "run_shell_command_1", name: "run_shell_command", response: { output: "Output: (empty)" } } }],
      status: "success",
      timestamp: at(4),
    };
    const lines = [
      { sessionId: id, projectHash: "f794", startTime: at(0), lastUpdated: at(0), kind: "main" },
      { $set: { messages: [{ id: "m1", timestamp: at(0), type: "user", content: [{ text: "<session_context>\nThis is the Gemini CLI." }] }] } },
      { id: "m2", timestamp: at(1), type: "user", content: [{ text: "Add a please" }] },
      { $set: { lastUpdated: at(1) } },
      reply,
      { ...reply, toolCalls: [call] },
      { id: "m4", timestamp: at(5), type: "user", content: [{ functionResponse: { id: "run_shell_command_1", name: "run_shell_command", response: { output: "Output: (empty)" } } }] },
      { id: "m5", timestamp: at(6), type: "gemini", content: "Added a.", model: "gemini-2.5-flash" },
    ];
    const project = join(r.home, ".gemini", "tmp", "repo");
    mkdirSync(join(project, "chats"), { recursive: true });
    writeFileSync(join(project, ".project_root"), r.root);
    writeFileSync(join(project, "chats", "session-2026-12-01T16-52-6e805953.jsonl"), lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    // another project's chats are not this repository's
    mkdirSync(join(r.home, ".gemini", "tmp", "other", "chats"), { recursive: true });
    writeFileSync(join(r.home, ".gemini", "tmp", "other", ".project_root"), join(r.dir, "elsewhere"));
    writeFileSync(join(r.home, ".gemini", "tmp", "other", "chats", "session-x.jsonl"), JSON.stringify(lines[0]) + "\n");

    expect((await importJson(r, ["--agent", "codex"])).transcripts).toBe(0);
    const summary = await importJson(r, ["--agent", "gemini"]);
    expect(summary.transcripts).toBe(1);
    expect(summary.imported).toBe(1);
    const entry = showEntry(r, hash)!;
    expect(entry.agentType).toBe("GEMINI_CLI");
    expect(entry.claudeSessionId).toBe(id);
    expect(entry.summaryStatus).toBe("imported");
    expect(records(entry.conversationSnippet)).toEqual([{ role: "user", content: "Add a please" }]);
    expect(records(storedTranscript(r, id)).at(-1)).toEqual({ role: "assistant", content: "Added a." });
    // again: nothing new
    expect((await importJson(r, [])).imported).toBe(0);
  });
});
