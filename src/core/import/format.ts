import { termSafe } from "../../util/terminal.ts";
import { agentName } from "../history/style.ts";
import { AGENT_TYPE } from "../session.ts";
import type { ImportSummary } from "./index.ts";

/** The text report of `aiflare import`: each session with its commits, then one summary line. */
export function formatImportSummary(s: ImportSummary, color: boolean): string {
  const c = (code: string, text: string) => (color ? `\x1b[${code}m${text}\x1b[0m` : text);
  // transcript text is untrusted: no control characters reach the terminal
  const clean = (text: string) => termSafe(text).replace(/\s+/g, " ");
  const out: string[] = [];
  for (const session of s.sessions) {
    const counted = session.commits.length;
    out.push(
      `${c("1", `Session ${session.sessionId.slice(0, 8)}`)} · ${agentName(AGENT_TYPE[session.agent])} · ${counted} commit${counted === 1 ? "" : "s"}`,
    );
    for (const commit of session.commits) {
      const mark = commit.status === "recorded" ? c("2", "=") : c("32", "+");
      const note = commit.status === "recorded" ? c("2", "  (already on the timeline)") : "";
      out.push(`  ${mark} ${c("33", commit.hash.slice(0, 7))}  ${clean(commit.subject).slice(0, 72)}${note}`);
    }
    for (const u of session.unmatched) {
      out.push(`  ${c("2", "?")} ${c("2", `${clean(u.command).slice(0, 60)}  (no such commit in this repository)`)}`);
    }
    if (session.error) out.push(`  ${c("31", "✗")} not written: ${clean(session.error)}`);
  }
  if (out.length) out.push("");
  const verb = s.dryRun ? "Would import" : "Imported";
  out.push(
    `${verb} ${s.imported} entr${s.imported === 1 ? "y" : "ies"} from ${s.sessions.length} session${s.sessions.length === 1 ? "" : "s"} ` +
      `(${s.transcripts} transcript${s.transcripts === 1 ? "" : "s"} scanned; ${s.matched} commit${s.matched === 1 ? "" : "s"} matched, ` +
      `${s.alreadyRecorded} already recorded, ${s.unmatched} not found${s.failed ? `, ${s.failed} failed` : ""}).`,
  );
  if (s.transcripts === 0) {
    out.push("No sessions found for this repository in ~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp or OpenCode's database; give transcript paths to import them.");
  } else if (s.dryRun && s.imported > 0) out.push("Run without --dry-run to write them.");
  return `${out.join("\n")}\n`;
}
