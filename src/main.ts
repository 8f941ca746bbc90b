#!/usr/bin/env bun
/**
 * The executable's entry. Agent hooks run on every prompt and tool call, so `aiflare hook <agent event>`
 * is recognised here and handled with modules that need nothing beyond node:fs; every other command line
 * loads the full CLI (citty, consola, the commands) through a dynamic import.
 *
 * No top-level await: an entry that awaits cannot take in the modules it shares with lazily loaded code, and the
 * bundler would leave every one of them in a chunk of its own, which a hook pays for on each prompt.
 */
import { agentHookCall } from "./core/hook/argv.ts";
import { runAgentHook } from "./core/hook/runner.ts";
import { readStdin, writeStdout } from "./core/hook/stdin.ts";
import { BACKGROUND_ENV, BACKGROUND_NICE } from "./util/self.ts";

/**
 * The hooks that record a line or two, or hand a commit to the capture worker, and are done: they keep the reluctant
 * JIT the executable starts with (the commit hook takes about a tenth less CPU time than with the normal policy).
 */
const QUICK_HOOKS: ReadonlySet<string> = new Set(["user-prompt-submit", "stop", "session-start", "post-tool-use"]);
/**
 * The commands that read or write an entry or a screenful and are done: they keep it too, since the normal policy's
 * compiler threads cost `history list` and `capture` about a quarter of their CPU time (a whole history as JSON,
 * which runs long, comes out about 4% slower for it).
 */
const QUICK_COMMANDS: ReadonlySet<string> = new Set(["history", "capture"]);
/**
 * The commands that start with a burst of code run once and turn the normal policy on themselves when it is done:
 * `ui` reads its first page while the browser starts on the same cores, and under the reluctant policy its process
 * takes about a sixth less CPU to get there (52 against 62 ms: the JIT's compiler threads); src/commands/ui.ts.
 */
const INTERACTIVE_LATER: ReadonlySet<string> = new Set(["ui"]);

const argv = process.argv.slice(2);
const call = agentHookCall(argv);
// scripts/build.ts starts the executable with JIT thresholds raised, for the quick hooks; the rest of the CLI and
// recall may run long and get the normal policy back before they start.
if (call ? !QUICK_HOOKS.has(call.event) : !QUICK_COMMANDS.has(argv[0] ?? "") && !INTERACTIVE_LATER.has(argv[0] ?? "")) Bun.unsafe.setJITPolicy(1);
if (process.env[BACKGROUND_ENV] === "1") {
  // started detached by a hook (util/self.ts): the agent's own work comes first on the cores
  try {
    (require("node:os") as typeof import("node:os")).setPriority(BACKGROUND_NICE);
  } catch {
    // a system that refuses leaves the priority as it was
  }
}
if (argv[0] === "__recall-follow") {
  // The edit hook's detached lookup of a file's earlier names (recall/renames.ts); it never fails loudly either.
  void import("./core/recall/renames.ts")
    .then((m) => m.runFollow(argv.slice(1)))
    .catch(() => undefined)
    .then(() => process.exit(0));
} else if (argv[0] === "__recall-start") {
  // capture's detached save of the next session start's answer (recall/session-start.ts); silent as well
  void import("./core/recall/session-start.ts")
    .then((m) => m.refreshStartAnswer(process.cwd(), process.env))
    .catch(() => undefined)
    .then(() => process.exit(0));
} else if (argv[0] === "__capture-worker") {
  // The hooks' detached capture worker (capture/drain.ts): queued entries and transcripts stored, never loudly.
  void import("./core/capture/drain.ts")
    .then((m) => m.runWorker(argv.slice(1)))
    .catch(() => undefined)
    .then(() => process.exit(0));
} else if (call) {
  void runAgentHook({ ...call, stdin: () => readStdin(), env: process.env, cwd: process.cwd() })
    .then((out) => (out ? writeStdout(out) : undefined))
    .catch((err) => {
      process.stderr.write(`aiflare: hook ${call.event} failed: ${err instanceof Error ? err.message : String(err)}\n`);
    })
    // Always 0, and explicitly: a hook never fails its caller, which may still hold stdin open.
    .then(() => process.exit(0));
} else if (QUICK_COMMANDS.has(argv[0] ?? "")) {
  // a plain `history list` or `capture` runs without citty; any other line of theirs, and every failure, as below
  void import("./commands/_quick.ts")
    .then((m) => m.runQuick(argv))
    .then(
      (code) => code ?? import("./cli.ts").then((m) => m.run(argv)),
      (err: unknown) => import("./cli.ts").then((m) => m.report(err, argv)),
    )
    .then((code) => process.exit(code));
} else {
  // Exit explicitly: a hook's stdin may still be held open by the caller.
  void import("./cli.ts")
    .then((m) => m.run(argv))
    .then((code) => process.exit(code));
}
