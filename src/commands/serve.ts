import { defineCommand, type ArgDef } from "citty";
import { cwdArgs, jsonArgs, writeOut } from "./_shared.ts";

/** `--database` / `--data-dir`: which database the server and the admin commands use. */
const databaseArgs = {
  database: { type: "string", description: "postgres://… URL or SQLite file (default: AIFLARE_DATABASE_URL, else SQLite)", valueHint: "url" },
  "data-dir": { type: "string", description: "Directory of the default SQLite file (default: $XDG_DATA_HOME/aiflare)", valueHint: "dir" },
  // relative --database and --data-dir paths resolve from here
  ...cwdArgs,
} as const satisfies Record<string, ArgDef>;

type DbArgs = { database?: string; "data-dir"?: string; cwd?: string };

const dbOptions = (args: DbArgs) => ({ database: args.database, dataDir: args["data-dir"], cwd: args.cwd });

/** Opens the database the arguments name, runs `fn`, closes it. */
async function withStorage<T>(args: DbArgs, fn: (s: import("../server/storage.ts").Storage) => Promise<T>): Promise<T> {
  const { openStorage } = await import("../server/open.ts");
  const { storage } = await openStorage(dbOptions(args));
  try {
    return await fn(storage);
  } finally {
    await storage.close();
  }
}

const table = (rows: string[][]) => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n");
};

function printKey(project: { id: string; name: string }, key: string, keyId: string): Promise<void> {
  return writeOut(
    `Key ${keyId} for project "${project.name}" (${project.id}):\n\n  ${key}\n\n` +
      "It is shown only this once; the server keeps only its hash. Put it in the repository's aiflare.yml (git-ignored)\n" +
      "or in AIFLARE_API_KEY, with the server's URL:\n\n" +
      `  api_key: ${key}\n  endpoint: <this server's URL, https:// when it is on another machine>\n`,
  );
}

/** `--owner`: the person a key is issued to; the server records it with every entry the key sends. */
const ownerArgs = {
  owner: { type: "string", description: "The person the key is for: shown with every entry it sends, beside the author the client claims", valueHint: "name" },
} as const satisfies Record<string, ArgDef>;

const projectCreate = defineCommand({
  meta: { name: "create", description: "Create a project and print its first API key", examples: ["serve project create web-app --owner alice", "serve project create web-app --database postgres://aiflare@db/aiflare"] },
  args: { name: { type: "positional", required: true, description: "Project name", valueHint: "name" }, ...ownerArgs, ...databaseArgs, ...jsonArgs },
  async run({ args }) {
    const { createProject } = await import("../server/admin.ts");
    const r = await withStorage(args, (s) => createProject(s, String(args.name), args.owner ?? ""));
    if (args.json) await writeOut(`${JSON.stringify({ project: r.project, keyId: r.keyId, key: r.key }, null, 2)}\n`);
    else await printKey(r.project, r.key, r.keyId);
  },
});

const projectForge = defineCommand({
  meta: {
    name: "forge",
    description: "Link the dashboard's entries to their commits on the project's forge (a URL template with {sha}; none removes it)",
    examples: ["serve project forge web-app https://github.com/org/web-app/commit/{sha}", "serve project forge web-app none"],
  },
  args: {
    project: { type: "positional", required: true, description: "Project id or name", valueHint: "project" },
    url: { type: "positional", required: true, description: "The commit page's URL with {sha} for the hash, or none", valueHint: "url" },
    ...databaseArgs,
    ...jsonArgs,
  },
  async run({ args }) {
    const { setForgeUrl } = await import("../server/admin.ts");
    const r = await withStorage(args, (s) => setForgeUrl(s, String(args.project), String(args.url)));
    if (args.json) return writeOut(`${JSON.stringify(r, null, 2)}\n`);
    await writeOut(r.forgeUrl ? `Project "${r.project.name}" links commits to ${r.forgeUrl}\n` : `Project "${r.project.name}" links to no forge.\n`);
  },
});

const projectList = defineCommand({
  meta: { name: "list", description: "List the projects with their key and entry counts", examples: ["serve project list", "serve project list --json"] },
  args: { ...databaseArgs, ...jsonArgs },
  async run({ args }) {
    const { listProjects } = await import("../server/admin.ts");
    const projects = await withStorage(args, listProjects);
    if (args.json) return writeOut(`${JSON.stringify(projects, null, 2)}\n`);
    if (projects.length === 0) return writeOut("No projects yet. Create one with: aiflare serve project create <name>\n");
    const rows = [["ID", "NAME", "KEYS", "ENTRIES", "LAST ENTRY"], ...projects.map((p) => [p.id, p.name, String(p.keys), String(p.entries), p.lastEntryAt ?? "-"])];
    await writeOut(`${table(rows)}\n`);
  },
});

