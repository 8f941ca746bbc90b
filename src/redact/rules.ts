/**
 * The rule table: one entry per kind of secret, each with a stable `kind` name.
 *
 * Token shapes of many vendor rules follow the public rule collection of gitleaks
 * (https://github.com/gitleaks/gitleaks, config/gitleaks.toml, MIT licence, Copyright (c) 2019 Zachary Rice),
 * rewritten for JavaScriptCore's regular expressions and this engine's keyword prefilter.
 *
 * A rule runs only when one of its lowercase `keywords` occurs in the text. When the regex has capture
 * groups, the first group that matched is the secret and only it is replaced; otherwise the whole match is.
 */
import type { RuleIndex, SubIndex } from "./engine.ts";
import { BUILTIN_HARD, BUILTIN_INDEX, BUILTIN_RULES } from "./rules-table.ts";
import { alnumMix, basicAuthLike, charClasses, entropy, isPlaceholder, passwordLike, strongTokenLike, tokenLike, urlPasswordLike } from "./checks.ts";

export interface Rule {
  /** stable name, shown as `<REDACTED:kind>` */
  kind: string;
  /** lowercase literals, at least 3 characters; the rule's regex runs only when one occurs */
  keywords: readonly string[];
  /** a global regex (with the `d` flag when it has groups); a built-in rule's is compiled when first used */
  readonly re: RegExp;
  /** the regex has capture groups: the first that matched is the secret (built-in rules say so without compiling it) */
  groups?: boolean;
  /** private keys, cloud and provider keys: stage two refuses a write that still holds one */
  hard: boolean;
  /** extra test on the secret text (entropy, placeholders) */
  readonly check?: (secret: string) => boolean;
  /** how far before a keyword the match may start (0: the match starts with the keyword) */
  back?: number;
}

interface RuleSpec {
  kind: string;
  keywords: string[];
  pattern: string;
  flags?: string;
  hard?: boolean;
  check?: (secret: string) => boolean;
  back?: number;
}

/**
 * Left and right token boundaries: a token is not part of a longer run of letters and digits. `_` is not a
 * boundary for `\b` but is one here, so `creds_AKIA….csv`, `token_ghp_…` and `ghp_…_old` are found. A leading
 * or trailing `\b` in a pattern below is compiled to these. A JSON escape (`\n`, `\t`) before a token is a boundary
 * too, so a token right after an escaped line break is found in JSON text as it is.
 */
const LB = String.raw`(?:(?<=\\[nrt])|(?<![A-Za-z0-9]))`;
const RB = String.raw`(?![A-Za-z0-9])`;
const L = LB;
const RD = String.raw`(?![A-Za-z0-9_-])`;
/** Left/right boundaries that also exclude base64 characters, for prefixes that occur inside base64 data. */
const L64 = String.raw`(?<![A-Za-z0-9+/_-])`;
const R64 = String.raw`(?![A-Za-z0-9+/=_-])`;

/** `= "` after a name, in env files, YAML, JSON (also JSON-escaped), code and prose ("is"). */
const OP = String.raw`\\?["']?\s{0,3}(?:=|:=|:|=>|\s(?:is|was)\b)\s{0,3}\\?["'\x60]?`;
/** The rest of a name (`_API_KEY`) and the operator. */
const ASSIGN = String.raw`[\w.-]{0,24}?${OP}`;
/** An assigned value: up to a quote, a backslash, whitespace or code punctuation. */
const VALUE = String.raw`[^\s"'\x60\\,;()\[\]{}<>|]`;
/** After a whole value: not a call (`getpass(prompt)` is code, not a password). */
const NOT_CALL = String.raw`(?!${VALUE}|\()`;
const UUID = String.raw`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`;

/** `firstsecond`, `first second`, `first_second`, `first-second` for each first word: the keywords of `first[ _-]?second`. */
const variants = (firsts: string[], second: string) => firsts.flatMap((f) => ["", " ", "_", "-"].map((sep) => `${f}${sep}${second}`));

/** A vendor key found by the vendor's name next to an assignment: `NAME…=value`. */
function named(kind: string, names: string[], value: string, opts: Partial<RuleSpec> = {}): RuleSpec {
  return {
    kind,
    keywords: names.map((n) => n.toLowerCase()),
    pattern: String.raw`(?:${names.join("|")})${ASSIGN}(${value})${RD}`,
    flags: "i",
    check: (s) => !isPlaceholder(s) && charClasses(s) >= 2,
    ...opts,
  };
}

/** A token with a literal prefix (`ghp_…`); keywords default to the prefix. */
function prefixed(kind: string, pattern: string, keywords: string[], opts: Partial<RuleSpec> = {}): RuleSpec {
  return { kind, keywords, pattern, ...opts };
}

/**
 * A body of `n` characters of class `cls`, accepting a near miss of a few characters either way: a token cut or
 * mistyped by a few characters is still a token. Pair with `nearMiss`, which asks an off-length body to look random.
 */
const len = (cls: string, n: number, slack = Math.max(3, Math.round(n / 8))) => `${cls}{${Math.max(1, n - slack)},${n + slack}}`;

/** Accepts a match of one of the documented `lengths`, or another length when it mixes letters and digits at high entropy. */
function nearMiss(...lengths: number[]): (s: string) => boolean {
  return (s) => lengths.includes(s.length) || (alnumMix(s) && entropy(s) >= 3.2);
}

/** A PEM body: base64, whitespace or JSON-escaped newlines, and RFC 1421 header lines. */
const PEM_BODY = String.raw`(?:[A-Za-z0-9+/=\s]|\\[nr]|(?:Proc-Type|DEK-Info|Comment|Version|Hash|Charset):[^\n\\]*){40,}`;
/** A PEM block, with its END line when present (a truncated key is redacted to its end). */
const pem = (label: string) => String.raw`-----BEGIN ${label}-----${PEM_BODY}(?:-----END ${label}-----)?`;

