import { createConsola } from "consola/basic";
import { useColor } from "./_shared.ts";

/**
 * Human-facing diagnostics (errors, warnings) on stderr, so stdout carries only results and JSON.
 * `consola/basic` keeps the compiled binary's bytecode build working (the full build uses import.meta).
 */
export const ui = createConsola({
  stdout: process.stderr,
  stderr: process.stderr,
  formatOptions: { date: false, colors: useColor(process.stderr) },
});
