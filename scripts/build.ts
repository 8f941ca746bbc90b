/** Builds dist/aiflare, one self-contained executable (the dashboard's page bundled into it). */
import pkg from "../package.json";
import { MAIN_BUNDLE } from "./bundle.ts";

function fail(logs: unknown[]): never {
  for (const log of logs) console.error(log);
  process.exit(1);
}

// The dashboard's script, bundled for the browser and baked into the executable as a string.
const web = await Bun.build({ entrypoints: ["./src/web/page/app.ts"], target: "browser", minify: true });
if (!web.success || !web.outputs[0]) fail(web.logs);
const webJs = await web.outputs[0].text();

const result = await Bun.build({
  ...MAIN_BUNDLE,
  compile: {
    outfile: "./dist/aiflare",
    // aiflare runs in any repository, often from a hook: a .env or bunfig.toml there is the project's, not
    // aiflare's, and looking for them costs every start a walk up the directories.
    autoloadDotenv: false,
    autoloadBunfig: false,
    // The JIT starts reluctant: a hook that appends a line would otherwise start a compiler thread for start-up code
    // it runs once. main.ts restores the normal policy for everything that may run long.
    jitPolicy: 10,
  },
  bytecode: true,
  define: { AIFLARE_VERSION: JSON.stringify(pkg.version), AIFLARE_WEB_JS: JSON.stringify(webJs) },
});
if (!result.success) fail(result.logs);
console.log(`built dist/aiflare ${pkg.version}`);
