/** Builds dist/aiflare, one self-contained executable (the dashboard's page bundled into it). */
import pkg from "../package.json";

function fail(logs: unknown[]): never {
  for (const log of logs) console.error(log);
  process.exit(1);
}

// The dashboard's script, bundled for the browser and baked into the executable as a string.
const web = await Bun.build({ entrypoints: ["./src/web/page/app.ts"], target: "browser", minify: true });
if (!web.success || !web.outputs[0]) fail(web.logs);
const webJs = await web.outputs[0].text();

const result = await Bun.build({
  // main.ts handles agent hooks with node:fs alone and loads the CLI (cli.ts) lazily; splitting keeps
  // the lazily imported modules out of the code every hook has to load.
  entrypoints: ["./src/main.ts"],
  compile: { outfile: "./dist/aiflare" },
  format: "esm",
  splitting: true,
  minify: true,
  bytecode: true,
  define: { AIFLARE_VERSION: JSON.stringify(pkg.version), AIFLARE_WEB_JS: JSON.stringify(webJs) },
  target: "bun",
});
if (!result.success) fail(result.logs);
console.log(`built dist/aiflare ${pkg.version}`);
