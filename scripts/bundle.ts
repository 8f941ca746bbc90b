/** How src/main.ts is split into chunks: shared by the build and by the test that keeps hooks in one chunk. */
import type { BuildConfig, CompileBuildOptions } from "bun";

export const MAIN_BUNDLE = {
  // main.ts handles agent hooks with node:fs alone and loads the CLI (cli.ts) lazily; splitting keeps
  // the lazily imported modules out of the code every hook has to load.
  entrypoints: ["./src/main.ts"],
  format: "esm",
  splitting: true,
  // What main.ts imports is loaded on every hook, so it belongs in the entry's own chunk rather than in one chunk
  // per set of importers: the bundler folds shared code into an entry only when the entry's name has a hash (and
  // the entry has no top-level await).
  naming: { entry: "[name]-[hash].[ext]" },
  minify: true,
  target: "bun",
} as const satisfies BuildConfig;

/**
 * How the executable starts, whatever it runs: shared by the build and by the goals benchmark, which builds an
 * empty program the same way to show the fastest any hook could start on the machine.
 */
export const START_OPTIONS = {
  // aiflare runs in any repository, often from a hook: a .env or bunfig.toml there is the project's, not
  // aiflare's, and looking for them costs every start a walk up the directories.
  autoloadDotenv: false,
  autoloadBunfig: false,
  // The JIT starts reluctant: a hook that appends a line would otherwise start a compiler thread for start-up code
  // it runs once. main.ts restores the normal policy for everything that may run long.
  jitPolicy: 10,
} as const satisfies Omit<CompileBuildOptions, "outfile">;
