/**
 * `aiflare ui`'s sign-in from the printed URL: the secret in its fragment (`#token=…`, never sent to a server) is
 * taken out of the address bar and the history, then traded for a session whose answer also carries the page's
 * first read (`?first=`), so the first screen needs no round trip of its own. The boot script starts it as soon as
 * it arrives; the page's script takes its answer up (or starts it itself, when it runs first). No imports beyond
 * the shared first read: the boot script stays a few hundred bytes.
 */
import { FIRST_READ } from "../../core/dashboard/first-read.ts";

/** What the sign-in brought: the session and the answer of the read it named (`read`). */
export interface SignedIn {
  session?: string;
  read: string;
  first?: unknown;
}

declare global {
  interface Window {
    /** the sign-in the boot script started, for the page's script to take up */
    aiflareSignIn?: Promise<SignedIn | undefined>;
  }
}

/**
 * Starts the sign-in if the address still carries a secret (nothing otherwise). Undefined when the server refuses
 * it (a code already used: the launcher opened again leaves this tab's session untouched) or is gone.
 */
export function signInFromFragment(): Promise<SignedIn | undefined> | undefined {
  const m = /^#token=([\w-]+)$/.exec(location.hash);
  if (!m) return undefined;
  history.replaceState(null, "", location.pathname + location.search);
  const read = FIRST_READ;
  return fetch(`/api/v1/auth/login?first=${encodeURIComponent(read)}`, { method: "POST", headers: { Authorization: `Bearer ${m[1]}`, Accept: "application/json" } })
    .then(async (res) => (res.ok ? { ...((await res.json()) as { session?: string; first?: unknown }), read } : undefined))
    .catch(() => undefined);
}
