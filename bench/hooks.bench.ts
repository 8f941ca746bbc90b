/**
 * Whole-process wall time of the conversation-recording hooks, beside a baseline that does the same
 * append with `node -e`. Target: `hook user-prompt-submit` median ≤ 15 ms on a 2-core machine.
 */
import { join } from "node:path";
import { report, sample, tempDir, timeProcess } from "./lib.ts";

const BIN = join(import.meta.dir, "..", "dist", "aiflare");
const RUNS = Number(process.env.BENCH_RUNS ?? 60);

const dir = tempDir();
const root = join(dir, "repo");
Bun.spawnSync(["git", "init", "-q", root]);
const env = { ...(process.env as Record<string, string>), NO_COLOR: "1" };

const prompt = (i: number) =>
  JSON.stringify({ session_id: "bench-session", cwd: root, hook_event_name: "UserPromptSubmit", prompt: `prompt number ${i} `.repeat(20) });
const stop = (i: number) =>
  JSON.stringify({ session_id: "bench-session", cwd: root, hook_event_name: "Stop", stop_hook_active: false, last_assistant_message: `reply ${i} `.repeat(40) });

/** PostToolUse of a Bash call the `Bash(git *)` filter lets through but that commits nothing. */
const nonCommit = (i: number) =>
  JSON.stringify({
    session_id: "bench-session",
    cwd: root,
    hook_event_name: "PostToolUse",
    tool_name: "Bash",
    tool_input: { command: i % 2 ? "git status --short" : "git diff --stat && git log --oneline -5" },
    tool_response: { stdout: " M src/a.ts\n", stderr: "" },
    duration_ms: 40,
  });

const nodeAppend = `
const fs=require("fs"),p=require("path");let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
const j=JSON.parse(s);const d=p.join(j.cwd,".context-capture");fs.mkdirSync(d,{recursive:true,mode:0o700});
fs.appendFileSync(p.join(d,".baseline-"+j.session_id),JSON.stringify({role:"user",content:j.prompt})+"\\n",{mode:0o600});});`;

const baseline = sample(RUNS, (i) => timeProcess(["node", "-e", nodeAppend], { stdin: prompt(i), env }));
const ups = sample(RUNS, (i) => timeProcess([BIN, "hook", "user-prompt-submit"], { cwd: root, stdin: prompt(i), env }));
const stp = sample(RUNS, (i) => timeProcess([BIN, "hook", "stop"], { cwd: root, stdin: stop(i), env }));
const ptu = sample(RUNS, (i) => timeProcess([BIN, "hook", "post-tool-use"], { cwd: root, stdin: nonCommit(i), env }));

report("baseline: node -e append", baseline);
report("hook user-prompt-submit", ups, baseline, "≤ 15 ms");
report("hook stop", stp, baseline);
report("hook post-tool-use, git call without a commit", ptu, baseline);
Bun.spawnSync(["rm", "-rf", dir]);
