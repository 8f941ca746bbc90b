/** Turns `redact:` options (extra patterns, allowlist) into a rule set and an allow function, once per object. */
import { AiflareError } from "../errors.ts";
import { buildRuleSet, drawnRuleSet, indexedRuleSet, type AllowFn, type RuleSet } from "./engine.ts";
import type { SecretMemory } from "./known.ts";
import type { Scan } from "./quiet.ts";
import { builtinHardIndex, builtinIndex, builtinRules, type Rule } from "./rules.ts";

/** Options from `aiflare.yml` (`redact:`): extra rules and allowlisted literals or /regex/ strings. */
export interface RedactOptions {
  patterns?: { kind: string; pattern: string }[];
  allow?: string[];
  /** the secrets of the session the text belongs to: replaced wherever they occur, and added to as more are found */
  known?: SecretMemory;
}

export interface CompiledOptions {
  set: RuleSet;
  allow?: AllowFn;
  known?: SecretMemory;
  /** strings already scanned with `set` (see quiet.ts): what was found in each */
  scans?: ReadonlyMap<string, Scan>;
}

const KIND_RE = /^[a-z0-9][a-z0-9._-]{0,63}$/;

let defaultSet: RuleSet | undefined;
let hardSet: RuleSet | undefined;

/** The built-in rules, with their generated keyword index. */
export function defaultRuleSet(): RuleSet {
  return (defaultSet ??= indexedRuleSet(builtinRules(), builtinIndex()));
}

