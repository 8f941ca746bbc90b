/** Builds dist/aiflare, one self-contained executable. */
import pkg from "../package.json";

const result = await Bun.build({
  entrypoints: ["./src/cli.ts"],
  compile: { outfile: "./dist/aiflare" },
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
