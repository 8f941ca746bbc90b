import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { AiflareError } from "../errors.ts";
import { atomicWrite, ensureContextDir } from "./fsutil.ts";
import { CONTEXT_DIR } from "./session.ts";

/** The backend and redaction settings of a repository (`aiflare.yml` at the repo root, SPEC §3). */
export interface AiflareConfig {
  apiKey?: string;
  endpoint?: string;
  redact: {
    /** extra rules: a kind name and a regular expression */
    patterns: { kind: string; pattern: string }[];
    /** literals or /regex/ strings that are never redacted */
    allow: string[];
  };
  /** where the values came from, for messages */
  source: { file?: string; apiKey?: "file" | "env"; endpoint?: "file" | "env" };
}

const FileSchema = v.nullish(
  v.looseObject({
    api_key: v.optional(v.nullable(v.pipe(v.union([v.string(), v.number()]), v.transform(String)))),
    endpoint: v.optional(v.nullable(v.pipe(v.string(), v.url("endpoint must be a URL such as https://aiflare.example.com")))),
    redact: v.optional(
      v.nullable(
        v.object({
          patterns: v.optional(v.array(v.object({ kind: v.string(), pattern: v.string() })), []),
          allow: v.optional(v.array(v.string()), []),
        }),
      ),
    ),
  }),
);

/** The settings file at the repository root; git-ignored, since it may hold the API key. */
export const CONFIG_FILE = "aiflare.yml";

/**
 * Reads `aiflare.yml` (strict YAML) and applies `AIFLARE_API_KEY` / `AIFLARE_ENDPOINT` over it.
 * A missing file is no error; a malformed one is, with a message that names the problem.
 */
export function loadConfig(root: string, env: Record<string, string | undefined> = process.env): AiflareConfig {
  const file = join(root, CONFIG_FILE);
  let text: string | undefined;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    text = undefined;
  }
  let parsed: v.InferOutput<typeof FileSchema> = undefined;
  if (text !== undefined) {
    // yaml is only needed when the file exists; keep it off the hook hot paths
    const YAML = require("yaml") as typeof import("yaml");
    let doc: unknown;
    try {
      doc = YAML.parse(text);
    } catch (err) {
      throw new AiflareError("CONFIG", `${CONFIG_FILE} is not valid YAML: ${(err as Error).message.split("\n")[0]}`, {
        cause: err,
      });
    }
    const result = v.safeParse(FileSchema, doc);
    if (!result.success) {
      const issue = result.issues[0];
      const path = v.getDotPath(issue) ?? "";
      throw new AiflareError("CONFIG", `${CONFIG_FILE}: ${path ? `${path}: ` : ""}${issue.message}`);
    }
    parsed = result.output;
  }
  const envKey = env.AIFLARE_API_KEY?.trim();
  const envEndpoint = env.AIFLARE_ENDPOINT?.trim();
  const fileKey = parsed?.api_key?.trim() || undefined;
  const fileEndpoint = parsed?.endpoint?.trim() || undefined;
  return {
    apiKey: envKey || fileKey,
    endpoint: (envEndpoint || fileEndpoint)?.replace(/\/+$/, ""),
    redact: { patterns: parsed?.redact?.patterns ?? [], allow: parsed?.redact?.allow ?? [] },
    source: {
      file: text !== undefined ? file : undefined,
      apiKey: envKey ? "env" : fileKey ? "file" : undefined,
      endpoint: envEndpoint ? "env" : fileEndpoint ? "file" : undefined,
    },
  };
}

/** Where the parsed `redact:` settings are kept between runs (beside the live session files). */
const REDACT_CACHE = "config-cache.json";

/**
 * The `redact:` settings of `aiflare.yml`, for the commit hook and `capture`: parsing YAML costs more than the
 * rest of a capture, so the parsed settings are kept in `.context-capture/` and reused while the file is
 * unchanged (same inode, size and modification time). Only the redaction settings are kept, never the key.
 * Throws like `loadConfig` for a malformed file.
 */
export function loadRedactConfig(root: string): AiflareConfig["redact"] {
  let stamp: string;
  try {
    const st = statSync(join(root, CONFIG_FILE));
    stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return { patterns: [], allow: [] };
  }
  const cache = join(root, CONTEXT_DIR, REDACT_CACHE);
  try {
    const saved = JSON.parse(readFileSync(cache, "utf8")) as { stamp?: unknown; redact?: AiflareConfig["redact"] };
    if (saved.stamp === stamp && saved.redact && Array.isArray(saved.redact.patterns) && Array.isArray(saved.redact.allow)) {
      return saved.redact;
    }
  } catch {
    // no cache yet, or an unreadable one: parse
  }
  const { redact } = loadConfig(root, {});
  try {
    ensureContextDir(root);
    atomicWrite(cache, JSON.stringify({ stamp, redact }), 0o600);
  } catch {
    // a cache that cannot be written only costs the next run a parse
  }
  return redact;
}

/** Shows only the last 4 characters of a key. */
export function maskKey(key: string): string {
  return key.length <= 4 ? "****" : `…${key.slice(-4)}`;
}
