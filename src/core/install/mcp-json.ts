/**
 * The project's `.mcp.json` (Claude Code's project MCP servers): `install --mcp` adds the `aiflare` server
 * (`aiflare mcp` over stdio), keeping every other server and key; uninstall takes only that server out.
 */
import { join } from "node:path";
import { AiflareError } from "../../errors.ts";
import { EMPTY_JSON, type FileRule } from "./files.ts";

/** Repo-relative path of the project's MCP servers file. */
export const MCP_JSON = ".mcp.json";
/** The name aiflare's server has in it. */
export const MCP_SERVER_NAME = "aiflare";

type JsonObject = Record<string, unknown>;
const isObject = (x: unknown): x is JsonObject => typeof x === "object" && x !== null && !Array.isArray(x);

function parse(text: string | null): JsonObject {
  if (text === null || text.trim() === "") return {};
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new AiflareError("CONFIG", `${MCP_JSON} is not valid JSON (${(err as Error).message}); nothing was changed.`, { cause: err });
  }
  if (!isObject(doc) || (doc.mcpServers !== undefined && !isObject(doc.mcpServers))) {
    throw new AiflareError("CONFIG", `${MCP_JSON} must hold an object with an "mcpServers" object; nothing was changed.`);
  }
  return doc;
}

const indentOf = (text: string | null) => (text ? /^([ \t]+)"/m.exec(text)?.[1] : undefined) ?? "  ";
const serialize = (doc: JsonObject, before: string | null) => `${JSON.stringify(doc, null, indentOf(before))}\n`;

/** The server entry for the binary at `bin` (an absolute path; MCP clients run it without a shell). */
export function mcpServerEntry(bin: string): JsonObject {
  return { type: "stdio", command: bin, args: ["mcp"] };
}

/** True when `server` is an aiflare MCP server entry. */
function isOurs(server: unknown): boolean {
  return isObject(server) && typeof server.command === "string" && /aiflare/.test(server.command) && Array.isArray(server.args) && server.args[0] === "mcp";
}

/** Reads whether `.mcp.json` text registers aiflare's server (invalid JSON counts as not). */
export function hasAiflareMcp(text: string): boolean {
  try {
    return isOurs((parse(text).mcpServers as JsonObject | undefined)?.[MCP_SERVER_NAME]);
  } catch {
    return false;
  }
}

/** The `.mcp.json` rule for install (`--mcp`) and uninstall. */
export function mcpRule(root: string, bin: string): FileRule {
  return {
    path: join(root, MCP_JSON),
    label: "MCP server aiflare",
    apply(before) {
      const doc = parse(before);
      const servers = isObject(doc.mcpServers) ? doc.mcpServers : {};
      const entry = mcpServerEntry(bin);
      if (before !== null && JSON.stringify(servers[MCP_SERVER_NAME]) === JSON.stringify(entry)) return before;
      const existing = servers[MCP_SERVER_NAME];
      if (existing !== undefined && !isOurs(existing)) {
        throw new AiflareError("CONFIG", `${MCP_JSON} already has a server named "${MCP_SERVER_NAME}" that is not aiflare's; nothing was changed.`);
      }
      return serialize({ ...doc, mcpServers: { ...servers, [MCP_SERVER_NAME]: entry } }, before);
    },
    remove(current) {
      const doc = parse(current);
      if (!isObject(doc.mcpServers) || !isOurs(doc.mcpServers[MCP_SERVER_NAME])) return current;
      const { [MCP_SERVER_NAME]: _, ...rest } = doc.mcpServers;
      const next: JsonObject = { ...doc, mcpServers: rest };
      if (Object.keys(rest).length === 0) delete next.mcpServers;
      return Object.keys(next).length === 0 ? null : serialize(next, current);
    },
    hasOurs: hasAiflareMcp,
    empty: EMPTY_JSON,
  };
}
