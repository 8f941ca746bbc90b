/** Builds dist/aiflare, one self-contained executable (the dashboard's page bundled into it). */
import pkg from "../package.json";
import { MAIN_BUNDLE, START_OPTIONS } from "./bundle.ts";
import { PAGE_FORMAT, packScripts } from "../src/web/assets.ts";

function fail(logs: unknown[]): never {
  for (const log of logs) console.error(log);
  process.exit(1);
}

// The dashboard's scripts, bundled for the browser and baked into the executable gzipped (src/web/assets.ts).
const bundle = async (entry: keyof typeof PAGE_FORMAT) => {
  const web = await Bun.build({ entrypoints: [`./src/web/page/${entry}.ts`], target: "browser", format: PAGE_FORMAT[entry], minify: true });
  if (!web.success || !web.outputs[0]) fail(web.logs);
  return web.outputs[0].text();
};
const webScripts = packScripts(await bundle("app"), await bundle("boot"));

// The thread that reads entries for a first index import (src/store/index/rows-thread.ts), baked in as a string.
const rows = await Bun.build({ entrypoints: ["./src/store/index/rows-worker.ts"], target: "bun", format: "esm", minify: true });
if (!rows.success || !rows.outputs[0]) fail(rows.logs);
const rowsJs = await rows.outputs[0].text();

const result = await Bun.build({
  ...MAIN_BUNDLE,
  compile: { outfile: "./dist/aiflare", ...START_OPTIONS },
  bytecode: true,
  define: {
    AIFLARE_VERSION: JSON.stringify(pkg.version),
    AIFLARE_WEB_SCRIPTS: JSON.stringify(webScripts),
    // as base64: the code as a plain string literal made every start of the executable ≈4 ms slower
    AIFLARE_ROWS_WORKER_JS: JSON.stringify(Buffer.from(rowsJs).toString("base64")),
  },
});
if (!result.success) fail(result.logs);
console.log(`built dist/aiflare ${pkg.version}`);
