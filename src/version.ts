declare const AIFLARE_VERSION: string | undefined;

/** The version baked in at build time (falls back to package.json when run from source). */
export const VERSION: string =
  typeof AIFLARE_VERSION === "string" ? AIFLARE_VERSION : (require("../package.json") as { version: string }).version;
