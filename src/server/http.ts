/** Small HTTP pieces of the server: JSON answers, errors with a status, bodies read under a size cap. */

/** A failure the client caused or must know about, answered as `{"error": message}` with `status`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** A JSON answer; never cached, never sniffed. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff", ...headers },
  });
}

/** The answer for an HttpError. */
export function errorResponse(err: HttpError): Response {
  return json({ error: err.message, ...err.extra }, err.status, err.headers);
}

/** Reads the body as text, refusing (413) before reading more than `max` bytes, whatever Content-Length says. */
export async function readBody(req: Request, max: number): Promise<string> {
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > max) throw tooLarge(max);
  if (!req.body) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch {
      // the client went away mid-upload (or gave up waiting): nothing to store
      throw new HttpError(400, "the body was cut off before its end");
    }
    const { done, value } = chunk;
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      throw tooLarge(max);
    }
    chunks.push(value);
  }
  return new TextDecoder("utf-8", { fatal: false }).decode(Buffer.concat(chunks));
}

function tooLarge(max: number): HttpError {
  // the rest of the body stays unread: close the connection rather than keep it for another request
  return new HttpError(413, `the body is larger than ${Math.round(max / 1024 / 1024)} MiB`, {}, { connection: "close" });
}

/** Parses a JSON body that must be an object. */
export function parseObject(text: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, "the body is not valid JSON");
  }
  if (!body || typeof body !== "object" || Array.isArray(body)) throw new HttpError(400, "the body must be a JSON object");
  return body as Record<string, unknown>;
}

/** The value of cookie `name`, or null. */
export function cookie(req: Request, name: string): string | null {
  for (const part of (req.headers.get("cookie") ?? "").split(";")) {
    const i = part.indexOf("=");
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return null;
}

/** The credential of an `Authorization: Bearer <value>` header, or null. */
export function bearer(req: Request): string | null {
  return /^Bearer (\S+)$/.exec(req.headers.get("authorization") ?? "")?.[1] ?? null;
}

/** True for a Host naming this machine's loopback (`localhost`, `*.localhost`, 127.0.0.0/8, `[::1]`), port or not. */
export function isLoopbackHost(host: string): boolean {
  const first = host.split(",")[0]!.trim().toLowerCase();
  const name = first.startsWith("[") ? first.slice(0, first.indexOf("]") + 1) : first.replace(/:\d*$/, "");
  return name === "localhost" || name.endsWith(".localhost") || name === "[::1]" || /^127(\.\d{1,3}){3}$/.test(name);
}
