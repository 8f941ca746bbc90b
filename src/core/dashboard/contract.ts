/**
 * Shapes of the dashboard's read API (README "Dashboard" / "Team server") that `aiflare ui`, `aiflare serve` and
 * the page itself share. Types only, with no imports, so the browser page can use them too.
 */

/** What one session looks like in a timeline answer. */
export interface SessionHeading {
  firstRequest: string | null;
  agentType: string;
  branch: string;
  start: string;
  end: string;
  commits: number;
}

/** A project's overview counts (`/api/v1/stats`). */
export interface Stats {
  entries: number;
  sessions: number;
  perTag: Record<string, number>;
  perDay: { day: string; count: number }[];
  topFiles: { path: string; count: number }[];
}
