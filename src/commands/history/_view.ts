import type { ArgDef } from "citty";
import { pageOrWrite } from "../../core/history/pager.ts";
import type { ViewContext } from "../../core/history/list.ts";
import { stdoutIsTTY, useColor, writeOut } from "../_shared.ts";

/** `--no-pager`: print straight to the terminal. */
export const pagerArgs = {
  pager: {
    type: "boolean",
    default: true,
    description: "Page output longer than the terminal, like git",
    negativeDescription: "Print straight to the terminal",
  },
} as const satisfies Record<string, ArgDef>;

/** Colour on a terminal unless NO_COLOR is set (FORCE_COLOR forces it); width from the terminal. */
export function viewContext(cwd: string | undefined): ViewContext {
  // process.stdout is only touched on a terminal: it loads node's stream modules
  const tty = stdoutIsTTY();
  const color = useColor({ isTTY: tty });
  const width = tty ? process.stdout.columns || 100 : 100;
  return { cwd: cwd ?? process.cwd(), now: new Date(), style: { color, width, wrap: tty } };
}

/** Prints a view's text, through a pager when it is taller than the terminal. */
export function emit(text: string, opts: { pager?: boolean; json?: boolean }): Promise<void> {
  return pageOrWrite(
    text,
    {
      isTTY: stdoutIsTTY(),
      rows: stdoutIsTTY() ? process.stdout.rows || 24 : 24,
      env: process.env,
      write: writeOut,
    },
    { pager: opts.pager !== false && !opts.json },
  );
}
