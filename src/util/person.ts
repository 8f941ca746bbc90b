/** People as git names them (`Name <email>`): shared by the terminal views and the dashboard page (no imports). */

/** The name of a `Name <email>` identity (its email when it has no name; the text itself when it is not one). */
export function personName(ident: string): string {
  const m = /^(.*?)\s*<([^>]*)>$/.exec(ident.trim());
  if (!m) return ident.trim();
  return m[1] || m[2]!;
}

/** True when `owner` (a key's owner) names the person of `author`: the whole identity, its name or its email. */
export function samePerson(author: string, owner: string): boolean {
  const o = owner.trim().toLowerCase();
  const m = /^(.*?)\s*<([^>]*)>$/.exec(author.trim());
  const parts = m ? [author.trim(), m[1]!, m[2]!] : [author.trim()];
  return parts.some((p) => p !== "" && p.toLowerCase() === o);
}
