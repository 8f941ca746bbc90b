/**
 * Home directories: `/home/alice/x`, `/Users/alice/x`, `C:\Users\alice\x` (also JSON-escaped, and right after an
 * escaped line break or tab, `…\n/Users/alice`) become `~/x`.
 */

const USER = String.raw`[^\/\\\s"'\x60:<>()\[\]{},;|*?]+`;
const HOME_RE = new RegExp(
  String.raw`(?:(?<=file:\/\/)|(?<=\\[nrt])|(?<![\w.~%\/-]))\/(?:home|Users)\/${USER}` +
    String.raw`|(?:(?<=\\[nrt])|(?<![A-Za-z]))[A-Za-z]:(?:\\\\|\\|\/)Users(?:\\\\|\\|\/)${USER}`,
  "g",
);

/** Replaces home directory prefixes with `~`, keeping the separator that follows. */
export function redactHome(text: string): string {
  if (!text.includes("/home/") && !text.includes("Users")) return text;
  return text.replace(HOME_RE, "~");
}
