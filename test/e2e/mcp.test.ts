/**
 * `aiflare mcp` answers a real MCP client session: the SDK's Client over stdio spawns the compiled binary in a
 * temporary repository with a recorded history, lists the tools and calls each of them.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { binary, tempRepo, type TempRepo } from "../helpers.ts";
import { convo, makeEntry, writeTimeline } from "../timeline-fixture.ts";

const repos: TempRepo[] = [];
afterEach(() => {
  for (const r of repos.splice(0)) r.cleanup();
});

type Text = { content: { type: string; text: string }[]; isError?: boolean };

async function session(r: TempRepo): Promise<Client> {
  const transport = new StdioClientTransport({ command: binary(), args: ["mcp"], cwd: r.root, env: r.env, stderr: "pipe" });
  const client = new Client({ name: "aiflare-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

const json = (res: unknown) => JSON.parse((res as Text).content[0]!.text);

describe("aiflare mcp", () => {
  test("lists why, search_history and show_entry, and answers each from the repository's record", async () => {
    const r = tempRepo();
    repos.push(r);
    const first = r.commit("Add retry", { "src/retry.ts": "retry();\n" });
    const second = r.commit("Document retry", { "docs/retry.md": "# Retry\n" });
    writeTimeline(r.root, r.env, {
      entries: [
        makeEntry({
          commitHash: first,
          title: "Retry uploads after a timeout",
          intent: "Uploads failed on slow links.",
          alternatives: "- a client-side queue: loses uploads",
          tag: "BUGFIX",
          changedFiles: ["src/retry.ts"],
          conversationSnippet: convo(["user", "please make uploads survive timeouts"]),
          capturedAt: "2026-11-20T10:00:00.000Z",
        }),
        makeEntry({ commitHash: second, title: "Document the retry", tag: "DOCS", changedFiles: ["docs/retry.md"], capturedAt: "2026-11-21T10:00:00.000Z" }),
      ],
    });
    const client = await session(r);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name).sort()).toEqual(["search_history", "show_entry", "why"]);
      for (const t of tools.tools) expect(t.annotations?.readOnlyHint).toBe(true);
      const whyTool = tools.tools.find((t) => t.name === "why")!;
      expect(Object.keys(whyTool.inputSchema.properties ?? {}).sort()).toEqual(["file", "limit", "lines"]);

      const why = json(await client.callTool({ name: "why", arguments: { file: "src/retry.ts" } }));
      expect(why).toMatchObject({ file: "src/retry.ts", lines: null, total: 1 });
      expect(why.commits[0]).toMatchObject({ commitHash: first, subject: "Add retry", entry: { title: "Retry uploads after a timeout", alternatives: "- a client-side queue: loses uploads" } });
      expect(why.commits[0].entry.conversationSnippet).toBeUndefined();
      const lines = json(await client.callTool({ name: "why", arguments: { file: "src/retry.ts", lines: "1" } }));
      expect(lines.lines).toEqual({ start: 1, end: 1 });

      const found = json(await client.callTool({ name: "search_history", arguments: { text: "timeout" } }));
      expect(found.entries.map((e: { commitHash: string }) => e.commitHash)).toEqual([first]);
      const docs = json(await client.callTool({ name: "search_history", arguments: { tag: "DOCS" } }));
      expect(docs.entries.map((e: { title: string }) => e.title)).toEqual(["Document the retry"]);
      const all = json(await client.callTool({ name: "search_history", arguments: {} }));
      expect(all.entries).toHaveLength(2);

      const entry = json(await client.callTool({ name: "show_entry", arguments: { commit: first.slice(0, 8) } }));
      expect(entry).toMatchObject({ commitHash: first, tag: "BUGFIX" });
      expect(entry.conversationSnippet).toContain("survive timeouts");

      const missing = (await client.callTool({ name: "show_entry", arguments: { commit: "0000000" } })) as Text;
      expect(missing.isError).toBe(true);
      expect(missing.content[0]!.text).toContain("0000000");
      const badRange = (await client.callTool({ name: "why", arguments: { file: "src/retry.ts", lines: "a-b" } })) as Text;
      expect(badRange.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  test("a 30 MB request line gets a JSON-RPC error and the server keeps serving; so do lines that are not JSON-RPC", async () => {
    const r = tempRepo();
    repos.push(r);
    const proc = Bun.spawn([binary(), "mcp"], { cwd: r.root, env: r.env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const lines = stdoutLines(proc.stdout);
    const send = async (text: string) => {
      proc.stdin.write(`${text}\n`);
      await proc.stdin.flush();
    };
    try {
      await send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }));
      expect((await lines.next()).id).toBe(1);
      await send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
      // a well-formed tools/call whose argument is 30 MB
      await send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "why", arguments: { file: "x".repeat(30 * 1024 * 1024) } } }));
      const tooLong = await lines.next();
      expect(tooLong).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
      expect(tooLong.error.message).toContain("more than the");
      await send("not json");
      expect(await lines.next()).toMatchObject({ id: null, error: { code: -32700 } });
      await send(JSON.stringify({ id: 3, method: 7 }));
      expect(await lines.next()).toMatchObject({ id: 3, error: { code: -32600 } });
      await send(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/list" }));
      const listed = await lines.next();
      expect(listed.id).toBe(4);
      expect(listed.result.tools.map((t: { name: string }) => t.name).sort()).toEqual(["search_history", "show_entry", "why"]);
    } finally {
      proc.stdin.end();
    }
    // closing stdin ends the server
    expect(await proc.exited).toBe(0);
  }, 30_000);
});

/** The JSON messages a process writes, one per line, read as they come. */
function stdoutLines(stream: ReadableStream<Uint8Array>): { next(): Promise<Record<string, any>> } {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  return {
    async next() {
      for (;;) {
        const nl = buffered.indexOf("\n");
        if (nl >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          return JSON.parse(line);
        }
        const { value, done } = await reader.read();
        if (done) throw new Error(`stdout ended; left: ${buffered}`);
        buffered += decoder.decode(value, { stream: true });
      }
    },
  };
}
