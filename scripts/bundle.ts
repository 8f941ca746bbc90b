/** How src/main.ts is split into chunks: shared by the build and by the test that keeps hooks in one chunk. */
import type { BuildConfig } from "bun";

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
