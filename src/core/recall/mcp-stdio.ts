/**
 * The MCP stdio transport of `aiflare mcp`: one JSON-RPC message per line. A request line longer than the cap is
 * answered with a JSON-RPC error without ever being held whole, and so is a line that is not a JSON-RPC message;
 * the server keeps serving after either (the SDK's own transport closes the connection on a line over 10 MB).
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { LineReader } from "../../util/lines.ts";

/** No tool call needs more than a path, a range and a few words: a request line is at most 4 MB. */
export const MAX_MCP_REQUEST = 4 * 1024 * 1024;

type Id = string | number | null;

function idOf(value: unknown): Id {
  const id = value && typeof value === "object" ? (value as { id?: unknown }).id : undefined;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

/** MCP over a pair of streams (stdin and stdout by default), each message one line of JSON. */
export class StdioLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly reader: LineReader;
  private readonly decoder = new TextDecoder();
  private closed = false;

  constructor(
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stdout,
    max = MAX_MCP_REQUEST,
  ) {
    this.reader = new LineReader(max, (bytes) =>
      this.reject(null, ErrorCode.InvalidRequest, `Invalid Request: ${bytes} bytes on one line, more than the ${max} a request may have`),
    );
  }

  private readonly onData = (chunk: Uint8Array | string) => {
    for (const line of this.reader.push(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk)) this.handle(line);
  };

  private readonly onEnd = () => {
    for (const line of this.reader.end()) this.handle(line);
    void this.close();
  };

  private readonly onError = (error: Error) => this.onerror?.(error);

  async start(): Promise<void> {
    this.input.on("data", this.onData);
    this.input.on("end", this.onEnd);
    this.input.on("error", this.onError);
  }

  private handle(bytes: Uint8Array): void {
    const text = this.decoder.decode(bytes);
    if (!text.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.reject(null, ErrorCode.ParseError, "Parse error: each message is one line of JSON");
      return;
    }
    const message = JSONRPCMessageSchema.safeParse(value);
    if (!message.success) {
      this.reject(idOf(value), ErrorCode.InvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message");
      return;
    }
    this.onmessage?.(message.data);
  }

  /** Answers a line that could not be taken with a JSON-RPC error (id null when it cannot be known). */
  private reject(id: Id, code: ErrorCode, message: string): void {
    this.send({ jsonrpc: "2.0", id, error: { code, message } } as JSONRPCMessage).catch((err: Error) => this.onerror?.(err));
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once("drain", () => resolve());
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off("data", this.onData);
    this.input.off("end", this.onEnd);
    this.input.off("error", this.onError);
    this.input.pause();
    this.onclose?.();
  }
}
