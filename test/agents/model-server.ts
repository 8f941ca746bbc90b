/**
 * Scripted model servers for the real agents: each request of the agent's main loop gets the next step of a script
 * (a tool call or a final text); side requests (titles, token counts, summaries) get a harmless answer. Every
 * request body is kept, so a test can assert on what reached the model. Listens on 127.0.0.1 only.
 */

/**
 * One answer of the model: a tool call, or a text that ends the turn. A string `input` is a freeform (custom) tool's
 * input, such as Codex's `apply_patch` patch text (Responses API only).
 */
export type Step = { tool: string; input: Record<string, unknown> | string } | { text: string };

/**
 * A step of a script: fixed, or decided when its request arrives, from what reached the model by then (as a real
 * model answers what its context holds, such as a hash a hook's reminder named).
 */
export type ScriptStep = Step | ((request: ModelRequest) => Step);

export interface ModelRequest {
  path: string;
  body: any;
  /** whether this request belongs to the agent's main loop (it offers the agent's shell tool) */
  main: boolean;
}

export interface ModelServer {
  url: string;
  requests: ModelRequest[];
  /** steps not yet consumed */
  remaining(): number;
  /** the main-loop requests' bodies as one text, to look for what reached the model */
  seen(): string;
  stop(): void;
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

function anthropicStream(model: string, n: number, step: Step): string {
  const id = `msg_${n}`;
  let out = sse("message_start", {
    type: "message_start",
    message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 0 } },
  });
  if ("text" in step) {
    out += sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    out += sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: step.text } });
  } else {
    out += sse("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "tool_use", id: `toolu_${String(n).padStart(4, "0")}`, name: step.tool, input: {} },
    });
    out += sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(step.input) } });
  }
  out += sse("content_block_stop", { type: "content_block_stop", index: 0 });
  out += sse("message_delta", { type: "message_delta", delta: { stop_reason: "text" in step ? "end_turn" : "tool_use", stop_sequence: null }, usage: { output_tokens: 5 } });
  out += sse("message_stop", { type: "message_stop" });
  return out;
}

/**
 * The loop both APIs share: parse and keep each request; a main-loop request (`isMain`) takes the next step, any
 * other the side answer; `answer` turns a step into the API's response.
 */
function scriptedServer(
  script: ScriptStep[],
  isMain: (body: any) => boolean,
  answer: (path: string, body: any, step: Step, n: number) => Response,
): ModelServer {
  const queue = [...script];
  const requests: ModelRequest[] = [];
  let n = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const text = req.method === "POST" ? await req.text() : "";
      let body: any = {};
      try {
        body = text ? JSON.parse(text) : {};
      } catch {
        return new Response("bad json", { status: 400 });
      }
      const main = isMain(body);
      requests.push({ path, body, main });
      const next = main ? (queue.shift() ?? { text: "Done." }) : { text: "Scripted session" };
      const step = typeof next === "function" ? next(requests.at(-1)!) : next;
      return answer(path, body, step, ++n);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    remaining: () => queue.length,
    seen: () => requests.filter((r) => r.main).map((r) => JSON.stringify(r.body)).join("\n"),
    stop: () => server.stop(true),
  };
}

const offers = (body: any, names: string[]) => Array.isArray(body.tools) && body.tools.some((t: { name?: string }) => names.includes(t.name ?? ""));

/** A scripted Anthropic Messages API (streaming), as Claude Code calls it through ANTHROPIC_BASE_URL. */
export function anthropicServer(script: ScriptStep[]): ModelServer {
  return scriptedServer(script, (body) => offers(body, ["Bash"]), (path, body, step, n) => {
    if (path.endsWith("/count_tokens")) return Response.json({ input_tokens: 100 });
    if (!path.endsWith("/v1/messages")) return Response.json({});
    if (body.stream) return new Response(anthropicStream(body.model ?? "claude", n, step), { headers: { "content-type": "text/event-stream" } });
    return Response.json({
      id: `msg_${n}`, type: "message", role: "assistant", model: body.model,
      content: "text" in step ? [{ type: "text", text: step.text }] : [{ type: "tool_use", id: `toolu_${n}`, name: step.tool, input: step.input }],
      stop_reason: "text" in step ? "end_turn" : "tool_use", stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 },
    });
  });
}

