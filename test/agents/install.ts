/**
 * The real agents the tests drive, installed from npm at the versions pinned in versions.json (or the newest
 * published ones when AIFLARE_AGENTS=latest) into test/agents/.install/, outside the project's own dependencies.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { captureSettled } from "../helpers.ts";

export type AgentName = "claude" | "codex" | "qwen" | "gemini" | "copilot" | "opencode";
interface Pin {
  package: string;
  version: string;
  bin: string;
}

const HERE = import.meta.dir;
export const PINS = JSON.parse(readFileSync(join(HERE, "versions.json"), "utf8")) as Record<AgentName, Pin>;

/** Which set of versions this run uses: the pinned ones, or `latest`. */
export function channel(): "pinned" | "latest" {
  return process.env.AIFLARE_AGENTS === "latest" ? "latest" : "pinned";
}

function prefix(name: AgentName): string {
  return join(HERE, ".install", channel(), name);
}

/** Installs one agent with npm unless that version is already there; returns the path of its executable. */
export function ensureAgent(name: AgentName): string {
  const pin = PINS[name];
  const dir = prefix(name);
  const bin = join(dir, "node_modules", ".bin", pin.bin);
  const wanted = channel() === "latest" ? "latest" : pin.version;
  const stamp = join(dir, "installed.txt");
  // the latest channel checks the registry once a day at most
  const fresh = existsSync(stamp) && (channel() === "pinned" ? readFileSync(stamp, "utf8").trim() === pin.version : Date.now() - Bun.file(stamp).lastModified < 86_400_000);
  if (existsSync(bin) && fresh) return bin;
  mkdirSync(dir, { recursive: true });
  const r = Bun.spawnSync(
    ["npm", "install", "--no-fund", "--no-audit", "--no-save", "--loglevel=error", "--prefix", dir, `${pin.package}@${wanted}`],
    { stdout: "pipe", stderr: "pipe", env: { ...process.env, npm_config_update_notifier: "false" } },
  );
  if (r.exitCode !== 0 || !existsSync(bin)) {
    throw new Error(`could not install ${pin.package}@${wanted} with npm: ${r.stderr.toString().trim().slice(-800)}`);
  }
  writeFileSync(stamp, `${installedVersion(name)}\n`);
  return bin;
}

/** The version of an installed agent, as its package says. */
export function installedVersion(name: AgentName): string {
  const pkg = join(prefix(name), "node_modules", ...PINS[name].package.split("/"), "package.json");
  return (JSON.parse(readFileSync(pkg, "utf8")) as { version: string }).version;
}

if (import.meta.main) {
  for (const name of Object.keys(PINS) as AgentName[]) {
    ensureAgent(name);
    console.log(`agents: ${PINS[name].package} ${installedVersion(name)} (${channel()})`);
  }
}

/** Runs an agent's command line to its end (killed after `timeoutMs`) and returns its exit code and output. */
export async function runAgent(argv: string[], cwd: string, env: Record<string, string>, timeoutMs = 90_000): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(argv, { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  // what the agent's hooks queued is stored by the capture worker they started
  await captureSettled(cwd);
  return { code, stdout, stderr };
}