/** The built-in hard-secret rules (stage two), drawn from the built-in set as generated with it. */
export function hardRuleSet(): RuleSet {
  return (hardSet ??= drawnRuleSet(defaultRuleSet(), builtinHardIndex()));
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

/*
 * User patterns may come from a tracked, team-shared file — that is, from anyone who can commit to the repository —
 * and they run on every conversation the hooks store. So they never run on the backtracking engine: they are
 * compiled for RE2's linear-time matcher (re2js), shapes that would backtrack catastrophically elsewhere are refused
 * by name when loaded, and each pattern sees its input in windows of USER_WINDOW characters.
 */

/** The longest input one user pattern is run on at once. */
export const USER_WINDOW = 4096;
/** Windows overlap by this much: a user pattern finds every match up to this long. */
export const USER_OVERLAP = 512;
const MAX_PATTERN_LENGTH = 1000;

type Re2 = import("re2js").RE2JS;

/**
 * A user pattern as the engine uses it (a global RegExp it calls `exec` on), matched by RE2 in linear time, window
 * by window.
 */
class LinearPattern extends RegExp {
  readonly #re2: Re2;
  readonly #groups: number;

  constructor(re2: Re2) {
    super("(?:)", "gd");
    this.#re2 = re2;
    this.#groups = re2.groupCount();
  }

  override exec(text: string): RegExpExecArray | null {
    const step = USER_WINDOW - USER_OVERLAP;
    for (let from = this.lastIndex; from <= text.length; from += step) {
      // one character before the window keeps \b and a multiline ^ right at its start
      const winStart = Math.max(0, from - 1);
      const end = Math.min(text.length, from + USER_WINDOW);
      const m = this.#re2.matcher(text.slice(winStart, end));
      // a match starting in the overlap is found again, whole, in the next window
      if (m.find(from - winStart) && (m.start() + winStart < from + step || end === text.length)) {
        const out = [] as unknown as RegExpExecArray;
        const indices: ([number, number] | undefined)[] = [];
        for (let g = 0; g <= this.#groups; g++) {
          const s = m.start(g);
          if (s < 0) {
            out.push(undefined as unknown as string);
            indices.push(undefined);
          } else {
            out.push(text.slice(s + winStart, m.end(g) + winStart));
            indices.push([s + winStart, m.end(g) + winStart]);
          }
        }
        out.index = m.start() + winStart;
        out.input = text;
        out.indices = indices as RegExpIndicesArray;
        this.lastIndex = m.end() + winStart;
        return out;
      }
      if (end === text.length) break;
    }
    this.lastIndex = 0;
    return null;
  }
}

/** Compiles a user pattern for RE2; JavaScript flags i, m and s carry over. Throws CONFIG naming it. */
function compileLinear(body: string, flags: string, what: string): LinearPattern {
  const { RE2JS } = require("re2js") as typeof import("re2js");
  let f = 0;
  if (flags.includes("i")) f |= RE2JS.CASE_INSENSITIVE;
  if (flags.includes("m")) f |= RE2JS.MULTILINE;
  if (flags.includes("s")) f |= RE2JS.DOTALL;
  try {
    return new LinearPattern(RE2JS.compile(body, f));
  } catch (err) {
    const msg = (err as Error).message.replace(/^error parsing regexp: /, "");
    throw new AiflareError(
      "CONFIG",
      `${what}: the linear-time matcher cannot run it (${msg}); lookarounds and backreferences are not supported`,
      { cause: err },
    );
  }
}

interface Group {
  /** the largest repeat count of any quantifier inside (1 when none repeats) */
  innerMax: number;
  /** an alternation inside whose branches may match the same text */
  ambiguousAlt: boolean;
  branches: string[];
  branchStart: number;
}

const SIMPLE_BRANCH = /^[A-Za-z0-9 _\-:=@#%&!~,;'"<>/]+$/;

/** The upper bound of the quantifier at `src[i]` and its length, or null when there is none. */
function quantifierAt(src: string, i: number): { max: number; len: number } | null {
  const c = src[i];
  let q: { max: number; len: number } | null = null;
  if (c === "*" || c === "+") q = { max: Infinity, len: 1 };
  else if (c === "?") q = { max: 1, len: 1 };
  else if (c === "{") {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(src.slice(i));
    if (m) q = { max: m[2] === undefined ? Number(m[1]) : m[3] ? Number(m[3]) : Infinity, len: m[0].length };
  }
  if (q && src[i + q.len] === "?") q.len++;
  return q;
}

/**
 * Why `source` could backtrack catastrophically, or null: a repeated group holding another unbounded repeat
 * (`(a+)+`, `(\w+\s?)*`, `(.*x){9}`), a repeated alternation whose branches can match the same text (`(a|a)*`,
 * `(\d|[0-9])+`), or a backreference.
 */
export function catastrophicShape(source: string): string | null {
  const stack: Group[] = [{ innerMax: 1, ambiguousAlt: false, branches: [], branchStart: 0 }];
  const groupStarts: number[] = [];
  let i = 0;
  // the atom just read: a group's summary, or a single character/class/escape
  let last: { group?: Group; start: number } | null = null;
  const top = () => stack[stack.length - 1]!;
  while (i < source.length) {
    const c = source[i]!;
    const q = last ? quantifierAt(source, i) : null;
    if (q && last) {
      const parent = top();
      const g = last.group;
      const text = source.slice(last.start, i + q.len);
      if (g && q.max > 1 && g.innerMax > 1 && (q.max === Infinity || g.innerMax === Infinity)) {
        return `the repeated group ${text} holds another repeat, which can take exponential time`;
      }
      if (g && q.max > 1 && g.ambiguousAlt) {
        return `the repeated group ${text} has alternatives that can match the same text, which can take exponential time`;
      }
      parent.innerMax = Math.max(parent.innerMax, q.max, g?.innerMax ?? 1);
      i += q.len;
      last = null;
      continue;
    }
    if (c === "\\") {
      const next = source[i + 1] ?? "";
      if (/[1-9]/.test(next) || (next === "k" && source[i + 2] === "<")) return "a backreference can take exponential time";
      const m = /^\\(?:u\{[0-9A-Fa-f]+\}|u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|c[A-Za-z]|[pP]\{[^}]*\}|.)/s.exec(source.slice(i));
      last = { start: i };
      i += m ? m[0].length : 2;
      continue;
    }
    if (c === "[") {
      let j = i + 1;
      if (source[j] === "^") j++;
      if (source[j] === "]") j++;
      while (j < source.length && source[j] !== "]") j += source[j] === "\\" ? 2 : 1;
      last = { start: i };
      i = j + 1;
      continue;
    }
    if (c === "(") {
      groupStarts.push(i);
      const m = /^\((?:\?(?:[:=!]|<[=!]|<[A-Za-z_$][\w$]*>))?/.exec(source.slice(i))!;
      i += m[0].length;
      stack.push({ innerMax: 1, ambiguousAlt: false, branches: [], branchStart: i });
      last = null;
      continue;
    }
    if (c === "|" || c === ")") {
      const g = top();
      g.branches.push(source.slice(g.branchStart, i));
      if (c === "|") {
        g.branchStart = i + 1;
        i++;
        last = null;
        continue;
      }
      if (stack.length === 1) return null; // unbalanced: the RegExp constructor reports it
      stack.pop();
      if (g.branches.length > 1) {
        const firsts = g.branches.map((b) => b[0]);
        const simple = g.branches.every((b) => SIMPLE_BRANCH.test(b) && !b.includes("\\"));
        if (!simple || new Set(firsts).size !== firsts.length) g.ambiguousAlt = true;
      }
      const parent = top();
      parent.innerMax = Math.max(parent.innerMax, g.innerMax);
      // an alternation in a group that is not repeated still matters to a repeated group around it
      parent.ambiguousAlt ||= g.ambiguousAlt;
      last = { group: g, start: groupStarts.pop() ?? i };
      i++;
      continue;
    }
    last = c === "^" || c === "$" ? null : { start: i };
    i++;
  }
  const root = top();
  root.branches.push(source.slice(root.branchStart));
  return null;
}

/**
 * Checks one `redact.patterns` entry: a valid kind name, a regular expression that compiles and cannot backtrack
 * catastrophically. Throws CONFIG naming the entry (`what`) and the pattern.
 */
export function checkUserPattern(p: { kind: string; pattern: string }, what: string): RegExp {
  if (!KIND_RE.test(p.kind)) {
    throw new AiflareError("CONFIG", `${what}.kind "${p.kind}" must be lowercase letters, digits, '.', '_' or '-' (e.g. internal-token)`);
  }
  const slashed = /^\/(.+)\/([a-z]*)$/s.exec(p.pattern);
  const body = slashed ? slashed[1]! : p.pattern;
  const shown = JSON.stringify(p.pattern.length > 80 ? `${p.pattern.slice(0, 77)}...` : p.pattern);
  if (body.length > MAX_PATTERN_LENGTH) {
    throw new AiflareError("CONFIG", `${what}.pattern is longer than ${MAX_PATTERN_LENGTH} characters; refused`);
  }
  const flags = slashed ? slashed[2]! : "";
  // the JavaScript engine still judges the syntax, so messages stay the ones users know
  if (slashed) parseSlashed(p.pattern, "", `${what}.pattern`);
  else makeRegExp(p.pattern, "", `${what}.pattern`);
  const shape = catastrophicShape(body);
  if (shape) {
    throw new AiflareError(
      "CONFIG",
      `${what}.pattern ${shown} refused: ${shape}. Rewrite it without nesting repeats (e.g. [A-Za-z0-9]{20,64} instead of ([A-Za-z0-9]+)+)`,
    );
  }
  return compileLinear(body, flags, `${what}.pattern ${shown}`);
}

/**
 * Compiled rules by their `patterns` and `allow` arrays, so that options spread into a new object (`{...redact,
 * jsonl: true}`, `{...redact, known}`) still find them compiled.
 */
const cache = new WeakMap<object, WeakMap<object, CompiledOptions>>();
const NONE: readonly never[] = [];

/** Compiles options (cached per patterns and allowlist) with the session's known secrets. Throws CONFIG for a bad rule. */
export function compileOptions(opts: RedactOptions = {}): CompiledOptions {
  const c = compileRules(opts);
  return opts.known ? { ...c, known: opts.known } : c;
}

function compileRules(opts: RedactOptions): CompiledOptions {
  const patterns = opts.patterns ?? [];
  const allowList = opts.allow ?? [];
  if (patterns.length === 0 && allowList.length === 0) return { set: defaultRuleSet() };
  const byAllow = cache.get(opts.patterns ?? NONE);
  const hit = byAllow?.get(opts.allow ?? NONE);
  if (hit) return hit;

  const extra: Rule[] = patterns.map((p, i) => ({
    kind: p.kind,
    keywords: [],
    re: checkUserPattern(p, `redact.patterns[${i}]`),
    hard: false,
  }));
  const set = extra.length ? buildRuleSet([...builtinRules(), ...extra]) : defaultRuleSet();

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
  if (byAllow) byAllow.set(opts.allow ?? NONE, compiled);
  else cache.set(opts.patterns ?? NONE, new WeakMap([[opts.allow ?? NONE, compiled]]));
  return compiled;
}
