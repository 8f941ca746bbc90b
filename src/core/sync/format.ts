import type { SyncTargetStatus } from "../../store/index-db.ts";
import type { SyncIssue, SyncSummary } from "./run.ts";

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
const entries = (n: number) => `${n} ${n === 1 ? "entry" : "entries"}`;

/** Issues grouped by reason, largest group first, each with a few ids. */
function grouped(issues: SyncIssue[], indent: string, maxIds = 5): string[] {
  const groups = new Map<string, SyncIssue[]>();
  for (const i of issues) {
    const key = `${i.kind}\0${i.reason}`;
    groups.set(key, [...(groups.get(key) ?? []), i]);
  }
  return [...groups.values()]
    .sort((a, b) => b.length - a.length)
    .map((g) => {
      const ids = g.slice(0, maxIds).map((i) => (i.kind === "entry" ? i.id.slice(0, 7) : i.id));
      const more = g.length > maxIds ? ` and ${g.length - maxIds} more` : "";
      const what = g[0]!.kind === "entry" ? entries(g.length) : plural(g.length, "session");
      return `${indent}${what} (${ids.join(", ")}${more}): ${g[0]!.reason}`;
    });
}

/** The human summary printed at the end of `aiflare sync`. */
export function formatSummary(s: SyncSummary, target: { endpoint?: string; key?: string }): string {
  const lines: string[] = [];
  if (s.dryRun && s.plan) {
    const p = s.plan;
    if (p.entries.length === 0 && p.sessions.length === 0) {
      lines.push("Dry run: nothing to send.");
    } else {
      lines.push(
        `Dry run: would send ${entries(p.entries.length)} in ${plural(p.batches, "request")} and ${plural(p.sessions.length, "session")}${target.endpoint ? ` to ${target.endpoint}` : ""}:`,
      );
      for (const e of p.entries) lines.push(`  entry   ${e.commitHash.slice(0, 7)}  ${e.title}  (${e.bytes} bytes)`);
      for (const x of p.sessions) lines.push(`  session ${x.id}  (${x.bytes} bytes stored)`);
    }
  } else {
    const sent = s.entries.sent + s.sessions.sent;
    const nothing = sent === 0 && s.failed.length === 0 && s.requests === 0;
    if (nothing) {
      lines.push("Nothing to send: the backend has every captured entry.");
    } else {
      lines.push(
        `Sent ${entries(s.entries.sent)} and ${plural(s.sessions.sent, "session")}${target.endpoint ? ` to ${target.endpoint}` : ""}${target.key ? ` (key ${target.key})` : ""} in ${(s.durationMs / 1000).toFixed(1)} s.`,
      );
    }
  }
  if (s.skipped.length) {
    lines.push(`Skipped ${s.skipped.length}:`);
    lines.push(...grouped(s.skipped, "  "));
  }
  if (s.failed.length) {
    lines.push(`Failed ${s.failed.length}:`);
    lines.push(...grouped(s.failed, "  "));
    lines.push("Failed entries stay pending; `aiflare sync` sends them again.");
  }
  return lines.join("\n");
}

/** One line for the log file: counts and reasons only. */
export function summaryLogLine(s: SyncSummary): string {
  const reasons = [...new Set(s.failed.map((f) => f.reason))].slice(0, 3).join(" | ");
  return (
    `sent entries=${s.entries.sent} sessions=${s.sessions.sent} skipped=${s.skipped.length} failed=${s.failed.length}` +
    ` requests=${s.requests} ms=${s.durationMs}${reasons ? ` reasons: ${reasons}` : ""}`
  );
}

/** `aiflare sync --status`: per backend and project, what is pending and when it last succeeded. */
export function formatStatus(targets: (SyncTargetStatus & { current: boolean })[], problem: string | null): string {
  const lines: string[] = [];
  if (problem) lines.push(problem);
  if (targets.length === 0 && !problem) lines.push("No backend has been synced with yet.");
  for (const t of targets) {
    lines.push(`${t.endpoint} (project ${t.project})${t.current ? " — configured now" : ""}`);
    const pending = t.pendingEntries + t.pendingSessions === 0 ? "nothing" : `${entries(t.pendingEntries)}, ${plural(t.pendingSessions, "session")}`;
    lines.push(`  pending: ${pending}`);
    lines.push(`  last success: ${t.lastSuccessAt ?? "never"}`);
    if (t.lastError) lines.push(`  last error: ${t.lastError.message} (${t.lastError.at})`);
  }
  return lines.join("\n");
}
