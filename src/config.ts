/**
 * The one configuration object, validated by zod. Sources, later ones winning: defaults, an
 * optional YAML/JSON file (`--config` or WINNOWER_CONFIG), environment (WINNOWER_*), flags.
 * Keys are snake_case with unit suffixes; the scorer's and the providers' settings are renamed to
 * the code's camelCase names once, on the way in (src/config-keys.ts). docs/configuration.md lists
 * every key and is generated from these schemas (`npm run docs:config`). Unknown keys are refused,
 * naming the key: a misspelt setting never silently falls back to its default.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { type Deprecation, keySections, processDeprecationWarner, renameKeys, unknownKeyError, userField } from './config-keys.js';
import { wnwError } from './errors.js';
import { HeaderSecret } from './http/header-value.js';
import { JudgeConfig } from './judge/judge-options.js';
import { PatchConfigSchema } from './sandbox/patch-policy.js';
import { SandboxServeConfigSchema } from './sandbox/serve/serve-config.js';
import { LimitsConfig, RetentionConfig } from './server/limits-config.js';
import { ScorerBatching, ScorerConfig } from './scoring/registry.js';
import { packageRoot } from './util/package-root.js';

/** The embedded default: the value model and learned selector `winnower train` built from the permissive rows. */
export const DEFAULT_MODEL_DIR = () => join(packageRoot(), 'models', 'winnower-value');
export { TINY_MODEL_DIR } from './util/package-root.js';

