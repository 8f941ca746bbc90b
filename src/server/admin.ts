/** Projects and keys: what `aiflare serve project …` and `aiflare serve key …` do. */
import { forgeTemplateProblem } from "../core/dashboard/forge.ts";
import { AiflareError } from "../errors.ts";
import { newKey, randomId } from "./keys.ts";
import type { KeyInfo, Project, ProjectInfo, Storage } from "./storage.ts";

/** A key owner's name: printable, at most 100 characters ("" for none). */
function checkOwner(owner: string): string {
  const o = owner.trim();
  if (o.length > 100 || /[\p{Cc}]/u.test(o)) throw new AiflareError("INVALID_ARGUMENT", "A key owner is at most 100 printable characters.");
  return o;
}

function checkName(name: string): string {
  const n = name.trim();
  if (!n || n.length > 100 || /[\p{Cc}]/u.test(n)) {
    throw new AiflareError("INVALID_ARGUMENT", "A project name is 1 to 100 printable characters.");
  }
  return n;
}

async function mustFind(storage: Storage, idOrName: string): Promise<Project> {
  const p = await storage.project(idOrName);
  if (!p) throw new AiflareError("NOT_FOUND", `No project "${idOrName}". See the projects with: aiflare serve project list`);
  return p;
}

/** Creates a project with its first key; the key is returned once and only its hash is kept. */
export async function createProject(storage: Storage, name: string, owner = ""): Promise<{ project: Project; key: string; keyId: string }> {
  const n = checkName(name);
  const o = checkOwner(owner);
  if (await storage.project(n)) throw new AiflareError("CONFLICT", `A project named "${n}" exists already.`);
  const project = await storage.createProject(randomId("prj"), n);
  const k = newKey();
  await storage.createKey({ id: k.id, projectId: project.id, hash: k.hash, prefix: k.prefix, label: "first key", owner: o });
  return { project, key: k.key, keyId: k.id };
}

/**
 * Sets the URL template of a project's commit pages on its forge (`https://github.com/org/repo/commit/{sha}`),
 * which the dashboard links each entry to; "" or "none" removes it.
 */
export async function setForgeUrl(storage: Storage, project: string, template: string): Promise<{ project: Project; forgeUrl: string | null }> {
  const p = await mustFind(storage, project);
  const t = template.trim();
  if (t === "" || t === "none") {
    await storage.setProjectSetting(p.id, "forge_url", null);
    return { project: p, forgeUrl: null };
  }
  const problem = forgeTemplateProblem(t);
  if (problem) throw new AiflareError("INVALID_ARGUMENT", `Forge URL "${t.slice(0, 100)}": ${problem}.`);
  await storage.setProjectSetting(p.id, "forge_url", t);
  return { project: p, forgeUrl: t };
}

export function listProjects(storage: Storage): Promise<ProjectInfo[]> {
  return storage.projects();
}

/** Adds a key to a project (one per person or machine, so one can be revoked alone). */
export async function createKey(storage: Storage, project: string, label = "", owner = ""): Promise<{ project: Project; key: string; keyId: string }> {
  const o = checkOwner(owner);
  const p = await mustFind(storage, project);
  const k = newKey();
  await storage.createKey({ id: k.id, projectId: p.id, hash: k.hash, prefix: k.prefix, label: label.trim().slice(0, 100), owner: o });
  return { project: p, key: k.key, keyId: k.id };
}

export async function listKeys(storage: Storage, project?: string): Promise<KeyInfo[]> {
  const p = project ? await mustFind(storage, project) : undefined;
  return storage.keys(p?.id);
}

/** Revokes a key by its id or its shown prefix; takes effect on the next request, on every server process. */
export async function revokeKey(storage: Storage, idOrPrefix: string): Promise<KeyInfo> {
  const k = await storage.revokeKey(idOrPrefix.trim());
  if (!k) throw new AiflareError("NOT_FOUND", `No active key "${idOrPrefix}". See the keys with: aiflare serve key list`);
  return k;
}
