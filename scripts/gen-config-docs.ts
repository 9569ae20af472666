/**
 * Writes docs/configuration.md from the zod schemas of the configuration: every key with its type,
 * range, default and description, the WINNOWER_* variables, and the deprecated spellings.
 * `npm run docs:config` runs it; test/config-docs.unit.test.ts fails when the committed page is
 * not what this renders, so a schema change comes with its documentation.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { CONFIG_DEPRECATIONS, type DeprecationCode, snakeCase } from '../src/config-keys.js';
import { CONFIG_ENV, WinnowerConfig } from '../src/config.js';
import { PatchSettingsSchema } from '../src/sandbox/patch-policy.js';
import { DockerSettingsSchema } from '../src/sandbox/providers/docker/provider.js';
import { LocalSettingsSchema } from '../src/sandbox/providers/local/provider.js';
import { OrchardSettingsSchema } from '../src/sandbox/providers/orchard/provider.js';
import { ScorerBatching, ScorerConfig } from '../src/scoring/registry.js';

export const CONFIG_DOC = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));

/** A JSON Schema node as z.toJSONSchema writes it, with our metadata (`env`, `sameAs`, `codeOnly`). */
type Node = { [key: string]: unknown };

const PROVIDERS: ReadonlyArray<[string, z.ZodType]> = [
  ['local', LocalSettingsSchema],
  ['docker', DockerSettingsSchema],
  ['orchard', OrchardSettingsSchema],
];

const jsonSchema = (schema: z.ZodType): Node => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Node;
const properties = (node: Node): Record<string, Node> => (node.properties ?? {}) as Record<string, Node>;
const isObject = (node: Node): boolean => node.type === 'object' && node.properties !== undefined;
/** An object whose keys are documented one by one gets a section; `{yes, no}` stays a type. */
const isSection = (node: Node): boolean =>
  isObject(node) && Object.values(properties(node)).some((inner) => inner.description !== undefined);
/** The object of `false | {...}` (scorer.batching), which gets a section of its own. */
const objectVariant = (node: Node): Node | undefined => ((node.anyOf ?? []) as Node[]).find(isSection);

/** GitHub's anchor of a heading. */
const anchor = (heading: string): string =>
  heading
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');
const link = (heading: string): string => `[\`${heading.replace(/`/g, '')}\`](#${anchor(heading)})`;
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function range(node: Node): string {
  const bound = (key: string): number | undefined => {
    const value = node[key];
    // zod writes the safe-integer bounds of every int(); they say nothing.
    return typeof value === 'number' && Math.abs(value) < Number.MAX_SAFE_INTEGER ? value : undefined;
  };
  const [min, above, max, below] = [bound('minimum'), bound('exclusiveMinimum'), bound('maximum'), bound('exclusiveMaximum')];
  if (min !== undefined && max !== undefined) return ` ${min}–${max}`;
  const parts = [
    min !== undefined ? `≥ ${min}` : above !== undefined ? `> ${above}` : undefined,
    max !== undefined ? `≤ ${max}` : below !== undefined ? `< ${below}` : undefined,
  ].filter(Boolean);
  return parts.length ? ` ${parts.join(', ')}` : '';
}

function typeOf(node: Node): string {
  if (node.anyOf) return (node.anyOf as Node[]).map(typeOf).join(' or ');
  if (node.enum) return `one of ${(node.enum as unknown[]).map((value) => `\`${String(value)}\``).join(', ')}`;
  if ('const' in node) return `\`${JSON.stringify(node.const)}\``;
  switch (node.type) {
    case 'string':
      return node.format === 'uri' ? 'URL' : 'string';
    case 'integer':
      return `integer${range(node)}`;
    case 'number':
      return `number${range(node)}`;
    case 'array':
      return `list of ${typeOf((node.items ?? {}) as Node)}`;
    case 'object':
      return isObject(node) ? `{${Object.keys(properties(node)).map(snakeCase).join(', ')}}` : 'object';
    default:
      return String(node.type ?? 'any');
  }
}

function value(data: unknown, key = ''): string {
  if (typeof data === 'number' && key.endsWith('_bytes') && data >= 1024 * 1024 && data % (1024 * 1024) === 0) {
    return `${data} (${data / (1024 * 1024)} MiB)`;
  }
  if (data !== null && typeof data === 'object' && !Array.isArray(data)) {
    const entries = Object.entries(data).map(([name, inner]) => `${snakeCase(name)}: ${JSON.stringify(inner)}`);
    return `{ ${entries.join(', ')} }`;
  }
  return typeof data === 'string' ? data : JSON.stringify(data);
}