/**
 * The rule table, in priority order: one function per rule, called when that rule first runs. Most rules never run
 * in a process (their keywords are absent), and building every spec cost each redacting process milliseconds;
 * what the keyword scan needs of every rule is generated from this into rules-table.ts.
 */
function specs(): (() => RuleSpec)[] {
  return [
  // --- private keys (multi-line; also with JSON-escaped \n) ---
  () => prefixed("openssh-private-key", pem("OPENSSH PRIVATE KEY"), ["-----begin openssh"], { hard: true }),
  () => prefixed("pgp-private-key", pem("PGP PRIVATE KEY BLOCK"), ["-----begin pgp private"], { hard: true }),
  () => prefixed(
    "gcp-service-account-key",
    String.raw`"private_key"\s*:\s*"(-----BEGIN PRIVATE KEY-----(?:[A-Za-z0-9+/=]|\\[nr]){40,16384}-----END PRIVATE KEY-----(?:\\n)?)"`,
    ['"private_key"'],
    { hard: true },
  ),
  () => prefixed(
    "private-key",
    String.raw`-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY-----${PEM_BODY}(?:-----END[ A-Z0-9_-]{0,40}PRIVATE KEY-----)?`,
    ["-----begin"],
    { hard: true },
  ),
  () => prefixed(
    "putty-private-key",
    String.raw`PuTTY-User-Key-File-\d+:[\s\S]{1,16384}?Private-MAC:\s*[0-9a-fA-F]+`,
    ["putty-user-key-file"],
    { hard: true },
  ),
  () => prefixed("age-secret-key", String.raw`AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`, ["age-secret-key-1"], {
    hard: true,
  }),

  // --- cloud ---
  () => prefixed("aws-access-key-id", String.raw`\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)${len("[A-Z0-9]", 16)}\b`, ["akia", "asia", "abia", "acca", "a3t"], {
    hard: true,
    check: (s) => (s.length === 20 && /^.{4}[A-Z2-7]{16}$/.test(s)) || (/\d/.test(s.slice(4)) && new Set(s.slice(4)).size >= 8),
  }),
  () => ({
    kind: "aws-secret-access-key",
    keywords: ["aws", "secret_access_key", "secretaccesskey", "secret-access-key"],
    pattern: String.raw`(?:aws[\w.-]{0,20}?(?:secret|sk\b)|secret[_-]?access[_-]?key)${ASSIGN}([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])`,
    flags: "i",
    hard: true,
    check: (s) => charClasses(s) >= 3 && entropy(s) >= 3.5,
  }),
  () => ({
    // an access key id with its secret right after it, as AWS's credentials CSV, `aws configure` notes and pasted
    // pairs have them (`AKIA… secret`, `AKIA…:secret`, `AKIA…,secret`): the id names the secret, no keyword needed
    kind: "aws-secret-access-key",
    keywords: ["akia", "asia", "abia", "acca", "a3t"],
    pattern: String.raw`\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}["']?(?:\s{1,4}|\s{0,2}[:,;|=/]\s{0,2})["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])`,
    hard: true,
    check: (s) => charClasses(s) >= 3 && entropy(s) >= 3.5,
  }),
  () => ({
    kind: "aws-session-token",
    keywords: ["session_token", "sessiontoken", "session-token", "security_token", "securitytoken", "security-token"],
    pattern: String.raw`(?:session|security)[_-]?token${ASSIGN}([A-Za-z0-9/+]{100,2000}={0,2})(?![A-Za-z0-9/+=])`,
    flags: "i",
    hard: true,
  }),
  () => prefixed("aws-mws-key", String.raw`amzn\.mws\.${UUID}`, ["amzn.mws."], { hard: true }),
  () => prefixed("gcp-api-key", String.raw`${L}AIza${len("[\\w-]", 35)}${RD}`, ["aiza"], { hard: true, check: nearMiss(39) }),
  () => prefixed("google-oauth-client-secret", String.raw`${L}GOCSPX-${len("[\\w-]", 28)}${RD}`, ["gocspx-"], { hard: true, check: nearMiss(35) }),
  () => prefixed("google-oauth-access-token", String.raw`${L}ya29\.[\w-]{30,2000}${RD}`, ["ya29."], { hard: true }),
  () => prefixed("azure-storage-account-key", String.raw`AccountKey=([A-Za-z0-9+/]{86}==)`, ["accountkey="], { hard: true, flags: "i" }),
  () => prefixed(
    "azure-ad-client-secret",
    String.raw`(?<![\w~.-])[a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.-]{31,34}(?![\w~.-])`,
    [..."0123456789"].map((d) => `${d}q~`),
    { hard: true, back: 3 },
  ),
  () => prefixed("azure-sas-token", String.raw`[?&]sig=([A-Za-z0-9%+/]{40,100}(?:%3D|=){0,2})`, ["sig="], {
    hard: true,
    back: 1,
    check: (s) => charClasses(s) >= 3,
  }),
  () => named("azure-devops-pat", ["azure_devops", "azuredevops", "ado_pat", "ado_token", "devops_pat"], String.raw`[a-z2-7]{52}|[A-Za-z0-9]{84}`),
  () => prefixed("alibaba-access-key-id", String.raw`\bLTAI[A-Za-z0-9]{20}\b`, ["ltai"], { hard: true }),
  () => named("alibaba-secret-key", ["alibaba", "aliyun"], String.raw`[A-Za-z0-9]{30}`, { hard: true }),
  () => prefixed("digitalocean-pat", String.raw`\bdop_v1_${len("[a-f0-9]", 64)}\b`, ["dop_v1_"], { hard: true }),
  () => prefixed("digitalocean-oauth-token", String.raw`\bdoo_v1_${len("[a-f0-9]", 64)}\b`, ["doo_v1_"], { hard: true }),
  () => prefixed("digitalocean-refresh-token", String.raw`\bdor_v1_${len("[a-f0-9]", 64)}\b`, ["dor_v1_"], { hard: true }),
  () => named("heroku-api-key", ["heroku"], UUID, { hard: true }),
  () => prefixed("heroku-api-key-v2", String.raw`\bHRKU-AA[\w-]{58}${RD}`, ["hrku-aa"], { hard: true }),
  () => named("cloudflare-api-token", ["cloudflare", "cf_api_token", "cf_token"], String.raw`[\w-]{40}`, { hard: true }),
  () => named("cloudflare-global-api-key", ["cloudflare", "cf_api_key"], String.raw`[a-f0-9]{37}`, { hard: true }),
  () => prefixed("cloudflare-origin-ca-key", String.raw`\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b`, ["v1.0-"], { hard: true }),
  () => prefixed("databricks-api-token", String.raw`\bdapi[a-f0-9]{32}(?:-\d)?\b`, ["dapi"], { hard: true }),
  () => prefixed("hashicorp-tf-api-token", String.raw`\b[a-z0-9]{14}\.atlasv1\.[a-z0-9=_-]{60,70}${RD}`, [".atlasv1."], {
    hard: true,
    back: 14,
    flags: "i",
  }),
  () => prefixed("vault-service-token", String.raw`\bhvs\.[\w-]{90,120}${RD}`, ["hvs."], { hard: true }),
  () => prefixed("vault-batch-token", String.raw`\bhvb\.[\w-]{138,300}${RD}`, ["hvb."], { hard: true }),
  () => prefixed("flyio-access-token", String.raw`\bFlyV1 fm[12]_[A-Za-z0-9+/=,_-]{100,2000}`, ["flyv1 fm"], { hard: true }),
  () => prefixed("doppler-api-token", String.raw`\bdp\.pt\.[a-z0-9]{43}\b`, ["dp.pt."], { hard: true, flags: "i" }),
  () => prefixed("pulumi-api-token", String.raw`\bpul-${len("[a-f0-9]", 40)}\b`, ["pul-"], { hard: true }),
  () => prefixed("planetscale-api-token", String.raw`\bpscale_tkn_[\w=.-]{32,64}`, ["pscale_tkn_"], { hard: true }),
  () => prefixed("planetscale-password", String.raw`\bpscale_pw_[\w=.-]{32,64}`, ["pscale_pw_"], { hard: true }),
  () => prefixed("planetscale-oauth-token", String.raw`\bpscale_oauth_[\w=.-]{32,64}`, ["pscale_oauth_"], { hard: true }),
  () => prefixed("supabase-access-token", String.raw`\bsbp_${len("[a-f0-9]", 40)}\b`, ["sbp_"], { hard: true }),
  () => named("netlify-access-token", ["netlify"], String.raw`[\w=-]{40,46}`, { hard: true }),
  () => prefixed("tailscale-key", String.raw`\btskey-(?:auth|api|client|webhook|scim)-[A-Za-z0-9]{6,20}-[A-Za-z0-9]{20,60}\b`, ["tskey-"], {
    hard: true,
  }),
  () => prefixed("scalingo-api-token", String.raw`\btk-us-[\w-]{48}${RD}`, ["tk-us-"], { hard: true }),

  // --- source hosts and registries ---
  () => prefixed("github-pat", String.raw`\bghp_${len("[0-9a-zA-Z]", 36, 6)}\b`, ["ghp_"], { hard: true, check: nearMiss(40) }),
  () => prefixed("github-oauth-token", String.raw`\bgho_${len("[0-9a-zA-Z]", 36, 6)}\b`, ["gho_"], { hard: true, check: nearMiss(40) }),
  () => prefixed("github-app-token", String.raw`\b(?:ghu|ghs)_${len("[0-9a-zA-Z]", 36, 6)}\b`, ["ghu_", "ghs_"], { hard: true, check: nearMiss(40) }),
  () => prefixed("github-refresh-token", String.raw`\bghr_[0-9a-zA-Z]{30,80}\b`, ["ghr_"], { hard: true }),
  () => prefixed("github-fine-grained-pat", String.raw`\bgithub_pat_${len("[0-9a-zA-Z_]", 82)}\b`, ["github_pat_"], { hard: true, check: nearMiss(93) }),
  () => prefixed("gitlab-pat", String.raw`\bglpat-[\w.-]{20,80}${RD}`, ["glpat-"], { hard: true }),
  () => prefixed("gitlab-pipeline-trigger-token", String.raw`\bglptt-${len("[0-9a-f]", 40)}\b`, ["glptt-"], { hard: true }),
  () => prefixed("gitlab-runner-registration-token", String.raw`\bGR1348941[\w-]{20}${RD}`, ["gr1348941"], { hard: true }),
  () => prefixed("gitlab-runner-token", String.raw`\bglrt-[\w-]{20,60}${RD}`, ["glrt-"], { hard: true }),
  () => prefixed("gitlab-deploy-token", String.raw`\bgldt-[\w-]{20,60}${RD}`, ["gldt-"], { hard: true }),
  () => prefixed("gitlab-feed-token", String.raw`\bglft-[\w-]{20,60}${RD}`, ["glft-"], { hard: true }),
  () => prefixed("gitlab-oauth-app-secret", String.raw`\bgloas-[\w-]{64}${RD}`, ["gloas-"], { hard: true }),
  () => prefixed("gitlab-scim-token", String.raw`\bglsoat-[\w-]{20,60}${RD}`, ["glsoat-"], { hard: true }),
  () => prefixed("gitlab-kubernetes-agent-token", String.raw`\bglagent-[\w-]{50,80}${RD}`, ["glagent-"], { hard: true }),
  () => prefixed("gitlab-incoming-mail-token", String.raw`\bglimt-[\w-]{25,60}${RD}`, ["glimt-"], { hard: true }),
  () => prefixed("gitlab-cicd-job-token", String.raw`\bglcbt-[0-9a-zA-Z]{1,5}_[\w-]{20,60}${RD}`, ["glcbt-"], { hard: true }),
  () => prefixed("bitbucket-app-password", String.raw`\bATBB[A-Za-z0-9_=.-]{32}${RD}`, ["atbb"], { hard: true }),
  () => named("bitbucket-client-secret", ["bitbucket"], String.raw`[\w=-]{64}`, { hard: true }),
  () => prefixed("atlassian-api-token", String.raw`\bATATT3[A-Za-z0-9_=-]{186}${RD}`, ["atatt3"], { hard: true }),
  () => prefixed("sourcegraph-access-token", String.raw`\bsgp_(?:(?:[a-fA-F0-9]{16}|local)_)?[a-fA-F0-9]{40}\b`, ["sgp_"], { hard: true }),
  () => prefixed("npm-access-token", String.raw`\bnpm_${len("[A-Za-z0-9]", 36, 6)}\b`, ["npm_"], { hard: true, check: nearMiss(40) }),
  () => prefixed("npmrc-auth-token", String.raw`(?<![\w.-])_auth(?:Token)?\s*=\s*["']?([A-Za-z0-9+/=._~-]{16,})(?![^\s"'])`, ["_authtoken", "_auth"], {
    hard: true,
    check: (s) => !isPlaceholder(s),
  }),
  () => prefixed("pypi-upload-token", String.raw`\bpypi-AgEIcHlwaS5vcmc[\w-]{50,1000}${RD}`, ["pypi-ageichlwas5vcmc"], { hard: true }),
  () => prefixed("rubygems-api-token", String.raw`\brubygems_${len("[a-f0-9]", 48)}\b`, ["rubygems_"], { hard: true }),
  () => prefixed("nuget-api-key", String.raw`\boy2[a-z0-9]{43}\b`, ["oy2"], { hard: true, check: alnumMix }),
  () => prefixed("dockerhub-pat", String.raw`\bdckr_pat_${len("[\\w-]", 27)}${RD}`, ["dckr_pat_"], { hard: true }),
  () => prefixed("docker-config-auth", String.raw`\\?"auth\\?"\s*:\s*\\?"([A-Za-z0-9+/]{12,}={0,2})\\?"`, ['auth\\"', 'auth"'], {
    back: 2,
    check: basicAuthLike,
  }),
  () => prefixed("clojars-api-token", String.raw`\bCLOJARS_[a-z0-9]{60}\b`, ["clojars_"], { hard: true, flags: "i" }),
  () => prefixed("artifactory-api-key", String.raw`\bAKCp[A-Za-z0-9]{69}\b`, ["akcp"], { hard: true }),
  () => prefixed("artifactory-reference-token", String.raw`\bcmVmd[A-Za-z0-9]{59}\b`, ["cmvmd"], { hard: true }),
  () => prefixed("sonarqube-token", String.raw`\bsq[upa]_${len("[a-f0-9]", 40)}\b`, ["squ_", "sqp_", "sqa_"], { hard: true }),
  () => named("snyk-api-token", ["snyk"], UUID, { hard: true }),
  () => named("codecov-access-token", ["codecov"], String.raw`[a-z0-9]{32}|${UUID}`, { hard: true }),

  // --- AI providers ---
  () => prefixed(
    "openai-api-key",
    String.raw`\bsk-(?:(?:proj|svcacct|admin)-[\w-]{20,300}|[A-Za-z0-9]{16,24}T3BlbkFJ[A-Za-z0-9]{16,24})${RD}`,
    ["sk-proj-", "sk-svcacct-", "sk-admin-", "t3blbkfj"],
    { hard: true, back: 27 },
  ),
  () => prefixed("anthropic-api-key", String.raw`\bsk-ant-api\d{2}-[\w-]{80,120}${RD}`, ["sk-ant-api"], { hard: true }),
  () => prefixed("anthropic-admin-key", String.raw`\bsk-ant-admin\d{2}-[\w-]{80,120}${RD}`, ["sk-ant-admin"], { hard: true }),
  () => prefixed("huggingface-access-token", String.raw`\bhf_${len("[A-Za-z0-9]", 34, 5)}\b`, ["hf_"], {
    hard: true,
    check: (s) => /[a-z]/.test(s) && /[A-Z]/.test(s.slice(3)),
  }),
  () => prefixed("huggingface-org-token", String.raw`\bapi_org_[A-Za-z0-9]{34}\b`, ["api_org_"], { hard: true }),
  () => prefixed("groq-api-key", String.raw`\bgsk_${len("[A-Za-z0-9]", 52)}\b`, ["gsk_"], { hard: true, check: nearMiss(56) }),
  () => prefixed("perplexity-api-key", String.raw`\bpplx-${len("[A-Za-z0-9]", 48)}\b`, ["pplx-"], { hard: true, check: nearMiss(53) }),
  () => prefixed("replicate-api-token", String.raw`\br8_${len("[A-Za-z0-9]", 37)}\b`, ["r8_"], { hard: true, check: nearMiss(40) }),
  () => prefixed("openrouter-api-key", String.raw`\bsk-or-v1-${len("[a-f0-9]", 64)}\b`, ["sk-or-v1-"], { hard: true }),
  () => prefixed("xai-api-key", String.raw`\bxai-${len("[A-Za-z0-9]", 80)}\b`, ["xai-"], { hard: true, check: nearMiss(84) }),
  () => prefixed("langsmith-api-key", String.raw`\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\b`, ["lsv2_"], { hard: true }),
  () => named("cohere-api-key", ["cohere", "co_api_key"], String.raw`[A-Za-z0-9]{40}`, { hard: true }),
  () => named("mistral-api-key", ["mistral"], String.raw`[A-Za-z0-9]{32}`, { hard: true }),
  () => named("deepseek-api-key", ["deepseek"], String.raw`sk-[a-f0-9]{32}`, { hard: true }),
  () => named("pinecone-api-key", ["pinecone"], String.raw`pcsk_[A-Za-z0-9_]{40,120}|${UUID}`, { hard: true }),
  () => named("elevenlabs-api-key", ["elevenlabs", "xi_api_key", "xi-api-key"], String.raw`(?:sk_)?[a-f0-9]{32,48}`, { hard: true }),
  () => named("together-api-key", ["together_api_key", "together_ai", "togetherai"], String.raw`(?:tgp_v1_)?[A-Za-z0-9_-]{40,64}`, {
    hard: true,
  }),

  // --- payment ---
  () => prefixed("stripe-secret-key", String.raw`\bsk_(?:live|test)_[0-9a-zA-Z]{24,247}\b`, ["sk_live_", "sk_test_"], { hard: true }),
  () => prefixed("stripe-restricted-key", String.raw`\brk_(?:live|test)_[0-9a-zA-Z]{24,247}\b`, ["rk_live_", "rk_test_"], { hard: true }),
  () => prefixed("stripe-webhook-secret", String.raw`\bwhsec_[A-Za-z0-9+/=]{32,100}`, ["whsec_"], { hard: true }),
  () => prefixed("square-access-token", String.raw`${L64}(?:EAAA[\w-]{60}|sq0atp-[\w-]{22})${R64}`, ["eaaa", "sq0atp-"], { hard: true }),
  () => prefixed("square-secret", String.raw`\bsq0csp-[\w-]{43}${RD}`, ["sq0csp-"], { hard: true }),
  () => prefixed(
    "paypal-braintree-access-token",
    String.raw`access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}`,
    ["access_token$"],
    { hard: true },
  ),
  () => prefixed("plaid-access-token", String.raw`\baccess-(?:sandbox|development|production)-${UUID}\b`, ["access-sandbox-", "access-development-", "access-production-"], {
    hard: true,
  }),
  () => named("plaid-secret", ["plaid"], String.raw`[a-f0-9]{30}`, { hard: true }),
  () => prefixed("flutterwave-secret-key", String.raw`\bFLWSECK(?:_TEST)?-[a-hA-H0-9]{32}-X\b`, ["flwseck"], { hard: true }),
  () => prefixed("flutterwave-public-key", String.raw`\bFLWPUBK(?:_TEST)?-[a-hA-H0-9]{32}-X\b`, ["flwpubk"]),
  () => prefixed("shippo-api-token", String.raw`\bshippo_(?:live|test)_[a-f0-9]{40}\b`, ["shippo_"], { hard: true }),
  () => prefixed("easypost-api-token", String.raw`\bEZ[AT]K[A-Za-z0-9]{54}\b`, ["ezak", "eztk"], { hard: true }),
  () => prefixed("duffel-api-token", String.raw`\bduffel_(?:test|live)_[\w=-]{43}${RD}`, ["duffel_"], { hard: true }),
  () => prefixed("shopify-access-token", String.raw`\bshpat_${len("[a-fA-F0-9]", 32)}\b`, ["shpat_"], { hard: true }),
  () => prefixed("shopify-custom-access-token", String.raw`\bshpca_${len("[a-fA-F0-9]", 32)}\b`, ["shpca_"], { hard: true }),
  () => prefixed("shopify-private-app-access-token", String.raw`\bshppa_${len("[a-fA-F0-9]", 32)}\b`, ["shppa_"], { hard: true }),
  () => prefixed("shopify-shared-secret", String.raw`\bshpss_${len("[a-fA-F0-9]", 32)}\b`, ["shpss_"], { hard: true }),

  // --- messaging and email ---
  () => prefixed("slack-bot-token", String.raw`\bxoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*`, ["xoxb-"], { hard: true }),
  () => prefixed("slack-user-token", String.raw`\bxox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28,34}`, ["xoxp-", "xoxe-"], { hard: true }),
  () => prefixed("slack-app-token", String.raw`\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+`, ["xapp-"], { hard: true, flags: "i" }),
  () => prefixed("slack-config-access-token", String.raw`\bxoxe\.xox[bp]-\d-[A-Z0-9]{163,166}`, ["xoxe.xox"], { hard: true, flags: "i" }),
  () => prefixed("slack-config-refresh-token", String.raw`\bxoxe-\d-[A-Z0-9]{146}`, ["xoxe-"], { hard: true, flags: "i" }),
  () => prefixed("slack-legacy-token", String.raw`\bxox[osar]-\d+-\d+-\d+-[a-fA-F\d]+`, ["xoxo-", "xoxs-", "xoxa-", "xoxr-"], { hard: true }),
  () => prefixed("slack-webhook-url", String.raw`(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{40,60}`, ["hooks.slack.com/"], {
    hard: true,
    back: 8,
  }),
  () => prefixed("twilio-api-key", String.raw`\bSK[0-9a-fA-F]{32}\b`, [..."0123456789abcdef"].map((c) => `sk${c}`), { hard: true, check: alnumMix }),
  () => named("twilio-auth-token", ["twilio"], String.raw`[a-f0-9]{32}`, { hard: true }),
  () => prefixed("sendgrid-api-token", String.raw`\bSG\.${len("[\\w-]", 22)}\.${len("[\\w-]", 43)}${RD}`, ["sg."], { hard: true }),
  () => prefixed("mailgun-private-api-token", String.raw`\bkey-[a-f0-9]{32}\b`, ["key-"], { hard: true, check: alnumMix }),
  () => prefixed("mailgun-pub-key", String.raw`\bpubkey-[a-f0-9]{32}\b`, ["pubkey-"]),
  () => named("mailgun-signing-key", ["mailgun"], String.raw`[a-h0-9]{32}-[a-h0-9]{8}-[a-h0-9]{8}`, { hard: true }),
  () => prefixed("mailchimp-api-key", String.raw`\b[0-9a-f]{32}-us\d{1,2}\b`, ["-us"], { hard: true, back: 32 }),
  () => prefixed("brevo-api-key", String.raw`\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}\b`, ["xkeysib-"], { hard: true }),
  () => named("postmark-server-token", ["postmark"], UUID, { hard: true }),
  () => ({
    kind: "discord-bot-token",
    keywords: ["discord"],
    pattern: String.raw`(?:discord|DISCORD|Discord)[\s\S]{0,40}?\b([MNO][A-Za-z\d]{23,27}\.[\w-]{6}\.[\w-]{27,40})${RD}`,
    hard: true,
  }),
  () => prefixed("discord-webhook-url", String.raw`discord(?:app)?\.com/api/webhooks/\d{17,20}/[\w-]{60,72}`, ["discord.com/api/webhooks", "discordapp.com/api/webhooks"], {
    hard: true,
  }),
  () => prefixed("telegram-bot-token", String.raw`\b\d{8,10}:AA[\w-]{33}${RD}`, [":aa"], { hard: true, back: 10 }),
  () => prefixed(
    "microsoft-teams-webhook",
    String.raw`https://[a-z0-9-]+\.webhook\.office\.com/webhookb2/[a-z0-9-]{36}@[a-z0-9-]{36}/IncomingWebhook/[a-z0-9]{32}/[a-z0-9-]{36}(?:/[\w-]+)?`,
    ["webhook.office.com"],
    { flags: "i", hard: true, back: 80 },
  ),
  () => prefixed("twitter-bearer-token", String.raw`${L64}A{20,24}[A-Za-z0-9%]{70,130}${R64}`, ["aaaaaaaaaaaaaaaaaaaa"], {
    check: (s) => /%|[a-z]/.test(s) && /\d/.test(s),
  }),
  () => prefixed("facebook-access-token", String.raw`${L64}EAA[MC][A-Za-z0-9]{100,400}${R64}`, ["eaam", "eaac"], { hard: true }),
  () => prefixed("mapbox-secret-token", String.raw`\bsk\.eyJ[\w-]{20,}\.[\w-]{20,}${RD}`, ["sk.eyj"], { hard: true }),

  // --- observability, productivity, misc SaaS ---
  () => named("datadog-api-key", ["datadog_api_key", "dd_api_key", "datadog-api-key", "datadog_key"], String.raw`[a-f0-9]{32}`, { hard: true }),
  () => named("datadog-app-key", ["datadog_app_key", "dd_app_key", "dd_application_key", "datadog-app-key"], String.raw`[a-f0-9]{40}`, {
    hard: true,
  }),
  () => prefixed("new-relic-user-api-key", String.raw`\bNRAK-[A-Z0-9]{27}\b`, ["nrak-"], { hard: true, flags: "i" }),
  () => prefixed("new-relic-insert-key", String.raw`\bNRII-[\w-]{32}${RD}`, ["nrii-"], { hard: true }),
  () => prefixed("new-relic-browser-api-token", String.raw`\bNRJS-[a-f0-9]{19}\b`, ["nrjs-"], { hard: true }),
  () => prefixed("sentry-user-token", String.raw`\bsntryu_[a-f0-9]{64}\b`, ["sntryu_"], { hard: true }),
  () => prefixed("sentry-org-token", String.raw`\bsntrys_[A-Za-z0-9+/=_-]{60,500}`, ["sntrys_"], { hard: true }),
  () => prefixed("grafana-api-key", String.raw`\beyJrIjoi[A-Za-z0-9]{70,400}={0,2}`, ["eyjrijoi"], { hard: true }),
  () => prefixed("grafana-cloud-api-token", String.raw`\bglc_[A-Za-z0-9+/]{32,400}={0,2}`, ["glc_"], { hard: true }),
  () => prefixed("grafana-service-account-token", String.raw`\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b`, ["glsa_"], { hard: true }),
  () => prefixed("dynatrace-api-token", String.raw`\bdt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b`, ["dt0c01."], { hard: true, flags: "i" }),
  () => prefixed("linear-api-key", String.raw`\blin_api_${len("[a-z0-9]", 40)}\b`, ["lin_api_"], { hard: true, flags: "i" }),
  () => prefixed("notion-api-token", String.raw`\bntn_[0-9]{11}[A-Za-z0-9]{35}\b`, ["ntn_"], { hard: true }),
  () => prefixed("notion-integration-secret", String.raw`\bsecret_[A-Za-z0-9]{43}\b`, ["secret_"], { hard: true, check: alnumMix }),
  () => prefixed("airtable-pat", String.raw`\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b`, ["pat"], { hard: true }),
  () => prefixed("postman-api-token", String.raw`\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b`, ["pmak-"], { hard: true, flags: "i" }),
  () => prefixed("prefect-api-token", String.raw`\bpnu_[A-Za-z0-9]{36}\b`, ["pnu_"], { hard: true }),
  () => prefixed("readme-api-token", String.raw`\brdme_[a-z0-9]{70}\b`, ["rdme_"], { hard: true }),
  () => prefixed("typeform-api-token", String.raw`\btfp_[\w=.-]{59}${RD}`, ["tfp_"], { hard: true }),
  () => prefixed("frameio-api-token", String.raw`\bfio-u-[\w=-]{64}${RD}`, ["fio-u-"], { hard: true }),
  () => prefixed("contentful-pat", String.raw`\bCFPAT-[\w=-]{43}${RD}`, ["cfpat-"], { hard: true }),
  () => prefixed("adobe-client-secret", String.raw`\bp8e-[a-z0-9-]{32}${RD}`, ["p8e-"], { hard: true, flags: "i", check: alnumMix }),
  () => prefixed("onepassword-service-account-token", String.raw`\bops_eyJ[A-Za-z0-9+/]{250,}={0,3}`, ["ops_eyj"], { hard: true }),
  () => prefixed(
    "onepassword-secret-key",
    String.raw`\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b`,
    ["a3-"],
    { hard: true },
  ),
  () => prefixed("infracost-api-token", String.raw`\bico-[A-Za-z0-9]{32}\b`, ["ico-"], { hard: true }),
  () => prefixed("yandex-api-key", String.raw`\bAQVN[\w-]{35,38}${RD}`, ["aqvn"], { hard: true }),
  () => named("okta-access-token", ["okta"], String.raw`00[\w-]{40}`, { hard: true }),
  () => named("hubspot-api-key", ["hubspot"], String.raw`${UUID}|pat-(?:na|eu)\d-${UUID}`, { hard: true }),
  () => named("zendesk-secret-key", ["zendesk"], String.raw`[A-Za-z0-9]{40}`, { hard: true }),
  () => prefixed("dropbox-api-token", String.raw`\bsl\.(?:u\.)?[\w-]{130,1200}${RD}`, ["sl."], { hard: true }),
  () => prefixed("jwt", String.raw`\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{10,}${RD}`, ["eyj"]),

  // --- connection strings with a password (the password is replaced) ---
  () => prefixed("postgres-uri", String.raw`\bpostgres(?:ql)?(?:\+\w+)?://[^\s:@/'"\x60]{0,100}:([^\s@/'"\x60\\]{1,200})@`, ["postgres"], {
    flags: "i",
    check: urlPasswordLike,
  }),
  () => prefixed("mysql-uri", String.raw`\b(?:mysql|mariadb)(?:\+\w+)?://[^\s:@/'"\x60]{0,100}:([^\s@/'"\x60\\]{1,200})@`, ["mysql", "mariadb"], {
    flags: "i",
    check: urlPasswordLike,
  }),
  () => prefixed("mongodb-uri", String.raw`\bmongodb(?:\+srv)?://[^\s:@/'"\x60]{0,100}:([^\s@/'"\x60\\]{1,200})@`, ["mongodb"], {
    flags: "i",
    check: urlPasswordLike,
  }),
  () => prefixed("redis-uri", String.raw`\brediss?://[^\s:@/'"\x60]{0,100}:([^\s@/'"\x60\\]{1,200})@`, ["redis"], {
    flags: "i",
    check: urlPasswordLike,
  }),
  () => prefixed("amqp-uri", String.raw`\bamqps?://[^\s:@/'"\x60]{0,100}:([^\s@/'"\x60\\]{1,200})@`, ["amqp"], {
    flags: "i",
    check: urlPasswordLike,
  }),
  () => prefixed("url-credentials", String.raw`:\/\/(?<=[a-z0-9]:\/\/)[^\s:@/'"\x60<>]{1,100}:([^\s@/'"\x60\\<>]{3,200})@[\w.-]`, ["://"], {
    flags: "i",
    check: (s) => urlPasswordLike(s) && !/^\d+$/.test(s),
  }),

  // --- aiflare's own credentials (SPEC §9): server API keys, the `aiflare ui` token, the server's sign-in cookie ---
  // The formats are those of src/server/keys.ts (newKey, newToken) and src/core/dashboard/token.ts (newUiToken);
  // test/unit/redact-own-credentials.test.ts runs those generators, so a change of format fails there.
  () => prefixed("aiflare-api-key", String.raw`\bafk_[\w-]{20,100}${RD}`, ["afk_"], { hard: true, check: nearMiss(47) }),
  () => prefixed("aiflare-ui-token", String.raw`\bafu_[\w-]{20,100}${RD}`, ["afu_"], { hard: true, check: nearMiss(36) }),
  // a team server's sign-in session (cookie or bearer): the prefix and 256 random bits
  () => prefixed("aiflare-session-cookie", String.raw`\bafs_[\w-]{20,100}${RD}`, ["afs_"], { hard: true, check: nearMiss(47) }),

  // --- headers and generic assignments ---
  () => prefixed("authorization-bearer", String.raw`\bBearer\s+([\w\-.~+/]{16,}=*)`, ["bearer"], {
    flags: "i",
    check: (s) => tokenLike(s, 3.0, 16),
  }),
  () => prefixed("authorization-basic", String.raw`\bBasic\s+([A-Za-z0-9+/]{12,}={0,2})(?![A-Za-z0-9+/=])`, ["basic"], {
    flags: "i",
    check: basicAuthLike,
  }),
  () => prefixed("netrc-password", String.raw`\bmachine\s+\S+\s+login\s+\S+\s+password\s+(\S+)`, ["machine"], {
    check: (s) => !isPlaceholder(s),
  }),
  () => ({
    kind: "password-assignment",
    keywords: ["password", "passwd", "passphrase", "pwd"],
    pattern: String.raw`(?:password|passwd|passphrase|pwd)${ASSIGN}(${VALUE}{6,500})${NOT_CALL}`,
    flags: "i",
    check: passwordLike,
  }),
  () => ({
    kind: "secret-assignment",
    keywords: ["secret"],
    pattern: String.raw`secret${ASSIGN}(${VALUE}{8,500})${NOT_CALL}`,
    flags: "i",
    check: (s) => tokenLike(s, 3.0, 8),
  }),
  () => ({
    kind: "token-assignment",
    keywords: ["token"],
    pattern: String.raw`token${ASSIGN}(${VALUE}{12,2000})${NOT_CALL}`,
    flags: "i",
    check: (s) => tokenLike(s, 3.0, 12),
  }),
  () => ({
    kind: "key-assignment",
    keywords: variants(["api", "access", "private", "client", "auth", "encryption", "signing", "master", "app"], "key"),
    pattern: String.raw`(?:api|access|private|client|auth|encryption|signing|master|app)[ _-]?key${ASSIGN}(${VALUE}{12,2000})${NOT_CALL}`,
    flags: "i",
    check: (s) => tokenLike(s, 3.0, 12),
  }),
  () => ({
    kind: "credential-assignment",
    keywords: ["credential", "auth"],
    pattern: String.raw`\b(?:credentials?|auth)(?:[_-]?(?:token|secret|string|header|data))?${OP}(${VALUE}{12,2000})${NOT_CALL}`,
    flags: "i",
    check: (s) => tokenLike(s, 3.2, 16),
  }),
  () => ({
    kind: "generic-secret",
    keywords: [...variants(["api", "access"], "key"), "token", "secret", "password", "credential"],
    pattern: String.raw`(?:api[ _-]?key|token|secret|password|credential|access[ _-]?key)s?\b[^\n\x60]{0,24}?${L64}([A-Za-z0-9+/_-]{20,500}={0,2})${R64}`,
    flags: "i",
    check: strongTokenLike,
  }),
  ];
}

