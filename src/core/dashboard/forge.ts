/**
 * The link from an entry to its commit on the project's forge, from a URL template such as
 * `https://github.com/org/repo/commit/{sha}`. Display-only, yet a link the dashboard shows as the project's own:
 * only plain http(s) addresses without credentials in them are made.
 */

/** The commit page for `sha`, or null when the template gives no usable http(s) URL. */
export function forgeCommitUrl(template: string | null | undefined, sha: string): string | null {
  if (!template || !template.includes("{sha}")) return null;
  let url: URL;
  try {
    url = new URL(template.replaceAll("{sha}", sha));
  } catch {
    return null;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  if (url.username || url.password) return null;
  return url.href;
}

/** Why a template cannot be used, or null when it can. */
export function forgeTemplateProblem(template: string): string | null {
  if (!template.includes("{sha}")) return "it must contain {sha} where the commit hash goes, e.g. https://github.com/org/repo/commit/{sha}";
  if (!forgeCommitUrl(template, "0".repeat(40))) return "it must be an http:// or https:// URL without a user name or password in it";
  return null;
}