interface Section {
  heading: string;
  intro?: string;
  node: Node;
}

/** Variables that give a key its default (the `env` metadata of a field), gathered while rendering. */
type EnvDefaults = Array<{ name: string; key: string }>;

function renderSection(section: Section, queue: Section[], envDefaults: EnvDefaults, path: string): string {
  const rows: string[] = [];
  for (const [name, node] of Object.entries(properties(section.node))) {
    if (node.codeOnly === true) continue;
    const key = snakeCase(name);
    const full = path ? `${path}.${key}` : key;
    const description = node.description;
    if (typeof description !== 'string' || description === '') {
      throw new Error(`${full} has no description: give its schema field a .describe() (docs/configuration.md shows it)`);
    }
    if (typeof node.env === 'string') envDefaults.push({ name: node.env, key: full });
    let type = typeOf(node);
    let fallback = 'default' in node ? value(node.default, key) : '—';
    const variant = isSection(node) ? node : objectVariant(node);
    if (typeof node.sameAs === 'string') {
      type = `object: the keys of ${link(node.sameAs)}`;
    } else if (full === 'sandbox.settings') {
      type = `object: the provider's keys, ${PROVIDERS.map(([provider]) => link(`sandbox.settings (provider ${provider})`)).join(', ')}`;
      fallback = '{}';
    } else if (variant) {
      queue.push({ heading: full, node: { ...variant, description } });
      type =
        node === variant
          ? `object: ${link(full)}`
          : `${typeOf({ ...node, anyOf: (node.anyOf as Node[]).filter((option) => option !== variant) })} or object: ${link(full)}`;
      if (node === variant) fallback = '—';
    }
    rows.push(`| \`${key}\` | ${cell(type)} | ${cell(fallback === '—' ? fallback : `\`${fallback}\``)} | ${cell(description)} |`);
  }
  return [
    path === '' ? `### ${section.heading}` : `### \`${section.heading}\``,
    '',
    ...(section.intro ? [section.intro, ''] : typeof section.node.description === 'string' ? [section.node.description, ''] : []),
    '| Key | Type | Default | Description |',
    '| --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}

/** The scorer as the config file takes it: ScorerConfig's keys, with the defaults the config file gives backend, model and urls. */
function scorerNode(root: Node): Node {
  const own = properties(properties(root).scorer!);
  const scorer = jsonSchema(ScorerConfig);
  const merged = Object.fromEntries(
    Object.entries(properties(scorer)).map(([name, node]) => {
      const given = own[name];
      return [name, given && 'default' in given ? { ...node, default: given.default } : node];
    }),
  );
  return { ...scorer, properties: merged, description: properties(root).scorer!.description };
}

function renderKeys(envDefaults: EnvDefaults): string {
  const root = jsonSchema(WinnowerConfig);
  const top = { ...root, properties: { ...properties(root), scorer: scorerNode(root) } };
  const out: string[] = [];
  const queue: Section[] = [];
  out.push(
    renderSection(
      {
        heading: 'Top level',
        intro: 'The keys at the top of the file; the objects among them have sections of their own below.',
        node: top,
      },
      queue,
      envDefaults,
      '',
    ),
  );
  while (queue.length) {
    const next = queue.shift()!;
    const found: Section[] = [];
    out.push(renderSection(next, found, envDefaults, next.heading));
    // Depth first, so a section's own sub-sections follow it (server, server.limits, server.retention, scorer, ...).
    queue.unshift(...found);
    if (next.heading === 'sandbox') {
      for (const [provider, schema] of PROVIDERS) {
        const heading = `sandbox.settings (provider ${provider})`;
        // The local provider's schema is not strict (it never refused other keys), and the page says so.
        const unknown = provider === 'local' ? 'keys it does not know are ignored' : 'a key it does not know is refused';
        const intro = `\`sandbox.settings\` when \`sandbox.provider\` is \`${provider}\`, checked when the provider is created; ${unknown}.`;
        out.push(renderSection({ heading, intro, node: jsonSchema(schema) }, [], envDefaults, 'sandbox.settings'));
      }
    }
  }
  return out.join('\n');
}

function renderEnvironment(envDefaults: EnvDefaults): string {
  const reading = {
    text: 'as written',
    number: 'a number',
    list: 'a comma-separated list',
    switch: '`false` turns it off, anything else on',
  };
  return [
    '## Environment variables',
    '',
    'Each of these sets one key, over the config file and under the flags. An empty variable counts as unset.',
    '',
    '| Variable | Key | Read as |',
    '| --- | --- | --- |',
    '| `WINNOWER_CONFIG` | (the config file itself, as `--config`) | a path |',
    ...CONFIG_ENV.map(({ name, key, reading: how }) => `| \`${name}\` | \`${key}\` | ${reading[how]} |`),
    '',
    'These give a key its default when the config file leaves it out:',
    '',
    '| Variable | Key |',
    '| --- | --- |',
    ...envDefaults.map(({ name, key }) => `| \`${name}\` | \`${key}\` |`),
    '',
  ].join('\n');
}

/** Every old spelling: the camelCase keys of the scorer's and the providers' schemas. */
function oldKeys(): Array<{ code: DeprecationCode; oldKey: string; newKey: string; where: string }> {
  const rows: Array<{ code: DeprecationCode; oldKey: string; newKey: string; where: string }> = [];
  const add = (code: DeprecationCode, path: string, keys: string[], where: string) => {
    for (const key of keys.filter((name) => /[A-Z]/.test(name))) {
      const existing = rows.find((row) => row.oldKey === `${path}.${key}`);
      if (existing) existing.where += `, ${where}`;
      else rows.push({ code, oldKey: `${path}.${key}`, newKey: `${path}.${snakeCase(key)}`, where });
    }
  };
  add('WNW_DEP001', 'scorer', Object.keys(ScorerConfig.shape), 'scorer');
  add('WNW_DEP001', 'scorer.batching', Object.keys(ScorerBatching.shape), 'scorer');
  for (const [provider, schema] of PROVIDERS) {
    const keys = Object.keys(properties(jsonSchema(schema))).filter((key) => properties(jsonSchema(schema))[key]!.codeOnly !== true);
    add('WNW_DEP002', 'sandbox.settings', keys, provider);
  }
  add('WNW_DEP002', 'sandbox.settings.patch', Object.keys(PatchSettingsSchema.shape), 'every provider');
  return rows;
}

function renderDeprecations(): string {
  return [
    '## Deprecated keys',
    '',
    'Before the keys were all snake_case, the `scorer` and `sandbox.settings` sections took camelCase keys (`timeoutMs`, `baseUrl`).',
    'Those spellings are still read. Each one found prints a numbered DeprecationWarning once per process, naming the key to write instead',
    '(`node --no-deprecation` hides them, `node --throw-deprecation` makes them errors, e.g. in CI). A key written both ways in one file is',
    'an error that names both.',
    '',
    '| Code | What is deprecated |',
    '| --- | --- |',
    ...Object.entries(CONFIG_DEPRECATIONS).map(([code, { summary }]) => `| \`${code}\` | ${summary} |`),
    '',
    '| Old key | Write instead | Code | Taken by |',
    '| --- | --- | --- | --- |',
    ...oldKeys().map(({ code, oldKey, newKey, where }) => `| \`${oldKey}\` | \`${newKey}\` | \`${code}\` | ${where} |`),
    '',
  ].join('\n');
}

const HEAD = `<!-- Generated from the zod schemas by scripts/gen-config-docs.ts: edit the schemas, then run \`npm run docs:config\`. -->

# Configuration

winnower reads one configuration, from these sources; a later one wins key by key:

1. the defaults below;
2. a YAML or JSON file, given with \`--config\` or \`WINNOWER_CONFIG\` (examples: [examples/config](../examples/config));
3. the \`WINNOWER_*\` [environment variables](#environment-variables);
4. the command's flags (\`winnower serve --port\`, \`winnower solve --policy-url\`, ...).

Every key is snake_case, and a key holding a quantity names its unit: \`_s\`, \`_ms\`, \`_bytes\`, \`_mb\` (MiB), \`_days\`,
\`_minutes\`. A key winnower does not know is refused with WNW_ERR_CFG_INVALID naming it, so a misspelt key never falls back
to its default silently (the one exception: the local provider's settings, see below). A dash under Default means the key has no fixed default: the description says what happens
when it is left out.

\`\`\`yaml
server:
  port: 8080
  max_running_jobs: 8
scorer:
  backend: vllm
  model: critic
  urls: [http://127.0.0.1:8000]
  timeout_ms: 300000
  batching: { max_batch_size: 32, window_ms: 10 }
sandbox:
  provider: orchard
  settings: { base_url: http://orchard-env:8000, login_shell: false }
\`\`\`

## Keys
`;

/** The whole page. */
export function renderConfigDocs(): string {
  const envDefaults: EnvDefaults = [];
  const keys = renderKeys(envDefaults);
  return `${[HEAD, keys, renderEnvironment(envDefaults), renderDeprecations()].join('\n').trimEnd()}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(CONFIG_DOC, renderConfigDocs());
  console.log(`wrote ${CONFIG_DOC}`);
}