/** `\bPREFIX[class]{n}\b`: a token of fixed length after a literal prefix of four characters or more. */
const FIXED_LENGTH = /^\\b((?:[A-Za-z0-9_-]|\\\.){4,})(\[[^\]]+\])\{(\d+)\}(\\b|\(\?!\[A-Za-z0-9_-\]\))$/;

/** A hard fixed-length token rule widened to near misses (see `len`), unless the rule has its own check. */
function widen(spec: RuleSpec): RuleSpec {
  const m = spec.hard && !spec.check ? FIXED_LENGTH.exec(spec.pattern) : null;
  if (!m) return spec;
  const n = Number(m[3]);
  const prefix = m[1]!.replace(/\\\./g, ".").length;
  return { ...spec, pattern: `\\b${m[1]}${len(m[2]!, n)}${m[4]}`, check: nearMiss(prefix + n) };
}

/** The pattern as the engine runs it, its flags, whether it has capture groups, and its check. */
function prepare(given: RuleSpec): { pattern: string; flags: string; groups: boolean; check?: (secret: string) => boolean } {
  const spec = widen(given);
  const pattern = spec.pattern.replace(/^\\b/, LB).replace(/\\b$/, RB);
  const groups = /\((?!\?)/.test(pattern.replace(/\\\\|\\\(|\[[^\]]*\]/g, ""));
  // built-in rules are tried where their keywords start (sticky), not searched for
  return { pattern, flags: `gy${groups ? "d" : ""}${spec.flags ?? ""}`, groups, check: spec.check };
}

type Prepared = ReturnType<typeof prepare>;

let table: (() => RuleSpec)[] | undefined;
let specsBuilt = 0;

/** The spec of built-in rule `at`, built now. */
function specAt(at: number): RuleSpec {
  specsBuilt++;
  return (table ??= specs())[at]!();
}

/** How many built-in rules' specs this process has built (a test keeps the table lazy with it). */
export const builtSpecs = (): number => specsBuilt;

/**
 * A built-in rule: what the keyword scan and the rule sets need (kind, keywords, hard, groups, back) is at hand, the
 * spec is built and the regex compiled when the rule first runs.
 */
class BuiltinRule implements Rule {
  readonly kind: string;
  readonly keywords: readonly string[];
  readonly hard: boolean;
  readonly groups: boolean;
  readonly back: number;
  #at: number;
  #spec: RuleSpec | undefined;
  #prepared: Prepared | undefined;
  #re: RegExp | undefined;

  constructor(at: number, kind: string, keywords: readonly string[], hard: boolean, groups: boolean, back: number, spec?: RuleSpec) {
    this.kind = kind;
    this.keywords = keywords;
    this.hard = hard;
    this.groups = groups;
    this.back = back;
    this.#at = at;
    this.#spec = spec;
  }

  #ready(): Prepared {
    return (this.#prepared ??= prepare((this.#spec ??= specAt(this.#at))));
  }

  get re(): RegExp {
    return (this.#re ??= new RegExp(this.#ready().pattern, this.#ready().flags));
  }

  get check(): ((secret: string) => boolean) | undefined {
    return this.#ready().check;
  }
}

/**
 * Every built-in rule built from its spec right away (checked: keywords lowercase, ≥ 3 characters): what
 * rules-table.ts is generated from, and what a test compares the rules built on first use with.
 */
export function specRules(): Rule[] {
  return specs().map((make, at) => {
    const spec = make();
    for (const k of spec.keywords) {
      if (k.length < 3 || k !== k.toLowerCase()) throw new Error(`rule ${spec.kind}: keyword ${k} must be lowercase, ≥ 3 chars`);
    }
    return new BuiltinRule(at, spec.kind, spec.keywords, spec.hard ?? false, prepare(spec).groups, spec.back ?? 0, spec);
  });
}

let rules: readonly Rule[] | undefined;
let kinds: readonly string[] | undefined;

/** Every built-in rule, in priority order (when two rules find the same span, the earlier one names it). */
export function builtinRules(): readonly Rule[] {
  if (rules) return rules;
  // a plain loop: a destructured callback walks each row with an iterator, which cost milliseconds before the JIT
  const made: Rule[] = [];
  for (let at = 0; at < BUILTIN_RULES.length; at++) {
    const row = BUILTIN_RULES[at]!;
    made.push(new BuiltinRule(at, row[0], row[4], row[1] === 1, row[2] === 1, row[3]));
  }
  return (rules = made);
}

/** The built-in rules' keyword index (generated with them into rules-table.ts). */
export const builtinIndex = (): RuleIndex => BUILTIN_INDEX;

/** The hard-secret rules among the built-in ones (generated with them into rules-table.ts). */
export const builtinHardIndex = (): SubIndex => BUILTIN_HARD;

/** The stable kind names of the built-in rules (a kind may have more than one rule). */
export function builtinKinds(): readonly string[] {
  return (kinds ??= [...new Set(builtinRules().map((r) => r.kind))]);
}
