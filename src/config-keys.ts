/**
 * The config file's names and the code's names, mapped in one place. Users write snake_case with
 * unit suffixes everywhere (`scorer.timeout_ms`, `scorer.batching.window_ms`,
 * `sandbox.settings.base_url`); the scorer's and the sandbox providers' settings keep their
 * camelCase names in code, so `loadConfig` renames those two sections on the way in. The old
 * camelCase spellings are still read, each with a numbered deprecation warning (the table below,
 * documented in docs/configuration.md); a key written both ways is an error naming both.
 */
import { wnwError } from './errors.js';

type Json = Record<string, unknown>;

/** `maxBatchSize` → `max_batch_size`. */
export function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** `max_batch_size` → `maxBatchSize`. */
export function camelCase(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

/**
 * Every deprecation of the configuration, numbered once and never renumbered (fastify's FSTDEP
 * codes are the model): a script or a log filter can match on the code.
 */
export const CONFIG_DEPRECATIONS = {
  WNW_DEP001: { section: 'scorer', summary: 'camelCase keys under scorer and scorer.batching' },
  WNW_DEP002: { section: 'sandbox.settings', summary: 'camelCase keys under sandbox.settings and sandbox.settings.patch' },
} as const;
export type DeprecationCode = keyof typeof CONFIG_DEPRECATIONS;

export interface Deprecation {
  code: DeprecationCode;
  /** The key as it was written, e.g. `scorer.timeoutMs`. */
  oldKey: string;
  /** What to write instead, e.g. `scorer.timeout_ms`. */
  newKey: string;
  message: string;
}

/** A part of the config whose keys are camelCase in code. */
export interface KeySection {
  /** Where it is, in the code's names (`['scorer', 'batching']`). */
  path: readonly string[];
  code: DeprecationCode;
  /** The code's names of its keys; absent where the section is checked later (a provider checks its own settings). */
  keys?: readonly string[];
}

/** The sections of the config file that `renameKeys` renames. The scorer's keys come from its schema (src/config.ts). */
export function keySections(scorerKeys: readonly string[], batchingKeys: readonly string[]): KeySection[] {
  return [
    { path: ['scorer'], code: 'WNW_DEP001', keys: scorerKeys },
    { path: ['scorer', 'batching'], code: 'WNW_DEP001', keys: batchingKeys },
    { path: ['sandbox', 'settings'], code: 'WNW_DEP002' },
    { path: ['sandbox', 'settings', 'patch'], code: 'WNW_DEP002' },
  ];
}

const isPlainObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A config field as users write it: the code's camelCase path segments in snake_case (`scorer.max_input_tokens`). */
export function userField(path: readonly PropertyKey[]): string {
  return path.map((segment) => (typeof segment === 'string' ? snakeCase(segment) : String(segment))).join('.');
}

/** `scorer.foo_bar: unknown key`, as loadConfig words every unknown key. */
export function unknownKeyError(field: string) {
  return wnwError('WNW_ERR_CFG_INVALID', `config field ${field}: unknown key (check the spelling; see docs/configuration.md)`, {
    details: { field },
  });
}

/** The code's name of `key` as written, and whether it was the old spelling; undefined when it is neither spelling of a key. */
function codeName(key: string): { name: string; old: boolean } | undefined {
  if (key.includes('_')) {
    const name = camelCase(key);
    // `max_batch_size` round-trips; `max__size` or `Max_size` is no spelling of a code name.
    return snakeCase(name) === key ? { name, old: false } : undefined;
  }
  return { name: key, old: /[A-Z]/.test(key) };
}

/** One section's keys renamed to the code's names; `where` is its path as users write it. */
function renameSection(object: Json, section: KeySection, where: string, warn: (deprecation: Deprecation) => void): Json {
  const out: Json = {};
  const writtenAs = new Map<string, string>();
  for (const [key, value] of Object.entries(object)) {
    const mapped = codeName(key);
    if (!mapped || (section.keys && !section.keys.includes(mapped.name))) {
      // A known section refuses an unknown key here, as written; a provider's settings pass on for the provider to check.
      if (section.keys) throw unknownKeyError(`${where}.${key}`);
      out[key] = value;
      continue;
    }
    const other = writtenAs.get(mapped.name);
    if (other !== undefined) {
      const [oldKey, newKey] = mapped.old ? [key, other] : [other, key];
      throw wnwError(
        'WNW_ERR_CFG_INVALID',
        `config field ${where}.${newKey}: also given as ${where}.${oldKey}, its old spelling; keep only ${where}.${newKey}`,
        { details: { field: `${where}.${newKey}`, keys: [`${where}.${oldKey}`, `${where}.${newKey}`] } },
      );
    }
    writtenAs.set(mapped.name, key);
    if (mapped.old) {
      const oldKey = `${where}.${key}`;
      const newKey = `${where}.${snakeCase(key)}`;
      warn({ code: section.code, oldKey, newKey, message: `config key ${oldKey} is deprecated: write ${newKey} (docs/configuration.md)` });
    }
    out[mapped.name] = value;
  }
  return out;
}

/**
 * One layer of the config (the file, the environment or the flags) with the sections' keys renamed
 * to the code's names. `warn` hears each old spelling; the input is not changed.
 */
export function renameKeys(layer: Json, sections: readonly KeySection[], warn: (deprecation: Deprecation) => void): Json {
  const root: Json = { ...layer };
  // Parents before children, so a child's path is found under its parent's renamed keys.
  for (const section of [...sections].sort((a, b) => a.path.length - b.path.length)) {
    let parent: Json | undefined = root;
    for (const segment of section.path.slice(0, -1)) {
      const next: unknown = parent[segment];
      if (!isPlainObject(next)) {
        parent = undefined;
        break;
      }
      parent[segment] = { ...next };
      parent = parent[segment] as Json;
    }
    const last = section.path[section.path.length - 1]!;
    const target = parent?.[last];
    if (parent && isPlainObject(target)) parent[last] = renameSection(target, section, section.path.join('.'), warn);
  }
  return root;
}

/** Warnings through `process.emitWarning` as DeprecationWarnings, once per old key in this process (`node --no-deprecation` silences them). */
export function processDeprecationWarner(): (deprecation: Deprecation) => void {
  const warned = new Set<string>();
  return (deprecation) => {
    if (warned.has(deprecation.oldKey)) return;
    warned.add(deprecation.oldKey);
    process.emitWarning(deprecation.message, { type: 'DeprecationWarning', code: deprecation.code });
  };
}
