/** What install and doctor say about recall: whether it is on, and which parts, from the settings. */
import { join } from "node:path";
import { describeError } from "../../errors.ts";
import { CONFIG_FILE, loadRecallSettings } from "../config.ts";
import { readText } from "./files.ts";
import { hasAiflareMcp, MCP_JSON } from "./mcp-json.ts";
import type { CheckResult, DoctorCheck } from "./doctor.ts";
import { PATHS } from "./targets.ts";
import { whySkillText } from "./templates.ts";

/** One line: on/off, the parts, the cap, and how to change it ("unknown (…)" for a broken settings file). */
export function recallState(root: string, env: Record<string, string | undefined>): string {
  let s;
  try {
    s = loadRecallSettings(root, env);
  } catch (err) {
    return `unknown (${describeError(err).replace(/^CONFIG: /, "")})`;
  }
  const from = s.from ? `, set in ${s.from}` : "";
  if (!s.edit && !s.sessionStart) return `off${from ? ` (${from.slice(2)})` : ""}`;
  const parts = [s.edit ? `before edits, up to ${s.maxChars} characters a file` : "", s.sessionStart ? "at session start and after /clear" : ""].filter(Boolean);
  return `on: ${parts.join("; ")} (${from ? `${from.slice(2)}; ` : ""}\`recall: false\` in ${CONFIG_FILE} turns it off)`;
}

/** Recall's state, the why skill, and the MCP server when registered. */
export const checkRecall: DoctorCheck = (ctx) => {
  const out: CheckResult[] = [];
  const state = recallState(ctx.repo.root, ctx.env);
  out.push({ id: "recall", status: state.startsWith("unknown") ? "fail" : "ok", message: `recall ${state}`, fix: `fix ${CONFIG_FILE}` });
  const skill = readText(join(ctx.repo.root, PATHS.whySkill));
  if (skill === null) out.push({ id: "why-skill", status: "warn", message: `${PATHS.whySkill} is missing`, fix: "run aiflare install" });
  else if (skill !== whySkillText(ctx.binary.quoted)) {
    out.push({ id: "why-skill", status: "warn", message: `${PATHS.whySkill} differs from this version's`, fix: "run aiflare install to refresh it" });
  } else out.push({ id: "why-skill", status: "ok", message: PATHS.whySkill });
  const mcp = readText(join(ctx.repo.root, MCP_JSON));
  if (mcp !== null && hasAiflareMcp(mcp)) out.push({ id: "mcp", status: "ok", message: `MCP server aiflare registered in ${MCP_JSON}` });
  return out;
};
