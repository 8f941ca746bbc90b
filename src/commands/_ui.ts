import { createConsola } from "consola/basic";

/**
 * Human-facing diagnostics (errors, warnings) on stderr, so stdout carries only results and JSON.
 * `consola/basic` keeps the compiled binary's bytecode build working (the full build uses import.meta).
 */
export const ui = createConsola({
  stdout: process.stderr,
  stderr: process.stderr,
  formatOptions: { date: false, colors: Boolean(process.stderr.isTTY) && !process.env.NO_COLOR },
});
