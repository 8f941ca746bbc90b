/** The read API's JSON answers, apart from the API itself: the server answers with them before it has loaded it. */

export function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" },
  });
}

/** The contract's error answer: `{"error": message}`. */
export function apiError(status: number, message: string): Response {
  return json({ error: message }, status);
}
