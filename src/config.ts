/**
 * The one configuration object, validated by zod. Sources, later ones winning: defaults, an
 * optional YAML/JSON file (`--config` or WINNOWER_CONFIG), environment (WINNOWER_*), flags.
 * Every key is documented in the README. Unknown keys are refused, naming the key: a misspelt
 * setting never silently falls back to its default.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { wnwError } from './errors.js';
import { HeaderSecret } from './http/header-value.js';
import { PatchConfigSchema } from './sandbox/patch-policy.js';
import { SandboxServeConfigSchema } from './sandbox/serve/serve-config.js';
import { LimitsConfig, RetentionConfig } from './server/limits-config.js';
import { ScorerConfig } from './scoring/registry.js';
import { packageRoot } from './util/package-root.js';

/** The embedded default: the value model and learned selector `winnower train` built from the permissive rows. */
export const DEFAULT_MODEL_DIR = () => join(packageRoot(), 'models', 'winnower-value');
export { TINY_MODEL_DIR } from './util/package-root.js';

export const WinnowerConfig = z.strictObject({
  server: z
    .strictObject({
      host: z.string().default('127.0.0.1'),
      port: z.number().int().min(0).max(65535).default(8080),
      /** Accepted API keys; empty = no auth (local use). */
      api_keys: z.array(HeaderSecret.min(8)).default([]),
      body_limit_bytes: z
        .number()
        .int()
        .positive()
        .default(16 * 1024 * 1024),
      /** Seconds a client has to send a whole request, headers and body; past it the server answers 408 and closes the connection. */
      request_timeout_s: z.number().positive().max(3600).default(30),
      data_dir: z.string().default('.winnower'),
      /** Folders a request's host repository (repo.path, a file:// or bare-path repo.url) must lie under; empty = any the server can read (local use). */
      repo_roots: z.array(z.string().min(1)).default([]),
      /** Hosts a request's policy.url may name (src/server/guards/outbound-hosts.ts); empty = any (local use). */
      policy_hosts: z.array(z.string().min(1)).default([]),
      /** Hosts a request's repo.url may be cloned from; empty = any (local use). */
      repo_hosts: z.array(z.string().min(1)).default([]),
      /** Jobs running at once; more wait as `queued`. */
      max_running_jobs: z.number().int().min(1).max(1024).default(4),
      /** Rate limit per key, queued-job cap, candidate and trajectory caps (src/server/limits-config.ts). */
      limits: LimitsConfig.prefault({}),
      /** When finished jobs are purged from the store. */
      retention: RetentionConfig.prefault({}),
      /** The web inspector's pages under /ui (src/server/ui); the API is the same with or without them. */
      ui: z.boolean().default(true),
    })
    .prefault({}),
  /** Passed to createScorer (src/scoring/registry.ts), which validates the values; the keys are checked here. */
  scorer: z
    .object({
      backend: z.string().default('onnx'),
      model: z.string().optional(),
      urls: z.array(z.string()).default([]),
    })
    .passthrough()
    .superRefine((scorer, context) => {
      const known = Object.keys(ScorerConfig.shape);
      const unknown = Object.keys(scorer).filter((key) => !known.includes(key));
      if (unknown.length)
        context.addIssue({ code: 'unrecognized_keys', keys: unknown, path: [], message: `unknown key ${unknown.join(', ')}` });
    })
    .default({ backend: 'onnx', urls: [] }),
  sandbox: z
    .strictObject({
      provider: z.enum(['local', 'orchard', 'docker']).default('local'),
      settings: z.record(z.string(), z.unknown()).default({}),
      /** What candidate patches leave out and their size cap, for every provider (src/sandbox/patch-policy.ts). */
      patch: PatchConfigSchema.optional(),
      /** The Orchard-Env-compatible API (`winnower sandbox serve`; `mount` puts it in `winnower serve`). */
      serve: SandboxServeConfigSchema.optional(),
    })
    .default({ provider: 'local', settings: {} }),
  /** The default policy for /solve requests that name none. */
  policy: z
    .strictObject({
      url: z.url({ protocol: /^https?$/, error: 'http or https only: the base URL of an OpenAI-compatible server' }).optional(),
      model: z.string().optional(),
      api_key: HeaderSecret.optional(),
      mode: z.enum(['tools', 'text']).default('tools'),
      /** Whether requests may name their own policy server; turn off on a shared server. */
      allow_request_urls: z.boolean().default(true),
    })
    .default({ mode: 'tools', allow_request_urls: true }),
  log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `auto`: pino's pretty output on a terminal, JSON lines otherwise. */
  log_format: z.enum(['auto', 'json', 'pretty']).default('auto'),
});
export type WinnowerConfig = z.infer<typeof WinnowerConfig>;
export type WinnowerConfigInput = z.input<typeof WinnowerConfig>;

