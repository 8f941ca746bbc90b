/** Line-level edits of text files (`.gitignore`, `CLAUDE.md`): add once, take out exactly. */

/** The lines `install` makes sure `.gitignore` has. */
export const GITIGNORE_LINES = [".context-capture/", "aiflare.yml"] as const;

/**
 * Added too when install creates `.claude/settings.local.json` and git does not ignore it yet: the file holds this
 * machine's path to the binary (Claude Code ignores it the same way when it creates the file).
 */
export const SETTINGS_LOCAL_LINE = ".claude/settings.local.json";

function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return lines.map((l) => l.replace(/\r$/, ""));
}

/** True when a .gitignore line already ignores what `line` would (with or without leading/trailing slash). */
function ignores(existing: string, line: string): boolean {
  const norm = (s: string) => s.trim().replace(/^\//, "").replace(/\/$/, "");
  return !existing.trim().startsWith("#") && norm(existing) === norm(line);
}

/** Appends `lines` to `text` (null: no file), adding the newline a last line may lack. */
function appendLines(text: string | null, lines: string[], blankBefore = false): string {
  let out = text ?? "";
  if (out !== "" && !out.endsWith("\n")) out += "\n";
  if (blankBefore && out.trim() !== "" && !out.endsWith("\n\n")) out += "\n";
  return `${out}${lines.join("\n")}\n`;
}

/** `.gitignore` after install: the aiflare lines it does not already have, appended. */
export function addGitignoreLines(before: string | null, extra: readonly string[] = []): string | null {
  const have = before === null ? [] : splitLines(before);
  const missing = [...GITIGNORE_LINES, ...extra].filter((l) => !have.some((h) => ignores(h, l)));
  if (missing.length === 0) return before;
  return appendLines(before, missing);
}

/**
 * Removes the lines install added: those of GITIGNORE_LINES that `original` (the pre-install text,
 * when known) did not have, except those in `stay`. Returns null when the file is left empty.
 */
export function removeGitignoreLines(current: string, original: string | null, stay: readonly string[] = []): string | null {
  const keep = new Set([...(original === null ? [] : splitLines(original)), ...stay]);
  const ours = new Set<string>([...GITIGNORE_LINES, SETTINGS_LOCAL_LINE].filter((l) => !keep.has(l)));
  const lines = current.split("\n");
  const out = lines.filter((l) => !ours.has(l.replace(/\r$/, "")));
  if (out.length === lines.length) return current;
  const text = out.join("\n");
  return text.trim() === "" ? null : text;
}

/** True when `.gitignore` text already ignores everything install adds to it. */
export function hasGitignoreLines(text: string): boolean {
  const lines = splitLines(text);
  return GITIGNORE_LINES.every((l) => lines.some((h) => ignores(h, l)));
}

/** True when a CLAUDE.md/AGENTS.md text already points agents at the skill. */
export function mentionsSkill(text: string | null): boolean {
  return text !== null && /context-capture/.test(text);
}

/** The instructions file after install: the directive appended unless the skill is already mentioned. */
export function addDirective(before: string | null, directive: string): string | null {
  if (mentionsSkill(before)) return before;
  return appendLines(before, [directive], true);
}

/** Removes the directive line (and the blank line install put before it). Null when nothing else is left. */
export function removeDirective(current: string, directive: string): string | null {
  const lines = current.split("\n");
  const i = lines.findIndex((l) => l.replace(/\r$/, "") === directive);
  if (i < 0) return current;
  const from = i > 0 && lines[i - 1] === "" ? i - 1 : i;
  lines.splice(from, i - from + 1);
  const text = lines.join("\n");
  return text.trim() === "" ? null : text;
}
