/**
 * Recall's `pre-tool-use` hook: the why of a file about to be edited. Loaded by a dynamic import from the event
 * handlers, so the other hooks never load SQLite.
 */
import type { HookHandler } from "../hook/types.ts";
import { recallForEdit } from "./edit.ts";

/** PreToolUse: recall for the file an editing tool is about to change. */
export const preToolUse: HookHandler = (ctx) =>
  recallForEdit({
    root: ctx.repo.root,
    gitDir: ctx.repo.gitDir,
    commonDir: ctx.repo.commonDir,
    sessionId: ctx.input.sessionId,
    toolName: ctx.input.toolName,
    toolInput: ctx.input.toolInput,
    cwd: ctx.input.cwd,
    markerPath: ctx.files.recall,
    env: ctx.env,
  });