export const WinnowerConfig = z.strictObject({
  server: z
    .strictObject({
      host: z.string().default('127.0.0.1').describe('Address `winnower serve` listens on; 0.0.0.0 for every interface.'),
      port: z.number().int().min(0).max(65535).default(8080).describe('TCP port of the API; 0 picks a free one.'),
      api_keys: z
        .array(HeaderSecret.min(8))
        .default([])
        .describe('API keys a client may send (Authorization: Bearer, or X-API-Key); empty: no authentication, for local use.'),
      admin_keys: z
        .array(HeaderSecret.min(8))
        .default([])
        .describe(
          'Keys for the admin routes (POST /admin/model swaps the value model); only these open them, an API key does not. Empty: admin routes answer clients on the server host only.',
        ),
      body_limit_bytes: z
        .number()
        .int()
        .positive()
        .default(16 * 1024 * 1024)
        .describe('Largest request body the API reads.'),
      request_timeout_s: z
        .number()
        .positive()
        .max(3600)
        .default(30)
        .describe('Time a client has to send a whole request, headers and body; past it the answer is 408 and the connection closes.'),
      data_dir: z.string().default('.winnower').describe('Folder of the job store (SQLite) and its files.'),
      store: z
        .string()
        .min(1)
        .refine((value) => /^(sqlite|postgres(ql)?:\/\/)/i.test(value), 'either `sqlite` or a postgres:// URL')
        .default('sqlite')
        .describe(
          'Where jobs are kept: `sqlite` (a file in server.data_dir, one replica) or a postgres:// URL shared by several replicas (one queue, leases, takeover; docs/deployment.md). Its password is never logged.',
        ),
      lease_s: z
        .number()
        .min(1)
        .max(600)
        .default(15)
        .describe(
          'With a Postgres store: how long a replica holds a job without renewing it (a heartbeat every third of it); a lapsed lease lets another replica take the job over.',
        ),
      repo_roots: z
        .array(z.string().min(1))
        .default([])
        .describe(
          "Folders a request's host repository (repo.path, or a file:// or bare-path repo.url) must be under; empty: any folder the server can read, for local use.",
        ),
      policy_hosts: z
        .array(z.string().min(1))
        .default([])
        .describe("Hosts a request's policy.url may point at (src/server/guards/outbound-hosts.ts); empty: any, for local use."),
      repo_hosts: z
        .array(z.string().min(1))
        .default([])
        .describe("Hosts a request's repo.url may be cloned from; empty: any, for local use."),
      max_running_jobs: z.number().int().min(1).max(1024).default(4).describe('Jobs that run at the same time; the rest wait as `queued`.'),
      limits: LimitsConfig.prefault({}).describe('Per-key rate limit, queue cap, and caps on candidates and trajectories.'),
      retention: RetentionConfig.prefault({}).describe('When finished jobs are removed from the store.'),
      ui: z.boolean().default(true).describe('Serve the web inspector under /ui; the API is the same either way.'),
    })
    .prefault({})
    .describe('The HTTP API of `winnower serve`.'),
  // Only the keys and the three fields below are checked here; createScorer (src/scoring/registry.ts)
  // checks the whole scorer when it builds one, after the runtime has filled in the default model.
  scorer: z
    .object({
      backend: z.string().default('onnx'),
      model: z.string().optional(),
      urls: z.array(z.string()).default([]),
    })
    .passthrough()
    .superRefine((scorer, context) => {
      for (const [key, value] of Object.entries(scorer)) {
        if (key === 'backend' || key === 'model' || key === 'urls') continue;
        const field = ScorerConfig.shape[key as keyof typeof ScorerConfig.shape];
        if (!field) {
          context.addIssue({ code: 'unrecognized_keys', keys: [key], path: [], message: `unknown key ${key}` });
          continue;
        }
        // Each value is checked on its own, so a bad one in the file is named before anything is loaded.
        const parsed = field.safeParse(value);
        if (!parsed.success) {
          const issue = parsed.error.issues[0]!;
          context.addIssue({ code: 'custom', path: [key, ...issue.path], message: issue.message });
        }
      }
    })
    .default({ backend: 'onnx', urls: [] })
    .describe('The value model that scores candidates.'),
  sandbox: z
    .strictObject({
      provider: z.enum(['local', 'orchard', 'docker']).default('local').describe('Where sandboxes run.'),
      settings: z
        .record(z.string(), z.unknown())
        .default({})
        .describe("The provider's own settings; each provider checks its keys when it is created."),
      patch: PatchConfigSchema.optional().describe(
        'What candidate patches leave out and their size cap, for every provider (src/sandbox/patch-policy.ts).',
      ),
      serve: SandboxServeConfigSchema.optional().describe(
        'The Orchard-Env-compatible sandbox API: `winnower sandbox serve`, or inside `winnower serve` with `mount`.',
      ),
    })
    .default({ provider: 'local', settings: {} })
    .describe('The sandboxes agents run in.'),
  policy: z
    .strictObject({
      url: z
        .url({ protocol: /^https?$/, error: 'http or https only: the base URL of an OpenAI-compatible server' })
        .optional()
        .describe('Base URL of the OpenAI-compatible server the agent talks to (http or https).'),
      model: z.string().optional().describe('Model name to ask that server for.'),
      api_key: HeaderSecret.optional().describe('Bearer token for the policy server.'),
      mode: z
        .enum(['tools', 'text'])
        .default('tools')
        .describe(
          '`tools`: the agent acts through function calls; `text`: through commands in fenced blocks, for servers without tool calling.',
        ),
      allow_request_urls: z
        .boolean()
        .default(true)
        .describe('Whether a request may name its own policy server; turn it off on a shared server.'),
    })
    .default({ mode: 'tools', allow_request_urls: true })
    .describe("The default policy (the agent's model) for /solve requests that name none."),
  judge: JudgeConfig.optional().describe(
    'The default pairwise judge for /solve and /rerank requests with strategy judge or hybrid that name none (docs/selection.md#judge).',
  ),
  log_level: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe('Least severe log line written.'),
  log_format: z
    .enum(['auto', 'json', 'pretty'])
    .default('auto')
    .describe("`auto`: pino's pretty output on a terminal, JSON lines otherwise."),
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

/** How a variable's text becomes a value: as it is, a number, a comma-separated list, or a switch (anything but `false` is on). */
export type EnvReading = 'text' | 'number' | 'list' | 'switch';

/** The WINNOWER_* variables that set config keys (docs/configuration.md lists them from here). */
export const CONFIG_ENV: ReadonlyArray<{ name: string; key: string; reading: EnvReading }> = [
  { name: 'WINNOWER_HOST', key: 'server.host', reading: 'text' },
  { name: 'WINNOWER_PORT', key: 'server.port', reading: 'number' },
  { name: 'WINNOWER_REQUEST_TIMEOUT_S', key: 'server.request_timeout_s', reading: 'number' },
  { name: 'WINNOWER_API_KEYS', key: 'server.api_keys', reading: 'list' },
  { name: 'WINNOWER_ADMIN_KEYS', key: 'server.admin_keys', reading: 'list' },
  { name: 'WINNOWER_DATA_DIR', key: 'server.data_dir', reading: 'text' },
  { name: 'WINNOWER_STORE', key: 'server.store', reading: 'text' },
  { name: 'WINNOWER_LEASE_S', key: 'server.lease_s', reading: 'number' },
  { name: 'WINNOWER_REPO_ROOTS', key: 'server.repo_roots', reading: 'list' },
  { name: 'WINNOWER_POLICY_HOSTS', key: 'server.policy_hosts', reading: 'list' },
  { name: 'WINNOWER_REPO_HOSTS', key: 'server.repo_hosts', reading: 'list' },
  { name: 'WINNOWER_MAX_JOBS', key: 'server.max_running_jobs', reading: 'number' },
  { name: 'WINNOWER_UI', key: 'server.ui', reading: 'switch' },
  { name: 'WINNOWER_RATE_PER_MINUTE', key: 'server.limits.rate_per_minute', reading: 'number' },
  { name: 'WINNOWER_MAX_QUEUED_JOBS', key: 'server.limits.max_queued_jobs', reading: 'number' },
  { name: 'WINNOWER_MAX_SCORING_REQUESTS', key: 'server.limits.max_scoring_requests', reading: 'number' },
  { name: 'WINNOWER_SCORER', key: 'scorer.backend', reading: 'text' },
  { name: 'WINNOWER_SCORER_MODEL', key: 'scorer.model', reading: 'text' },
  { name: 'WINNOWER_SCORER_URLS', key: 'scorer.urls', reading: 'list' },
  { name: 'WINNOWER_SCORER_KEY', key: 'scorer.api_key', reading: 'text' },
  { name: 'WINNOWER_SANDBOX', key: 'sandbox.provider', reading: 'text' },
  { name: 'WINNOWER_POLICY_URL', key: 'policy.url', reading: 'text' },
  { name: 'WINNOWER_POLICY_MODEL', key: 'policy.model', reading: 'text' },
  { name: 'WINNOWER_POLICY_KEY', key: 'policy.api_key', reading: 'text' },
  { name: 'WINNOWER_POLICY_MODE', key: 'policy.mode', reading: 'text' },
  { name: 'WINNOWER_POLICY_FROM_REQUESTS', key: 'policy.allow_request_urls', reading: 'switch' },
  { name: 'WINNOWER_JUDGE_URL', key: 'judge.url', reading: 'text' },
  { name: 'WINNOWER_JUDGE_MODEL', key: 'judge.model', reading: 'text' },
  { name: 'WINNOWER_JUDGE_KEY', key: 'judge.api_key', reading: 'text' },
  { name: 'WINNOWER_LOG_LEVEL', key: 'log_level', reading: 'text' },
  { name: 'WINNOWER_LOG_FORMAT', key: 'log_format', reading: 'text' },
];

function readEnv(value: string, reading: EnvReading): unknown {
  if (reading === 'number') return Number(value);
  if (reading === 'switch') return value !== 'false';
  if (reading === 'list')
    return value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  return value;
}

/** The WINNOWER_* environment as a partial config, in the config file's names. */
export function configFromEnv(env: NodeJS.ProcessEnv): Json {
  const out: Json = {};
  for (const { name, key, reading } of CONFIG_ENV) {
    const value = env[name];
    // A variable set to "" counts as unset (`WINNOWER_POLICY_URL= winnower demo` means "no policy").
    if (value === undefined || value === '') continue;
    const path = key.split('.');
    let parent = out;
    for (const segment of path.slice(0, -1)) parent = (parent[segment] ??= {}) as Json;
    parent[path[path.length - 1]!] = readEnv(value, reading);
  }
  return out;
}

// The scorer's keys as the code names them, so an unknown one is refused as it was written.
const KEY_SECTIONS = keySections(Object.keys(ScorerConfig.shape), Object.keys(ScorerBatching.shape));
const warnOnce = processDeprecationWarner();

/**
 * The config from its sources. `onDeprecation` hears each old key spelling (default: a
 * DeprecationWarning through process.emitWarning, once per key in this process).
 */
export function loadConfig(
  options: { file?: string; env?: NodeJS.ProcessEnv; overrides?: Json; onDeprecation?: (deprecation: Deprecation) => void } = {},
): WinnowerConfig {
  const env = options.env ?? process.env;
  const file = options.file ?? (env.WINNOWER_CONFIG || undefined);
  let fromFile: Json = {};
  if (file) {
    if (!existsSync(file)) throw wnwError('WNW_ERR_CFG_INVALID', `config file ${file} not found`, { details: { field: 'config' } });
    fromFile = (parse(readFileSync(file, 'utf8')) ?? {}) as Json;
  }
  // Each layer is renamed on its own: a key written both ways is an error within one layer, and a later layer wins over an earlier one.
  const rename = (layer: Json) => renameKeys(layer, KEY_SECTIONS, options.onDeprecation ?? warnOnce);
  const merged = merge(merge(rename(fromFile), rename(configFromEnv(env))), rename(options.overrides ?? {}));
  const parsed = WinnowerConfig.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    // An unknown key is named itself (`server.prot`), as it was written.
    if (issue.code === 'unrecognized_keys') throw unknownKeyError([userField(issue.path), issue.keys[0]].filter(Boolean).join('.'));
    const field = userField(issue.path);
    throw wnwError('WNW_ERR_CFG_INVALID', `config field ${field}: ${issue.message}`, { details: { field } });
  }
  return parsed.data;
}