function responsesStream(model: string, n: number, step: Step): string {
  const ev = (type: string, data: Record<string, unknown>) => sse(type, { type, ...data });
  const item =
    "text" in step
      ? { type: "message", id: `msg_${n}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: step.text, annotations: [] }] }
      : typeof step.input === "string"
        ? { type: "custom_tool_call", id: `ctc_${n}`, call_id: `call_${n}`, name: step.tool, input: step.input, status: "completed" }
        : { type: "function_call", id: `fc_${n}`, call_id: `call_${n}`, name: step.tool, arguments: JSON.stringify(step.input), status: "completed" };
  const usage = { input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
  const response = { id: `resp_${n}`, object: "response", status: "completed", model, output: [item], usage };
  return (
    ev("response.created", { response: { ...response, status: "in_progress", output: [] } }) +
    ev("response.output_item.added", { output_index: 0, item }) +
    ev("response.output_item.done", { output_index: 0, item }) +
    ev("response.completed", { response })
  );
}

/** A scripted OpenAI Responses API (streaming), as Codex calls it through a `model_providers` entry. */
export function responsesServer(script: ScriptStep[]): ModelServer {
  return scriptedServer(script, (body) => offers(body, ["exec_command", "shell"]), (path, body, step, n) => {
    if (!path.endsWith("/responses")) return Response.json({ data: [], models: [] });
    return new Response(responsesStream(body.model ?? "gpt", n, step), { headers: { "content-type": "text/event-stream" } });
  });
}

function chatStream(model: string, n: number, step: Step): string {
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ id: `chatcmpl-${n}`, object: "chat.completion.chunk", created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  let out = chunk({ role: "assistant" }, null);
  if ("text" in step) out += chunk({ content: step.text }, null) + chunk({}, "stop");
  else {
    const call = { index: 0, id: `call_${n}`, type: "function", function: { name: step.tool, arguments: JSON.stringify(step.input) } };
    out += chunk({ tool_calls: [call] }, null) + chunk({}, "tool_calls");
  }
  out += `data: ${JSON.stringify({ id: `chatcmpl-${n}`, object: "chat.completion.chunk", created: 0, model, choices: [], usage: { prompt_tokens: 100, completion_tokens: 5, total_tokens: 105 } })}\n\n`;
  return `${out}data: [DONE]\n\n`;
}

/**
 * A scripted OpenAI-compatible Chat Completions API (streaming or not), as Qwen Code calls it through OPENAI_BASE_URL
 * and GitHub Copilot CLI a BYOK provider; `shellTool` names the agent's shell tool (its main loop offers it).
 */
export function chatCompletionsServer(script: ScriptStep[], shellTool = "run_shell_command"): ModelServer {
  const offersShell = (body: any) =>
    Array.isArray(body.tools) && body.tools.some((t: { function?: { name?: string } }) => t.function?.name === shellTool);
  return scriptedServer(script, offersShell, (path, body, step, n) => {
    if (!path.endsWith("/chat/completions")) {
      return Response.json({ object: "list", data: ["mock-model", "gpt-4.1"].map((id) => ({ id, object: "model" })) });
    }
    const model = body.model ?? "mock-model";
    if (body.stream) return new Response(chatStream(model, n, step), { headers: { "content-type": "text/event-stream" } });
    const message =
      "text" in step
        ? { role: "assistant", content: step.text }
        : { role: "assistant", content: null, tool_calls: [{ id: `call_${n}`, type: "function", function: { name: step.tool, arguments: JSON.stringify(step.input) } }] };
    return Response.json({
      id: `chatcmpl-${n}`, object: "chat.completion", created: 0, model,
      choices: [{ index: 0, message, finish_reason: "text" in step ? "stop" : "tool_calls" }],
      usage: { prompt_tokens: 100, completion_tokens: 5, total_tokens: 105 },
    });
  });
}

/** One Gemini API response chunk: the step as a text or a function call part. */
function geminiChunk(model: string, step: Step): unknown {
  const part = "text" in step ? { text: step.text } : { functionCall: { name: step.tool, args: step.input } };
  return {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
    modelVersion: model,
  };
}

const declares = (body: any, name: string) =>
  Array.isArray(body.tools) && body.tools.some((t: { functionDeclarations?: { name?: string }[] }) => (t.functionDeclarations ?? []).some((d) => d.name === name));

/**
 * A scripted Gemini API, as Gemini CLI calls it through GOOGLE_GEMINI_BASE_URL: `models/<m>:streamGenerateContent
 * ?alt=sse` for the main loop (it declares run_shell_command), `:generateContent` and `:countTokens` on the side.
 */
export function geminiServer(script: ScriptStep[]): ModelServer {
  return scriptedServer(script, (body) => declares(body, "run_shell_command"), (path, body, step) => {
    const model = /models\/([^:]+):/.exec(path)?.[1] ?? "gemini";
    if (path.endsWith(":countTokens")) return Response.json({ totalTokens: 100 });
    if (path.endsWith(":streamGenerateContent")) {
      return new Response(`data: ${JSON.stringify(geminiChunk(model, step))}\r\n\r\n`, { headers: { "content-type": "text/event-stream" } });
    }
    if (path.endsWith(":generateContent")) return Response.json(geminiChunk(model, step));
    return Response.json({});
  });
}
