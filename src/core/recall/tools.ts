/** The tools whose calls recall looks at: Claude Code's file-editing tools and Codex's patch tool. */
export const EDIT_TOOLS: ReadonlySet<string> = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit", "apply_patch"]);

/** True for a tool call that edits files; anything else never loads recall. */
export function isEditTool(name: string | undefined): boolean {
  return name !== undefined && EDIT_TOOLS.has(name);
}
