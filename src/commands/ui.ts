import { defineCommand } from "citty";
import { cwdArgs, writeOut } from "./_shared.ts";

export default defineCommand({
  meta: {
    name: "ui",
    description: "Show this repository's timeline in the browser (127.0.0.1 only, per-run token)",
    examples: ["ui", "ui --port 4380 --no-open"],
  },
  args: {
    port: { type: "string", description: "Port to listen on (0: any free one)", valueHint: "n", default: "0" },
    open: {
      type: "boolean",
      default: true,
      description: "Open the dashboard in the browser",
      negativeDescription: "Only print the URL",
    },
    ...cwdArgs,
  },
  async run({ args }) {
    const [{ startUi }, { dashboardResponse }] = await Promise.all([
      import("../core/dashboard/index.ts"),
      import("../web/assets.ts"),
    ]);
    const ui = startUi({ cwd: args.cwd ?? process.cwd(), port: Number(args.port), assets: (p, enc) => dashboardResponse(p, "local", enc) });
    await writeOut(`aiflare ui: ${ui.url}\n`);
    if (args.open && !ui.open()) await writeOut("Open that URL in your browser; Ctrl-C stops the server.\n");
    // the listener is up and the URL out: the index opens while the browser starts, under the reluctant JIT the
    // executable starts with (src/main.ts); the server that stays up gets the normal policy a while after that (not
    // at once: the code the start made hot would be compiled right then, while the browser draws the page)
    ui.warm()
      .catch(() => {})
      .finally(() => setTimeout(() => Bun.unsafe.setJITPolicy(1), 2000).unref());
    await new Promise<void>((resolve) => {
      for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => resolve());
    });
    ui.stop();
  },
});
