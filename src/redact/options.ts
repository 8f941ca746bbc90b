/** Turns `redact:` options (extra patterns, allowlist) into a rule set and an allow function, once per object. */
import { AiflareError } from "../errors.ts";
import { buildRuleSet, type AllowFn, type RuleSet } from "./engine.ts";
import { RULES, type Rule } from "./rules.ts";

/** Options from `aiflare.yml` (`redact:`): extra rules and allowlisted literals or /regex/ strings. */
export interface RedactOptions {
  patterns?: { kind: string; pattern: string }[];
  allow?: string[];
}

export interface CompiledOptions {
  set: RuleSet;
  allow?: AllowFn;
}

const KIND_RE = /^[a-z0-9][a-z0-9._-]{0,63}$/;

let defaultSet: RuleSet | undefined;
let hardSet: RuleSet | undefined;

/** The built-in rules. */
export function defaultRuleSet(): RuleSet {
  return (defaultSet ??= buildRuleSet(RULES));
}

/** The built-in hard-secret rules (stage two). */
export function hardRuleSet(): RuleSet {
  return (hardSet ??= buildRuleSet(RULES.filter((r) => r.hard)));
}

/** Parses `/body/flags` into a RegExp, or returns undefined for a plain string. */
function parseSlashed(s: string, extraFlags: string, what: string): RegExp | undefined {
  const m = /^\/(.+)\/([a-z]*)$/s.exec(s);
  if (!m) return undefined;
  return makeRegExp(m[1]!, m[2]!.replace(/[gyd]/g, "") + extraFlags, what);
}

function makeRegExp(body: string, flags: string, what: string): RegExp {
  try {
    return new RegExp(body, flags);
  } catch (err) {
    throw new AiflareError("CONFIG", `${what}: not a valid regular expression (${(err as Error).message}); fix it in aiflare.yml`, {
      cause: err,
    });
  }
}

const cache = new WeakMap<RedactOptions, CompiledOptions>();

/** Compiles options (cached per options object). Throws CONFIG for a bad kind name or regular expression. */
export function compileOptions(opts: RedactOptions = {}): CompiledOptions {
  const patterns = opts.patterns ?? [];
  const allowList = opts.allow ?? [];
  if (patterns.length === 0 && allowList.length === 0) return { set: defaultRuleSet() };
  const hit = cache.get(opts);
  if (hit) return hit;

  const extra: Rule[] = patterns.map((p, i) => {
    const what = `redact.patterns[${i}]`;
    if (!KIND_RE.test(p.kind)) {
      throw new AiflareError("CONFIG", `${what}.kind "${p.kind}" must be lowercase letters, digits, '.', '_' or '-' (e.g. internal-token)`);
    }
    const re = parseSlashed(p.pattern, "gd", `${what}.pattern`) ?? makeRegExp(p.pattern, "gd", `${what}.pattern`);
    return { kind: p.kind, keywords: [], re, hard: false };
  });
  const set = extra.length ? buildRuleSet([...RULES, ...extra]) : defaultRuleSet();

  const literals: string[] = [];
  const regexes: RegExp[] = [];
  allowList.forEach((a, i) => {
    const re = parseSlashed(a, "", `redact.allow[${i}]`);
    if (re) regexes.push(re);
    else if (a.length > 0) literals.push(a);
  });
  const allow: AllowFn | undefined =
    literals.length || regexes.length
      ? (secret, start, end, text) => {
          for (const lit of literals) {
            // the literal is the secret, or covers it and more (e.g. a whole URL around a password)
            const at = text.lastIndexOf(lit, start);
            if (at !== -1 && at + lit.length >= end) return true;
          }
          for (const re of regexes) if (re.test(secret)) return true;
          return false;
        }
      : undefined;

  const compiled = { set, allow };
  cache.set(opts, compiled);
  return compiled;
}
