/**
 * The harnesses this server can run: the built-in agent, and every definition whose CLI is
 * installed (or comes with the image). `list()` feeds GET /harnesses, with the reason and the
 * install command for those that cannot run; `resolve()` is what a rollout uses.
 */
import { wnwError } from '../../errors.js';
import { findBlocker, sandboxUser, type Blocker } from '../../sandbox/reachable.js';
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
    const closed = unreachable(install);
    const { source } = definition;
    const what = source.kind === 'npm' ? `${source.package}@${source.version}` : source.bin;
    return {
      name: definition.name,
      description: definition.description,
      protocol: definition.protocol,
      source: source.kind,
      ...(source.kind === 'npm' ? { package: source.package, version: source.version } : {}),
      available: install.installed && !closed,
      ...(!install.installed ? { reason: `${what} is not installed on this server`, install_command: install.installCommand } : {}),
      ...(closed ? { reason: closedReason(what, closed) } : {}),
    };
  };
  return {
    installDir,
    list: () => [
      {
        name: BUILTIN_HARNESS,
        description: loaded.builtin?.description ?? "winnower's built-in bash agent",
        protocol: 'openai-chat',
        source: 'builtin' as const,
        available: true,
      },
      ...[...definitions.values()].map(status),
    ],
    resolve(name, field = 'agent.harness') {
      const definition = definitions.get(name);
      if (!definition) {
        throw wnwError(
          'WNW_ERR_HARNESS_UNKNOWN',
          `harness "${name}" is not defined; known: ${[BUILTIN_HARNESS, ...definitions.keys()].join(', ')}`,
          { details: { field } },
        );
      }
      const install = harnessInstall(definition, installDir);
      if (!install.installed) {
        throw wnwError(
          'WNW_ERR_HARNESS_MISSING',
          `harness "${name}" is not installed on this server; install it with: ${install.installCommand}`,
          {
            details: { field, install_command: install.installCommand },
          },
        );
      }
      const closed = unreachable(install);
      if (closed) throw wnwError('WNW_ERR_HARNESS_MISSING', `harness "${name}": ${closedReason(name, closed)}`, { details: { field } });
      return { definition, install };
    },
  };
}

/** As root, sandboxes run as another uid, which must pass through every folder above an install (a mode-0700 folder stops bwrap). */
function unreachable(install: HarnessInstall): Blocker | undefined {
  return install.installed && install.folder ? findBlocker(install.folder, sandboxUser(), 'rx') : undefined;
}

// No host path: this reaches API clients (GET /harnesses, a 400's message); `winnower harness list` prints the folder.
function closedReason(what: string, closed: Blocker): string {
  return `${what} is installed, but sandboxes cannot reach it: the harness folder, or a folder above it, is mode ${closed.mode.toString(8).padStart(3, '0')}, closed to the sandbox user; run chmod o+${closed.missing} on it, or set WINNOWER_HARNESS_DIR to a folder every user can pass through`;
}
