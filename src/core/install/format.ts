/** Plain-text reports of install, uninstall and doctor (no colour codes; they read well in logs too). */
import { relative } from "node:path";
import { wrapLine } from "../history/style.ts";
import type { DoctorReport } from "./doctor.ts";
import type { Change, ChangeAction } from "./files.ts";
import type { InstallReport } from "./install.ts";
import type { UninstallReport } from "./uninstall.ts";

const VERB: Record<ChangeAction, [done: string, planned: string]> = {
  create: ["created", "would create"],
  update: ["updated", "would update"],
  unchanged: ["unchanged", "unchanged"],
  delete: ["deleted", "would delete"],
  restore: ["restored", "would restore"],
  remove: ["cleaned", "would clean"],
  keep: ["kept", "would keep"],
};

function shown(root: string, path: string): string {
  const rel = relative(root, path);
  return rel.startsWith("..") ? path : rel;
}

function changeLines(root: string, all: Change[], dryRun: boolean): string[] {
  const changes = all.filter((c) => !c.absent);
  if (changes.length === 0) return ["  nothing of aiflare's found"];
  const width = Math.max(...changes.map((c) => VERB[c.action][dryRun ? 1 : 0].length));
  return changes.map((c) => `  ${VERB[c.action][dryRun ? 1 : 0].padEnd(width)}  ${shown(root, c.path)}  — ${c.detail}`);
}

/** The report of `aiflare install`: each change, notes, and what to do next. */
export function formatInstall(r: InstallReport): string {
  const lines = [`aiflare install in ${r.root}${r.dryRun ? " (dry run: nothing written)" : ""}`, ...changeLines(r.root, r.changes, r.dryRun)];
  for (const w of r.warnings) lines.push(`  note: ${w}`);
  lines.push(`  recall: ${r.recall}`);
  if (r.changes.every((c) => !c.run)) lines.push("aiflare is already installed here; nothing changed.");
  if (!r.dryRun) lines.push("", "Next:", ...r.next.map((n) => `  - ${n}`));
  return lines.join("\n");
}

/** The report of `aiflare uninstall`: each change and what was deleted or kept. */
export function formatUninstall(r: UninstallReport): string {
  if (r.cancelled) return "Cancelled: nothing was changed.";
  const lines = [`aiflare uninstall in ${r.root}${r.dryRun ? " (dry run: nothing changed)" : ""}`, ...changeLines(r.root, r.changes, r.dryRun)];
  if (r.purged.length > 0) lines.push(`  ${r.dryRun ? "would delete" : "deleted"}: ${r.purged.join(", ")}`);
  if (r.kept.length > 0) lines.push(`  kept: ${r.kept.join(", ")} and the index (delete them with --purge)`);
  const commit = r.commit.map((p) => shown(r.root, p));
  if (commit.length > 0) {
    lines.push(`${r.dryRun ? "Would leave" : "Left"} to commit (git tracks them): ${commit.join(", ")}`, `  git commit -m "Remove aiflare" -- ${commit.join(" ")}`);
  }
  return lines.join("\n");
}

const MARK = { ok: "✓", warn: "!", fail: "✗", skip: "-" } as const;

/** The report of `aiflare doctor`: one line per check, with the fix for what is not ok; wrapped to `width` if given. */
export function formatDoctor(r: DoctorReport, width?: number): string {
  const wrap = (line: string, hang: string) => (width === undefined ? [line] : wrapLine(line, width, hang));
  const lines = [`aiflare doctor in ${r.root}`];
  for (const c of r.results) {
    if (c.status === "skip") continue;
    lines.push(...wrap(`${MARK[c.status]} ${c.message}`, "  "));
    if (c.fix && c.status !== "ok") lines.push(...wrap(`    fix: ${c.fix}`, "         "));
  }
  const warned = r.results.some((c) => c.status === "warn");
  lines.push(r.ok ? (warned ? "Working; see the ! lines above." : "All good.") : "Something needs fixing (see ✗ above).");
  return lines.join("\n");
}