type Json = Record<string, unknown>;

function merge(base: Json, override: Json): Json {
  const out: Json = { ...base };
  for (const [key, value] of Object.entries(override)) {
    if (value === undefined) continue;
    const current = out[key];
    out[key] =
      value && typeof value === 'object' && !Array.isArray(value) && current && typeof current === 'object' && !Array.isArray(current)
        ? merge(current as Json, value as Json)
        : value;
  }
  return out;
}

const list = (value: string | undefined) =>
  value
    ? value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean)
    : undefined;
const int = (value: string | undefined) => (value === undefined || value === '' ? undefined : Number(value));

/** The WINNOWER_* environment as a partial config. */
export function configFromEnv(rawEnv: NodeJS.ProcessEnv): Json {
  // A variable set to "" counts as unset (`WINNOWER_POLICY_URL= winnower demo` means "no policy").
  const env = Object.fromEntries(Object.entries(rawEnv).filter(([, value]) => value !== undefined && value !== '')) as NodeJS.ProcessEnv;
  return {
    server: {
      host: env.WINNOWER_HOST,
      port: int(env.WINNOWER_PORT),
      request_timeout_s: int(env.WINNOWER_REQUEST_TIMEOUT_S),
      api_keys: list(env.WINNOWER_API_KEYS),
      data_dir: env.WINNOWER_DATA_DIR,
      repo_roots: list(env.WINNOWER_REPO_ROOTS),
      policy_hosts: list(env.WINNOWER_POLICY_HOSTS),
      repo_hosts: list(env.WINNOWER_REPO_HOSTS),
      max_running_jobs: int(env.WINNOWER_MAX_JOBS),
      ui: env.WINNOWER_UI === undefined ? undefined : env.WINNOWER_UI !== 'false',
      limits: { rate_per_minute: int(env.WINNOWER_RATE_PER_MINUTE), max_queued_jobs: int(env.WINNOWER_MAX_QUEUED_JOBS) },
    },
    scorer: {
      backend: env.WINNOWER_SCORER,
      model: env.WINNOWER_SCORER_MODEL,
      urls: list(env.WINNOWER_SCORER_URLS),
      apiKey: env.WINNOWER_SCORER_KEY,
    },
    sandbox: { provider: env.WINNOWER_SANDBOX },
    policy: {
      url: env.WINNOWER_POLICY_URL,
      model: env.WINNOWER_POLICY_MODEL,
      api_key: env.WINNOWER_POLICY_KEY,
      mode: env.WINNOWER_POLICY_MODE,
      allow_request_urls: env.WINNOWER_POLICY_FROM_REQUESTS === undefined ? undefined : env.WINNOWER_POLICY_FROM_REQUESTS !== 'false',
    },
    log_level: env.WINNOWER_LOG_LEVEL,
    log_format: env.WINNOWER_LOG_FORMAT,
  };
}

export function loadConfig(options: { file?: string; env?: NodeJS.ProcessEnv; overrides?: Json } = {}): WinnowerConfig {
  const env = options.env ?? process.env;
  const file = options.file ?? (env.WINNOWER_CONFIG || undefined);
  let fromFile: Json = {};
  if (file) {
    if (!existsSync(file)) throw wnwError('WNW_ERR_CFG_INVALID', `config file ${file} not found`, { details: { field: 'config' } });
    fromFile = (parse(readFileSync(file, 'utf8')) ?? {}) as Json;
  }
  const merged = merge(merge(fromFile, configFromEnv(env)), options.overrides ?? {});
  const parsed = WinnowerConfig.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    // An unknown key is named itself (`server.prot`), with the fix.
    const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
    const field = [...issue.path, ...keys.slice(0, 1)].join('.');
    const message = keys.length
      ? `unknown key${keys.length > 1 ? `s ${keys.join(', ')}` : ''} (check the spelling; see the README's configuration section)`
      : issue.message;
    throw wnwError('WNW_ERR_CFG_INVALID', `config field ${field}: ${message}`, { details: { field } });
  }
  return parsed.data;
}
