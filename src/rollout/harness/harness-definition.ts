/**
 * A harness definition (config/harnesses/<name>.yaml), validated by zod: where the agent CLI
 * comes from (an npm package installed on the host and bound read-only into the sandbox, or a
 * program already in the image), the wire protocol it speaks, the tools that mark its agent
 * loop, the files and environment that point it at the proxy, the bash command that runs it
 * non-interactively (the issue arrives as a file, never in the command's text), and its limits.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { wnwError } from '../../errors.js';
import { packageRoot } from '../../util/package-root.js';
import { HarnessProtocol } from '../proxy/protocols.js';

export const HARNESS_NAME = /^[a-z0-9][a-z0-9_-]*$/;

/** The built-in bash agent: not a file, always available. */
export const BUILTIN_HARNESS = 'winnower';

const NpmSource = z.strictObject({
  kind: z.literal('npm'),
  package: z.string().min(1),
  /** Exact version: installs are pinned. */
  version: z.string().regex(/^\d+\.\d+\.\d+(?:[-+][\w.]+)?$/, 'an exact version (1.2.3)'),
  /** The package's program, as named in its package.json `bin`. */
  bin: z.string().regex(/^[\w.-]+$/),
});

const ImageSource = z.strictObject({
  kind: z.literal('image'),
  /** A program on the sandbox's PATH. */
  bin: z.string().min(1),
});

export const HarnessDefinition = z.strictObject({
  name: z.string().regex(HARNESS_NAME),
  description: z.string().min(1),
  protocol: HarnessProtocol,
  source: z.discriminatedUnion('kind', [NpmSource, ImageSource]),
  /** Tools every agent-loop request offers; requests without them are side calls. */
  main_tools: z.array(z.string().min(1)).min(1),
  /** What the issue file holds: {{problem_statement}}, {{workdir}}. */
  prompt_template: z.string().min(1),
  /** Files written below the rollout's HOME before the run ({{proxy_url}}, {{proxy_origin}}, {{token}}, {{model}}, {{home}}). */
  files: z
    .array(z.strictObject({ path: z.string().regex(/^[\w.-]+(?:\/[\w.-]+)*$/, 'a relative path below HOME'), content: z.string() }))
    .default([]),
  /** Extra environment, rendered with the same placeholders. */
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).default({}),
  /**
   * The bash script that runs the harness in the repository. It reads the issue from
   * "$WINNOWER_ISSUE_FILE"; "$WINNOWER_MODEL" names the model. Exit status 0 means the harness
   * finished its turn; anything else is a failed rollout.
   */
  command: z.string().min(1),
  limits: z.strictObject({
    max_calls: z.number().int().positive(),
    token_limit: z.number().int().positive(),
    time_limit_s: z.number().positive(),
  }),
});
export type HarnessDefinition = z.infer<typeof HarnessDefinition>;

/** config/harnesses/winnower.yaml: the built-in agent, listed beside the others. */
export const BuiltinHarnessDefinition = z.strictObject({
  name: z.literal(BUILTIN_HARNESS),
  description: z.string().min(1),
  builtin: z.literal(true),
});
export type BuiltinHarnessDefinition = z.infer<typeof BuiltinHarnessDefinition>;

export interface HarnessDefinitions {
  builtin?: BuiltinHarnessDefinition;
  external: Map<string, HarnessDefinition>;
}

export const harnessesDir = (): string => join(packageRoot(), 'config', 'harnesses');

/** The definitions in a folder (config/harnesses by default), by name; a bad file is an error naming it. */
export function loadHarnessDefinitions(dir = harnessesDir()): HarnessDefinitions {
  const out: HarnessDefinitions = { external: new Map() };
  if (!existsSync(dir)) return out;
  for (const file of readdirSync(dir)
    .filter((entry) => entry.endsWith('.yaml'))
    .sort()) {
    const raw = parse(readFileSync(join(dir, file), 'utf8')) as { builtin?: unknown } | null;
    const parsed = (raw?.builtin === true ? BuiltinHarnessDefinition : HarnessDefinition).safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw wnwError('WNW_ERR_CFG_INVALID', `harness definition ${file}: ${issue.path.join('.')}: ${issue.message}`, {
        details: { file, key: issue.path.join('.') },
      });
    }
    if (`${parsed.data.name}.yaml` !== file) {
      throw wnwError(
        'WNW_ERR_CFG_INVALID',
        `harness definition ${file} names itself "${parsed.data.name}"; the file must be ${parsed.data.name}.yaml`,
        { details: { file } },
      );
    }
    if ('builtin' in parsed.data) out.builtin = parsed.data;
    else out.external.set(parsed.data.name, parsed.data);
  }
  return out;
}
