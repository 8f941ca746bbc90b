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

/** One file of a commit's diff stat; counts are null for a binary file, `from` names a renamed file's old path. */
export interface DiffStatLine {
  path: string;
  from?: string;
  added: number | null;
  removed: number | null;
}

/** A commit's diff as git gives it (`aiflare ui` only: the team server has no git). */
export interface CommitDiff {
  stat: DiffStatLine[];
  /** more files changed than the stat lists */
  statTruncated: boolean;
  patch: string;
  /** the patch was cut at its size cap */
  patchTruncated: boolean;
}

/** The entry answer's `commit`: how to see the commit itself. */
export interface CommitFacts {
  /** the command that shows the commit in a clone: `git show <sha>` */
  show: string;
  /** the commit's page on the project's forge, when a URL template is configured */
  forgeUrl: string | null;
  /** null when git is not at hand: see `diffMissing` */
  diff: CommitDiff | null;
  /** "remote": the team server keeps no patches; "gone": the commit is not in this repository (rewritten, pruned) */
  diffMissing?: "remote" | "gone";
}

/** One commit of a file answer (`aiflare ui`, from git): entries and the commits that have none. */
export interface FileCommit {
  commitHash: string;
  subject: string;
  author: string;
  date: string;
  /** the path the commit changed, when it was another name of the file (before a rename) */
  pathThen?: string;
}

/** A file under a directory answer, its renamed selves merged into one. */
export interface DirectoryFile {
  path: string;
  /** the names it had before, newest first */
  formerPaths: string[];
  commits: number;
}
