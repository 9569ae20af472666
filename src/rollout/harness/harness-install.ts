/**
 * Where harness CLIs are installed on the host, and installing one: each npm harness goes to
 * <dir>/<name>@<version> (pinned; reused while it is there), outside the repository. The folder
 * is WINNOWER_HARNESS_DIR, else /var/cache/winnower/harnesses for root (the sandbox drops root,
 * and root's home is closed to other users), else ~/.cache/winnower/harnesses.
 */
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { wnwError } from '../../errors.js';
import { describeBlocker, findBlocker, makeDirs, sandboxUser } from '../../sandbox/reachable.js';
import type { HarnessDefinition } from './harness-definition.js';

export function defaultHarnessDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.WINNOWER_HARNESS_DIR) return env.WINNOWER_HARNESS_DIR;
  if (process.getuid?.() === 0) return '/var/cache/winnower/harnesses';
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'winnower', 'harnesses');
}

export interface HarnessInstall {
  /** Host folder bound into the sandbox (npm harnesses). */
  folder?: string;
  /** Absolute program path inside the sandbox, or the program's name on its PATH. */
  program: string;
  installed: boolean;
  /** How to install it, when it is not. */
  installCommand?: string;
}

/** Inside the sandbox, an npm harness's install folder appears here. */
export const HARNESS_MOUNT = '/opt/winnower/harness';

export function harnessInstall(definition: HarnessDefinition, dir: string): HarnessInstall {
  const { source } = definition;
  if (source.kind === 'image') return { program: source.bin, installed: true };
  const folder = join(dir, `${definition.name}@${source.version}`);
  return {
    folder,
    program: `${HARNESS_MOUNT}/node_modules/.bin/${source.bin}`,
    installed: existsSync(join(folder, 'node_modules', '.bin', source.bin)),
    // No host path here: this reaches API clients (GET /harnesses, a 400's message).
    installCommand: `winnower harness install ${definition.name}`,
  };
}

/** Installs an npm harness from the registry (npm's own client), unless its pinned version is there. */
export async function installHarness(
  definition: HarnessDefinition,
  dir: string,
  options: { log?: (line: string) => void } = {},
): Promise<{ folder: string; fresh: boolean }> {
  const { source } = definition;
  if (source.kind !== 'npm')
    throw wnwError('WNW_ERR_INPUT_INVALID', `harness ${definition.name} comes with the sandbox image; there is nothing to install`, {
      details: { field: 'name' },
    });
  const install = harnessInstall(definition, dir);
  const folder = install.folder!;
  if (install.installed) return { folder, fresh: false };
  // The sandbox user reads the install: folders 0755 and npm under umask 022, whatever ours is.
  makeDirs(folder, 0o755);
  if (!existsSync(join(folder, 'package.json'))) writeFileSync(join(folder, 'package.json'), '{ "private": true }\n', { mode: 0o644 });
  const args = ['install', '--prefix', folder, '--no-audit', '--no-fund', '--save-exact', `${source.package}@${source.version}`];
  options.log?.(`npm ${args.join(' ')}`);
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('sh', ['-c', 'umask 022 && exec npm "$@"', 'npm', ...args], {
      stdio: ['ignore', 'inherit', 'inherit'],
      cwd: folder,
    });
    child.on('error', reject);
    child.on('exit', resolve);
  });
  if (code !== 0 || !harnessInstall(definition, dir).installed) {
    throw wnwError('WNW_ERR_CFG_INVALID', `npm could not install ${source.package}@${source.version} into ${folder} (exit ${code})`, {
      details: { package: source.package },
    });
  }
  const closed = findBlocker(folder, sandboxUser(), 'rx');
  if (closed) {
    const { where, fix } = describeBlocker(closed);
    options.log?.(
      `warning: sandboxes cannot reach ${folder}: the sandbox user cannot pass through ${where}; run \`${fix}\` or set WINNOWER_HARNESS_DIR to a folder every user can pass through`,
    );
  }
  return { folder, fresh: true };
}
