/** What `winnower sandbox run` does once its flags are parsed; loaded only when it runs (sandbox-run.ts registers it). */
import { resolve } from 'node:path';
import { loadConfig } from '../config.js';
import { wnwError } from '../errors.js';
import { encodePatch } from '../sandbox/patch-bytes.js';
import { createSandboxProvider } from '../sandbox/registry.js';
import type { SandboxSpec } from '../sandbox/types.js';
import { commandLine, isGitUrl, type RunFlags } from './sandbox-run.js';

export async function runInSandbox(words: string[], flags: RunFlags): Promise<number> {
  if (!flags.repo && !flags.image)
    throw wnwError('WNW_ERR_INPUT_INVALID', 'give --repo <path|url> or --image <image>', { details: { field: 'repo' } });
  const config = loadConfig({ file: flags.config, overrides: flags.provider ? { sandbox: { provider: flags.provider } } : {} });
  const name = config.sandbox.provider;
  const spec: SandboxSpec = {
    ...(flags.repo
      ? {
          repo: isGitUrl(flags.repo)
            ? { url: flags.repo, base_commit: flags.commit }
            : { path: resolve(flags.repo), base_commit: flags.commit },
        }
      : {}),
    ...(flags.image ? { image: flags.image } : {}),
    ...(flags.workdir ? { workdir: flags.workdir } : {}),
    ...(flags.memory ? { memoryMb: flags.memory } : {}),
    ...(flags.cpu ? { cpu: flags.cpu } : {}),
    network: flags.network,
    label: 'winnower sandbox run',
  };
  const provider = await createSandboxProvider(name, config.sandbox.settings, config.sandbox.patch);
  const note = (message: string): void => {
    if (flags.verbose) process.stderr.write(`winnower: ${message}\n`);
  };
  try {
    if (flags.verbose) note(`provider ${name}: ${JSON.stringify(await provider.describe())}`);
    let started = performance.now();
    const sandbox = await provider.create(spec);
    note(`sandbox ${sandbox.id} created in ${Math.round(performance.now() - started)} ms (workdir ${sandbox.workdir})`);
    try {
      started = performance.now();
      const result = await sandbox.exec(commandLine(words), {
        timeoutMs: flags.timeout * 1000,
        onOutput: (stream, chunk) => (stream === 'stdout' ? process.stdout : process.stderr).write(chunk),
      });
      note(`exit ${result.exitCode ?? 'none'} in ${result.durationMs} ms`);
      if (result.truncated) process.stderr.write('winnower: output truncated\n');
      if (result.timedOut) process.stderr.write(`winnower: command timed out after ${flags.timeout} s and was killed\n`);
      if (result.note) process.stderr.write(`winnower: ${result.note}\n`);
      if (flags.diff) process.stdout.write(encodePatch(await sandbox.diff()));
      return result.timedOut ? 124 : (result.exitCode ?? 1);
    } finally {
      await sandbox.close();
    }
  } finally {
    await provider.close();
  }
}
