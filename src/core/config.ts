/**
 * Settings and where they may come from (SPEC §9). A repository's own files are not trusted: settings that send
 * data somewhere or weaken redaction (`endpoint`, `api_key`, `redact.allow`, `recall`, `allow_insecure_http`) are
 * taken only from the environment, the user's config file, or an `aiflare.yml` the user made (untracked, owned by
 * the user, writable by no one else). `redact.patterns` only add redaction, so a tracked, team-shared file may set
 * them too. `forge_url` only draws a link in the dashboard, but one the dashboard presents as the project's own:
 * a cloned repository must not choose where it leads (a look-alike sign-in page), so it is trusted-only as well.
 */
import { lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import * as v from "valibot";
import { AiflareError } from "../errors.ts";
import { gitSync } from "../util/git.ts";
import { atomicWrite, ensureOwnDir, readOwnFile } from "./fsutil.ts";
import { CONFIG_FILE, RECALL_DEFAULTS, RECALL_OFF, recallOffByEnv, recallWithoutFiles, userConfigPath, type RecallSettings } from "./config-files.ts";
import { findRepo } from "./repo.ts";
import { forgeTemplateProblem } from "./dashboard/forge.ts";

export { CONFIG_FILE, RECALL_DEFAULTS, userConfigPath, type RecallSettings } from "./config-files.ts";

type Env = Record<string, string | undefined>;

/** Where a setting came from. */
export type SettingSource = "env" | "user" | "file";

/** A setting found and not used, and why. */
export interface IgnoredSetting {
  setting: string;
  /** the file (or variable) that held it */
  from: string;
  reason: string;
}

/** The backend and redaction settings in effect for a repository. */
export interface AiflareConfig {
  apiKey?: string;
  endpoint?: string;
  /** `http://` to a host other than loopback is allowed (the key would travel in clear) */
  allowInsecureHttp: boolean;
  /** the `recall` setting as written (SPEC §11), from a trusted place only */
  recall?: unknown;
  /** the dashboard's link to a commit on the forge: a URL template with `{sha}`, from a trusted place only */
  forgeUrl?: string;
  redact: {
    /** extra rules: a kind name and a regular expression */
    patterns: { kind: string; pattern: string }[];
    /** literals or /regex/ strings that are never redacted */
    allow: string[];
  };
  /** where the values came from, for messages */
  source: {
    /** the repository's aiflare.yml, when there is one */
    file?: string;
    /** the user's config file, when there is one */
    userFile?: string;
    apiKey?: SettingSource;
    endpoint?: SettingSource;
  };
  /** each setting in effect and where it came from ("endpoint" → "AIFLARE_ENDPOINT"), for doctor */
  origins: { setting: string; from: string }[];
  /** settings found and not used */
  ignored: IgnoredSetting[];
}

const Redact = v.object({
  patterns: v.optional(v.array(v.object({ kind: v.string(), pattern: v.string() })), []),
  allow: v.optional(v.array(v.string()), []),
});

const Section = {
  api_key: v.optional(v.nullable(v.pipe(v.union([v.string(), v.number()]), v.transform(String)))),
  endpoint: v.optional(v.nullable(v.pipe(v.string(), v.url("endpoint must be a URL such as https://aiflare.example.com")))),
  allow_insecure_http: v.optional(v.nullable(v.boolean())),
  recall: v.optional(v.unknown()),
  forge_url: v.optional(v.nullable(v.string())),
  redact: v.optional(v.nullable(Redact)),
};

const FileSchema = v.nullish(v.looseObject(Section));
const UserFileSchema = v.nullish(
  v.looseObject({ ...Section, repos: v.optional(v.nullable(v.record(v.string(), v.nullish(v.looseObject(Section))))) }),
);

type SectionData = NonNullable<v.InferOutput<typeof FileSchema>>;


/** Settings that send data somewhere or weaken redaction: never taken from a file the user does not control. */
export const TRUSTED_ONLY = ["endpoint", "api_key", "redact.allow", "recall", "allow_insecure_http", "forge_url"] as const;


function readIfPresent(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/** Parses strict YAML against `schema`; errors name `label`. */
function parseFile<S extends v.GenericSchema>(text: string, schema: S, label: string): v.InferOutput<S> {
  // yaml is only needed when a file exists; keep it off the hook hot paths
  const YAML = require("yaml") as typeof import("yaml");
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    throw new AiflareError("CONFIG", `${label} is not valid YAML: ${(err as Error).message.split("\n")[0]}`, { cause: err });
  }
  const result = v.safeParse(schema, doc);
  if (!result.success) {
    const issue = result.issues[0];
    const path = v.getDotPath(issue) ?? "";
    throw new AiflareError("CONFIG", `${label}: ${path ? `${path}: ` : ""}${issue.message}`);
  }
  return result.output;
}

/** Why a file may not set trusted-only settings, or null when it may: owned by this user, writable by no one else. */
function ownershipProblem(file: string): string | null {
  let st;
  try {
    st = statSync(file);
  } catch {
    return "it cannot be read";
  }
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return `it is owned by another user (uid ${st.uid})`;
  if ((st.mode & 0o022) !== 0) return "other users can write it";
  return null;
}

/** Why the repository's aiflare.yml is not the user's own (tracked by git, a link, someone else's), or null. */
function repoFileProblem(root: string, file: string, env: Env): string | null {
  try {
    if (lstatSync(file).isSymbolicLink()) {
      const real = realpathSync(file);
      const rootReal = realpathSync(root);
      if (!real.startsWith(`${rootReal}/`)) return "it is a symbolic link out of the repository";
    }
  } catch {
    return "it cannot be read";
  }
  const owner = ownershipProblem(file);
  if (owner) return owner;
  const r = gitSync(["ls-files", "-z", "--", CONFIG_FILE], { cwd: root, env });
  if (r.code === 0) return r.stdout.length > 0 ? "it is tracked by git (it came with the repository)" : null;
  return /not a git repository/i.test(r.stderr) ? null : "git could not say whether it is tracked";
}

/** The section of the user's config for the repository at `root` (keyed by its path, `~/` allowed). */
function repoSection(doc: NonNullable<v.InferOutput<typeof UserFileSchema>>, root: string, env: Env): SectionData | undefined {
  const repos = doc.repos;
  if (!repos) return undefined;
  const home = env.HOME || homedir();
  let rootReal = root;
  try {
    rootReal = realpathSync(root);
  } catch {
    // keep the path as given
  }
  for (const [key, section] of Object.entries(repos)) {
    const expanded = key.startsWith("~/") ? join(home, key.slice(2)) : key;
    if (!isAbsolute(expanded)) continue;
    const p = resolve(expanded).replace(/\/+$/, "");
    let real = p;
    try {
      real = realpathSync(p);
    } catch {
      // a path that does not exist matches only literally
    }
    if ((p === root || real === rootReal) && section) return section;
  }
  return undefined;
}

/** Patterns whose regular expression does not compile or could hang a hook, each with why. */
function patternProblems(patterns: { kind: string; pattern: string }[], label: string): Map<number, string> {
  const out = new Map<number, string>();
  if (patterns.length === 0) return out;
  // loaded only when there are patterns: the redactor stays off the hook hot paths
  const { checkUserPattern } = require("../redact/options.ts") as typeof import("../redact/options.ts");
  patterns.forEach((p, i) => {
    try {
      checkUserPattern(p, `redact.patterns[${i}]`);
    } catch (err) {
      out.set(i, `${label}: ${(err as Error).message}`);
    }
  });
  return out;
}

/** A setting is in effect: the first source that has it wins. */
function pick<T>(candidates: [T | undefined, SettingSource, string][]): { value?: T; source?: SettingSource; from?: string } {
  for (const [value, source, from] of candidates) if (value !== undefined) return { value, source, from };
  return {};
}

const str = (s: string | null | undefined) => (s == null ? undefined : s.trim() || undefined);

/**
 * The settings for the repository at `root`. Order, most specific first: environment (`AIFLARE_API_KEY`,
 * `AIFLARE_ENDPOINT`, `AIFLARE_ALLOW_INSECURE_HTTP`), the user's config section for this repository, the
 * repository's aiflare.yml when it is the user's own, the user's config top level. Trusted-only settings in an
 * aiflare.yml that came with the repository are ignored (and listed in `ignored`). A malformed file the user
 * controls is an error that names it; a malformed file that came with the repository is ignored.
 */
export function loadConfig(root: string, env: Env = process.env): AiflareConfig {
  const ignored: IgnoredSetting[] = [];

  // the user's own file
  const userFile = userConfigPath(env);
  const userText = readIfPresent(userFile);
  let userTop: SectionData | undefined;
  let userRepo: SectionData | undefined;
  if (userText !== undefined) {
    const problem = ownershipProblem(userFile);
    if (problem) {
      ignored.push({ setting: "everything", from: userFile, reason: `${problem}; fix its owner or mode (chmod 600)` });
    } else {
      const doc = parseFile(userText, UserFileSchema, userFile);
      userTop = doc ?? undefined;
      userRepo = doc ? repoSection(doc, root, env) : undefined;
    }
  }

  // the repository's file
  const file = join(root, CONFIG_FILE);
  const fileText = readIfPresent(file);
  let repoDoc: SectionData | undefined;
  let repoTrusted = false;
  if (fileText !== undefined) {
    let parsed: SectionData | undefined;
    let parseError: unknown;
    try {
      parsed = parseFile(fileText, FileSchema, CONFIG_FILE) ?? undefined;
    } catch (err) {
      parseError = err;
    }
    const holdsTrustedOnly =
      parseError !== undefined ||
      (parsed !== undefined &&
        (str(parsed.api_key) !== undefined ||
          str(parsed.endpoint) !== undefined ||
          (parsed.redact?.allow.length ?? 0) > 0 ||
          parsed.recall !== undefined ||
          parsed.allow_insecure_http != null ||
          str(parsed.forge_url) !== undefined));
    const problem = holdsTrustedOnly ? repoFileProblem(root, file, env) : null;
    repoTrusted = holdsTrustedOnly && problem === null;
    if (parseError !== undefined) {
      if (repoTrusted) throw parseError;
      ignored.push({ setting: "everything", from: CONFIG_FILE, reason: `${(parseError as Error).message} (and ${problem})` });
    } else if (parsed) {
      repoDoc = parsed;
      if (problem) {
        const dropped = [
          str(parsed.endpoint) !== undefined ? "endpoint" : "",
          str(parsed.api_key) !== undefined ? "api_key" : "",
          (parsed.redact?.allow.length ?? 0) > 0 ? "redact.allow" : "",
          parsed.recall !== undefined ? "recall" : "",
          parsed.allow_insecure_http != null ? "allow_insecure_http" : "",
          str(parsed.forge_url) !== undefined ? "forge_url" : "",
        ].filter(Boolean);
        for (const setting of dropped) {
          ignored.push({
            setting,
            from: CONFIG_FILE,
            reason: `${problem}; set it in the environment or in ${userFile} instead`,
          });
        }
      }
    }
  }
  const trustedRepo = repoTrusted ? repoDoc : undefined;

  const userRepoLabel = `${userFile} (repos: ${root})`;
  const envKey = str(env.AIFLARE_API_KEY);
  const envEndpoint = str(env.AIFLARE_ENDPOINT);
  const envHttp = str(env.AIFLARE_ALLOW_INSECURE_HTTP);
  const apiKey = pick<string>([
    [envKey, "env", "AIFLARE_API_KEY"],
    [str(userRepo?.api_key), "user", userRepoLabel],
    [str(trustedRepo?.api_key), "file", CONFIG_FILE],
    [str(userTop?.api_key), "user", userFile],
  ]);
  const endpoint = pick<string>([
    [envEndpoint, "env", "AIFLARE_ENDPOINT"],
    [str(userRepo?.endpoint), "user", userRepoLabel],
    [str(trustedRepo?.endpoint), "file", CONFIG_FILE],
    [str(userTop?.endpoint), "user", userFile],
  ]);
  const insecure = pick<boolean>([
    [envHttp === undefined ? undefined : envHttp !== "0" && envHttp.toLowerCase() !== "false", "env", "AIFLARE_ALLOW_INSECURE_HTTP"],
    [userRepo?.allow_insecure_http ?? undefined, "user", userRepoLabel],
    [trustedRepo?.allow_insecure_http ?? undefined, "file", CONFIG_FILE],
    [userTop?.allow_insecure_http ?? undefined, "user", userFile],
  ]);
  const recall = pick<unknown>([
    [userRepo?.recall, "user", userRepoLabel],
    [trustedRepo?.recall, "file", CONFIG_FILE],
    [userTop?.recall, "user", userFile],
  ]);
  const forge = pick<string>([
    [str(env.AIFLARE_FORGE_URL), "env", "AIFLARE_FORGE_URL"],
    [str(userRepo?.forge_url), "user", userRepoLabel],
    [str(trustedRepo?.forge_url), "file", CONFIG_FILE],
    [str(userTop?.forge_url), "user", userFile],
  ]);
  // a link that cannot be made is left out, not an error: it must not stop a sync or a capture
  const forgeProblem = forge.value === undefined ? null : forgeTemplateProblem(forge.value);
  if (forgeProblem) ignored.push({ setting: "forge_url", from: forge.from!, reason: forgeProblem });

  // redact.patterns from every file (they only add redaction); a pattern that could hang a hook is left out
  const patterns: { kind: string; pattern: string }[] = [];
  const patternOrigins: string[] = [];
  const fromFile = (d: SectionData | undefined, label: string, usersOwn: () => boolean) => {
    const list = d?.redact?.patterns ?? [];
    const problems = patternProblems(list, label);
    list.forEach((p, i) => {
      const problem = problems.get(i);
      // the user's own broken pattern is an error they must see; one that came with the repository is skipped
      if (problem && usersOwn()) throw new AiflareError("CONFIG", `${problem}; fix it in ${label}`);
      if (problem) ignored.push({ setting: `redact.patterns[${i}]`, from: label, reason: problem.replace(`${label}: `, "") });
      else patterns.push(p);
    });
    if (list.length > problems.size) patternOrigins.push(label);
  };
  fromFile(userTop, userFile, () => true);
  fromFile(userRepo, userRepoLabel, () => true);
  fromFile(repoDoc, CONFIG_FILE, () => repoTrusted || repoFileProblem(root, file, env) === null);

  const allow = [...(userTop?.redact?.allow ?? []), ...(userRepo?.redact?.allow ?? []), ...(trustedRepo?.redact?.allow ?? [])];
  const allowOrigins = [
    userTop?.redact?.allow.length ? userFile : "",
    userRepo?.redact?.allow.length ? userRepoLabel : "",
    trustedRepo?.redact?.allow.length ? CONFIG_FILE : "",
  ].filter(Boolean);

  if (apiKey.value !== undefined && !/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(apiKey.value)) {
    throw new AiflareError(
      "CONFIG",
      `api_key from ${apiKey.from} holds a newline, a control or a non-ASCII character, so it cannot be sent as an ` +
        "HTTP header; copy the key again without them",
    );
  }
  if (endpoint.value !== undefined && !/^https?:\/\//i.test(endpoint.value)) {
    throw new AiflareError("CONFIG", `endpoint from ${endpoint.from} must start with https:// (it is ${JSON.stringify(endpoint.value.slice(0, 60))})`);
  }

  const origins: { setting: string; from: string }[] = [];
  if (endpoint.from) origins.push({ setting: "endpoint", from: endpoint.from });
  if (apiKey.from) origins.push({ setting: "api_key", from: apiKey.from });
  if (insecure.from) origins.push({ setting: "allow_insecure_http", from: insecure.from });
  if (recall.from) origins.push({ setting: "recall", from: recall.from });
  if (forge.from && !forgeProblem) origins.push({ setting: "forge_url", from: forge.from });
  if (patternOrigins.length) origins.push({ setting: "redact.patterns", from: patternOrigins.join(", ") });
  if (allowOrigins.length) origins.push({ setting: "redact.allow", from: allowOrigins.join(", ") });

  return {
    apiKey: apiKey.value,
    endpoint: endpoint.value?.replace(/\/+$/, ""),
    allowInsecureHttp: insecure.value === true,
    recall: recall.value,
    forgeUrl: forgeProblem ? undefined : forge.value,
    redact: { patterns, allow },
    source: {
      file: fileText !== undefined ? file : undefined,
      userFile: userText !== undefined ? userFile : undefined,
      apiKey: apiKey.source,
      endpoint: endpoint.source,
    },
    origins,
    ignored,
  };
}

/** Shows only the last 4 characters of a key. */
export function maskKey(key: string): string {
  return key.length <= 4 ? "****" : `…${key.slice(-4)}`;
}

/** A file's identity and state for the redact-settings cache: any change to it (or its mode or owner) misses. */
function stamp(path: string): string {
  try {
    const l = lstatSync(path);
    const st = l.isSymbolicLink() ? statSync(path) : l;
    return `${l.isSymbolicLink() ? "L" : ""}${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.mode}:${st.uid}`;
  } catch {
    return "-";
  }
}

/**
 * The `redact:` settings in effect for the repository at `root`, for the commit hook and `capture`: parsing YAML
 * costs more than the rest of a capture, so the result of `loadConfig` is kept in `<git common dir>/aiflare/` and
 * reused while nothing it depends on changed: the user's config file, the repository's aiflare.yml (content,
 * link, mode, owner), the git index (whether aiflare.yml is tracked) and where the user's file is. Only the
 * redaction settings are kept, never a key. Throws like `loadConfig`.
 */
export function loadRedactConfig(root: string, env: Env = process.env): AiflareConfig["redact"] {
  const userFile = userConfigPath(env);
  const repoFile = join(root, CONFIG_FILE);
  const repo = findRepo(root);
  const parts = [userFile, stamp(userFile), root, stamp(repoFile)];
  // Nothing to parse: no file, no cache.
  if (parts[1] === "-" && parts[3] === "-") return { patterns: [], allow: [] };
  if (!repo) return loadConfig(root, env).redact;
  parts.push(stamp(join(repo.gitDir, "index")));
  const key = parts.join("\n");
  const dir = join(repo.commonDir, "aiflare");
  const cache = join(dir, "redact-cache.json");
  try {
    const saved = JSON.parse(readOwnFile(cache) ?? "null") as { key?: unknown; redact?: AiflareConfig["redact"] } | null;
    if (saved?.key === key && Array.isArray(saved.redact?.patterns) && Array.isArray(saved.redact?.allow)) return saved.redact;
  } catch {
    // no cache or an unreadable one: parse
  }
  const { redact } = loadConfig(root, env);
  try {
    ensureOwnDir(repo.commonDir, dir);
    atomicWrite(cache, JSON.stringify({ key, redact }), 0o600);
  } catch {
    // a cache that cannot be written only costs the next run a parse
  }
  return redact;
}

const RecallSchema = v.nullish(
  v.union([
    v.boolean(),
    v.strictObject({
      edit: v.optional(v.boolean(), true),
      sessionStart: v.optional(v.boolean(), true),
      maxChars: v.optional(v.pipe(v.number(), v.integer(), v.minValue(200), v.maxValue(8000)), RECALL_DEFAULTS.maxChars),
    }),
  ]),
);

/**
 * The recall settings from the `recall` value in effect (`from` names where it was written) and
 * `AIFLARE_RECALL=0`, which turns recall off. Throws CONFIG, naming the file, on a value of the wrong shape.
 */
export function recallSettings(value: unknown, from: string | undefined, env: Env = process.env): RecallSettings {
  if (recallOffByEnv(env)) return { ...RECALL_OFF };
  const result = v.safeParse(RecallSchema, value);
  if (!result.success) {
    const issue = result.issues[0];
    const path = v.getDotPath(issue);
    throw new AiflareError("CONFIG", `${from ?? CONFIG_FILE}: recall${path ? `.${path}` : ""}: ${issue.message}`);
  }
  const r = result.output;
  if (r === false) return { ...RECALL_OFF };
  if (r === true || r == null) return { ...RECALL_DEFAULTS };
  return r;
}

/**
 * The recall settings alone, with where they were set. YAML is parsed only when the repository's aiflare.yml or
 * the user's config file mentions `recall`.
 */
export function loadRecallSettings(root: string, env: Env = process.env): RecallSettings {
  const quick = recallWithoutFiles(root, env);
  if (quick) return quick;
  const config = loadConfig(root, env);
  const from = config.origins.find((o) => o.setting === "recall")?.from;
  return { ...recallSettings(config.recall, from, env), from };
}
