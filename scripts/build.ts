/** Builds dist/aiflare, one self-contained executable. */
import pkg from "../package.json";

const result = await Bun.build({
  // main.ts handles agent hooks with node:fs alone and loads the CLI (cli.ts) lazily; splitting keeps
  // the lazily imported modules out of the code every hook has to load.
  entrypoints: ["./src/main.ts"],
  compile: { outfile: "./dist/aiflare" },
  format: "esm",
  splitting: true,
  minify: true,
  bytecode: true,
  define: { AIFLARE_VERSION: JSON.stringify(pkg.version) },
  target: "bun",
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.log(`built dist/aiflare ${pkg.version}`);
