import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { AiflareError } from "../errors.ts";

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
  /** what recall reads back to the agent (SPEC §11) */
  recall: RecallSettings;
  /** where the values came from, for messages */
  source: { file?: string; apiKey?: "file" | "env"; endpoint?: "file" | "env" };
}

/** `recall:` in aiflare.yml: `false` turns it all off, or which parts run and how much text they may add. */
export interface RecallSettings {
  /** context on PreToolUse of a file-editing tool */
  edit: boolean;
  /** context on SessionStart (and the handoff after /clear) */
  sessionStart: boolean;
  /** the most characters one edit's context may take */
  maxChars: number;
}

export const RECALL_DEFAULTS: RecallSettings = { edit: true, sessionStart: true, maxChars: 1500 };

const RecallSchema = v.optional(
  v.nullable(
    v.union([
      v.boolean(),
      v.object({
        edit: v.optional(v.boolean(), true),
        sessionStart: v.optional(v.boolean(), true),
        maxChars: v.optional(v.pipe(v.number(), v.integer(), v.minValue(200), v.maxValue(8000)), RECALL_DEFAULTS.maxChars),
      }),
    ]),
  ),
);

function recallFrom(value: v.InferOutput<typeof RecallSchema>, env: Record<string, string | undefined>): RecallSettings {
  if (/^(0|false|off|no)$/i.test(env.AIFLARE_RECALL?.trim() ?? "")) return { ...RECALL_DEFAULTS, edit: false, sessionStart: false };
  if (value === false) return { ...RECALL_DEFAULTS, edit: false, sessionStart: false };
  if (value === true || value == null) return { ...RECALL_DEFAULTS };
  return value;
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
    recall: RecallSchema,
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
    recall: recallFrom(parsed?.recall, env),
    source: {
      file: text !== undefined ? file : undefined,
      apiKey: envKey ? "env" : fileKey ? "file" : undefined,
      endpoint: envEndpoint ? "env" : fileEndpoint ? "file" : undefined,
    },
  };
}

/**
 * The recall settings alone, for the hooks: YAML is parsed only when the file has a `recall:` key, so an edit
 * in a repository that keeps the defaults costs one file read. Throws like `loadConfig` on a bad file.
 */
export function loadRecallSettings(root: string, env: Record<string, string | undefined> = process.env): RecallSettings {
  let text = "";
  try {
    text = readFileSync(join(root, CONFIG_FILE), "utf8");
  } catch {
    // no file: the defaults
  }
  if (!/^recall\s*:/m.test(text)) return recallFrom(undefined, env);
  return loadConfig(root, env).recall;
}

/** Shows only the last 4 characters of a key. */
export function maskKey(key: string): string {
  return key.length <= 4 ? "****" : `…${key.slice(-4)}`;
}