const keyCreate = defineCommand({
  meta: {
    name: "create",
    description: "Create another API key for a project (one per person or machine)",
    examples: ['serve key create web-app --owner "Alice Martin" --label "alice laptop"'],
  },
  args: {
    project: { type: "positional", required: true, description: "Project id or name", valueHint: "project" },
    label: { type: "string", description: "What the key is for (a machine, CI)", valueHint: "text" },
    ...ownerArgs,
    ...databaseArgs,
    ...jsonArgs,
  },
  async run({ args }) {
    const { createKey } = await import("../server/admin.ts");
    const r = await withStorage(args, (s) => createKey(s, String(args.project), args.label ?? "", args.owner ?? ""));
    if (args.json) await writeOut(`${JSON.stringify({ project: r.project, keyId: r.keyId, key: r.key }, null, 2)}\n`);
    else await printKey(r.project, r.key, r.keyId);
  },
});

const keyList = defineCommand({
  meta: { name: "list", description: "List API keys (prefix only), of one project or all", examples: ["serve key list", "serve key list web-app"] },
  args: { project: { type: "positional", required: false, description: "Project id or name", valueHint: "project" }, ...databaseArgs, ...jsonArgs },
  async run({ args }) {
    const { listKeys } = await import("../server/admin.ts");
    const keys = await withStorage(args, (s) => listKeys(s, args.project ? String(args.project) : undefined));
    if (args.json) return writeOut(`${JSON.stringify(keys, null, 2)}\n`);
    if (keys.length === 0) return writeOut("No keys.\n");
    const rows = [
      ["ID", "PROJECT", "KEY", "OWNER", "LABEL", "CREATED", "STATE"],
      ...keys.map((k) => [k.id, k.projectName, `${k.prefix}…`, k.owner || "-", k.label || "-", k.createdAt, k.revokedAt ? `revoked ${k.revokedAt}` : "active"]),
    ];
    await writeOut(`${table(rows)}\n`);
  },
});

const keyRevoke = defineCommand({
  meta: { name: "revoke", description: "Revoke an API key by its id or shown prefix; it stops working at once", examples: ["serve key revoke key_3f9a1c0b7d2e"] },
  args: { key: { type: "positional", required: true, description: "Key id or prefix", valueHint: "key" }, ...databaseArgs, ...jsonArgs },
  async run({ args }) {
    const { revokeKey } = await import("../server/admin.ts");
    const k = await withStorage(args, (s) => revokeKey(s, String(args.key)));
    await writeOut(args.json ? `${JSON.stringify(k, null, 2)}\n` : `Revoked key ${k.id} (${k.prefix}…) of project "${k.projectName}".\n`);
  },
});

const SUBCOMMANDS = ["project", "key"];

export default defineCommand({
  meta: {
    name: "serve",
    description: "Run the team server: the backend `sync` sends to, and the dashboard",
    examples: ["serve", "serve --host 0.0.0.0 --data-dir /srv/aiflare", "serve --database postgres://aiflare@db/aiflare", "serve project create web-app"],
  },
  args: {
    host: { type: "string", description: "Address to listen on", default: "127.0.0.1", valueHint: "host" },
    port: { type: "string", description: "Port to listen on", default: "4180", valueHint: "port" },
    "rate-limit": { type: "string", description: "Requests per second per key (0: no limit)", default: "20", valueHint: "n" },
    "trust-proxy": {
      type: "boolean",
      description: "Believe the proxy in front: X-Forwarded-For names the client, X-Forwarded-Host/-Proto the public URL (default: AIFLARE_TRUST_PROXY)",
    },
    ...databaseArgs,
  },
  subCommands: {
    project: defineCommand({
      meta: { name: "project", description: "Create and list projects, set a project's forge link", examples: ["serve project create web-app", "serve project list"] },
      subCommands: { create: projectCreate, list: projectList, forge: projectForge },
    }),
    key: defineCommand({ meta: { name: "key", description: "Create, list and revoke API keys", examples: ["serve key create web-app", "serve key revoke key_3f9a1c0b7d2e"] }, subCommands: { create: keyCreate, list: keyList, revoke: keyRevoke } }),
  },
  async run({ args, rawArgs }) {
    // citty runs this after a subcommand too
    if (rawArgs.some((a) => SUBCOMMANDS.includes(a))) return;
    const { AiflareError } = await import("../errors.ts");
    const port = Number(args.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new AiflareError("INVALID_ARGUMENT", `--port must be a port number, not "${args.port}".`);
    const rateLimit = Number(args["rate-limit"]);
    if (!Number.isFinite(rateLimit) || rateLimit < 0) throw new AiflareError("INVALID_ARGUMENT", `--rate-limit must be a number ≥ 0, not "${args["rate-limit"]}".`);
    const { openStorage } = await import("../server/open.ts");
    const { serveUntilSignal } = await import("../server/serve.ts");
    const env = process.env.AIFLARE_TRUST_PROXY;
    const trustProxy = args["trust-proxy"] ?? (env !== undefined && env !== "" && env !== "0" && env.toLowerCase() !== "false");
    const { storage, where } = await openStorage(dbOptions(args));
    await serveUntilSignal({ host: args.host, port, rateLimit, trustProxy, storage, where });
  },
});
