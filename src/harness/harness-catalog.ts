/**
 * The harnesses this server can run: the built-in agent, and every definition whose CLI is
 * installed (or comes with the image). `list()` feeds GET /harnesses, with the reason and the
 * install command for those that cannot run; `resolve()` is what a rollout uses.
 */
import { wnwError } from '../errors.js';
import { BUILTIN_HARNESS, loadHarnessDefinitions, type HarnessDefinition } from './harness-definition.js';
import { defaultHarnessDir, harnessInstall, type HarnessInstall } from './harness-install.js';

export interface HarnessStatus {
  name: string;
  description: string;
  protocol: string;
  /** `npm` (installed on the host, bound into the sandbox), `image` (in the sandbox image) or `builtin`. */
  source: 'builtin' | 'npm' | 'image';
  package?: string;
  version?: string;
  available: boolean;
  /** Why it cannot run here, and how to fix that. */
  reason?: string;
  install_command?: string;
}

export interface ResolvedHarness {
  definition: HarnessDefinition;
  install: HarnessInstall;
}

export interface HarnessCatalog {
  /** Host folder holding installed harness CLIs. */
  readonly installDir: string;
  list(): HarnessStatus[];
  /** The definition and install of a runnable harness; a coded error naming `field` otherwise. */
  resolve(name: string, field?: string): ResolvedHarness;
}

export function createHarnessCatalog(options: { definitionsDir?: string; installDir?: string } = {}): HarnessCatalog {
  const loaded = loadHarnessDefinitions(options.definitionsDir);
  const definitions = loaded.external;
  const installDir = options.installDir ?? defaultHarnessDir();
  const status = (definition: HarnessDefinition): HarnessStatus => {
    const install = harnessInstall(definition, installDir);
    const { source } = definition;
    return {
      name: definition.name,
      description: definition.description,
      protocol: definition.protocol,
      source: source.kind,
      ...(source.kind === 'npm' ? { package: source.package, version: source.version } : {}),
      available: install.installed,
      ...(install.installed ? {} : { reason: `${source.kind === 'npm' ? `${source.package}@${source.version}` : source.bin} is not installed on this server`, install_command: install.installCommand }),
    };
  };
  return {
    installDir,
    list: () => [
      { name: BUILTIN_HARNESS, description: loaded.builtin?.description ?? "winnower's built-in bash agent", protocol: 'openai-chat', source: 'builtin' as const, available: true },
      ...[...definitions.values()].map(status),
    ],
    resolve(name, field = 'agent.harness') {
      const definition = definitions.get(name);
      if (!definition) {
        throw wnwError('WNW_ERR_HARNESS_UNKNOWN', `harness "${name}" is not defined; known: ${[BUILTIN_HARNESS, ...definitions.keys()].join(', ')}`, { details: { field } });
      }
      const install = harnessInstall(definition, installDir);
      if (!install.installed) {
        throw wnwError('WNW_ERR_HARNESS_MISSING', `harness "${name}" is not installed on this server; install it with: ${install.installCommand}`, {
          details: { field, install_command: install.installCommand },
        });
      }
      return { definition, install };
    },
  };
}
