/**
 * aiflare's OpenCode plugin: OpenCode (1.x) is extended by in-process plugins, not hook commands. Install writes this
 * file into `.opencode/plugins/`, where OpenCode loads every `*.js` at its start. It is thin: each event it needs
 * becomes `aiflare hook <event> --agent opencode` with the event on stdin (agents/opencode/index.ts reads it), and
 * it imports nothing but node:child_process, so it needs no package of OpenCode's.
 */

/** The first line of the plugin file: how doctor and uninstall recognise it. */
export const OPENCODE_PLUGIN_MARK = "// aiflare: records this repository's OpenCode sessions";

/** The binary a plugin file runs (its `AIFLARE` constant), or undefined. */
export function opencodePluginBinary(text: string): string | undefined {
  const m = /^const AIFLARE = ("(?:[^"\\\n]|\\.)*");$/m.exec(text);
  if (!m) return undefined;
  try {
    const bin = JSON.parse(m[1]!) as unknown;
    return typeof bin === "string" ? bin : undefined;
  } catch {
    return undefined;
  }
}

/** The text of the plugin, calling the aiflare binary at `bin` (an absolute path, or `aiflare` through PATH). */
export function opencodePluginText(bin: string): string {
  return `${OPENCODE_PLUGIN_MARK} (written by \`aiflare install --agent opencode\`,
// removed by \`aiflare uninstall\`). Each event runs \`aiflare hook <event> --agent opencode\` with the event as JSON on
// stdin. It never holds OpenCode up: a call is given WAIT_MS at most, and every failure is ignored.
const AIFLARE = ${JSON.stringify(bin)};
const WAIT_MS = 5000;

export const AiflarePlugin = async ({ directory }) => {
  const cp = await import("node:child_process");
  const parents = new Map(); // session id -> parent session id (a subagent's session)
  const assistant = new Map(); // session id -> its latest assistant message id
  const texts = new Map(); // session id -> message id -> part id -> text
  const busy = new Set(); // sessions in a turn whose end is not recorded yet
  const started = new Map(); // top session id -> the recall context of its start (a promise)
  const top = (id) => {
    let s = id;
    for (let i = 0; i < 50 && parents.has(s); i++) s = parents.get(s);
    return s;
  };
  const body = (hook, id, extra) => {
    const session = top(id);
    return JSON.stringify({ hook, session_id: session, subagent: session === id ? null : id, directory, ...extra });
  };
  const args = (event) => ["hook", event, "--agent", "opencode"];
  // waits for the answer (bounded); resolves undefined on any problem
  const ask = (event, json) =>
    new Promise((resolve) => {
      let child;
      try {
        child = cp.spawn(AIFLARE, args(event), { cwd: directory, stdio: ["pipe", "pipe", "ignore"] });
      } catch {
        return resolve(undefined);
      }
      let out = "";
      const timer = setTimeout(() => {
        try { child.kill(); } catch {}
        resolve(undefined);
      }, WAIT_MS);
      child.on("error", () => { clearTimeout(timer); resolve(undefined); });
      child.stdout.on("data", (d) => { out += d; });
      child.on("close", () => {
        clearTimeout(timer);
        try { resolve(out.trim() ? JSON.parse(out) : undefined); } catch { resolve(undefined); }
      });
      child.stdin.on("error", () => {});
      child.stdin.end(json);
    });
  // at a turn's end and at exit: \`opencode run\` exits once the session is idle, so this one finishes first
  const now = (event, json) => {
    try {
      cp.spawnSync(AIFLARE, args(event), { cwd: directory, input: json, stdio: ["pipe", "ignore", "ignore"], timeout: WAIT_MS });
    } catch {}
  };
  const context = (answer) => (answer && typeof answer.additionalContext === "string" ? answer.additionalContext : "");
  return {
    event: async ({ event }) => {
      try {
        const p = event.properties || {};
        if (event.type === "session.created" || event.type === "session.updated") {
          if (p.info && p.info.parentID) parents.set(p.info.id, p.info.parentID);
        } else if (event.type === "message.updated") {
          if (p.info && p.info.role === "assistant") assistant.set(p.info.sessionID, p.info.id);
        } else if (event.type === "message.part.updated") {
          const part = p.part;
          if (!part || part.type !== "text" || part.synthetic || typeof part.text !== "string") return;
          if (!texts.has(part.sessionID)) texts.set(part.sessionID, new Map());
          const byMessage = texts.get(part.sessionID);
          if (!byMessage.has(part.messageID)) byMessage.set(part.messageID, new Map());
          byMessage.get(part.messageID).set(part.id, part.text);
        } else if (event.type === "session.status" && p.status && p.status.type === "idle") {
          const id = p.sessionID;
          if (!busy.delete(id)) return;
          const parts = (texts.get(id) || new Map()).get(assistant.get(id));
          texts.delete(id);
          now("stop", body("session.status", id, { reply: parts ? [...parts.values()].join("\\n") : "" }));
        } else if (event.type === "server.instance.disposed") {
          for (const id of started.keys()) now("session-end", body(event.type, id, {}));
        }
      } catch {}
    },
    "chat.message": async (input, output) => {
      try {
        busy.add(input.sessionID);
        await ask("user-prompt-submit", body("chat.message", input.sessionID, { input, output }));
      } catch {}
    },
    "experimental.chat.system.transform": async (input, output) => {
      try {
        const id = input.sessionID;
        if (!id || top(id) !== id) return;
        if (!started.has(id)) started.set(id, ask("session-start", body("session.start", id, {})).then(context));
        const text = await started.get(id);
        if (text) output.system.push(text);
      } catch {}
    },
    "tool.execute.after": async (input, output) => {
      try {
        if (input.tool !== "bash") return;
        const text = context(await ask("post-tool-use", body("tool.execute.after", input.sessionID, { input, output })));
        if (text) output.output = \`\${output.output ?? ""}\\n\\n\${text}\`;
      } catch {}
    },
    "shell.env": async (input, output) => {
      try {
        if (input.sessionID) output.env.OPENCODE_SESSION_ID = top(input.sessionID);
      } catch {}
    },
  };
};
`;
}
