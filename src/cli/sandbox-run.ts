/**
 * `winnower sandbox run`: creates a sandbox, runs one command in it, prints its output (and the
 * workspace diff with --diff), closes it, and exits with the command's exit code (124 on timeout).
 * For trying and debugging sandbox providers.
 */
import { resolve } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { loadConfig } from '../config.js';
import { wnwError } from '../errors.js';
import { shellQuote } from '../sandbox/base-sandbox.js';
import { encodePatch } from '../sandbox/patch-bytes.js';
import { createSandboxProvider, SANDBOX_PROVIDERS } from '../sandbox/registry.js';
import { positiveNumber } from './parse-options.js';
import type { SandboxSpec } from '../sandbox/types.js';

interface RunFlags {
  repo?: string;
  commit?: string;
  provider?: string;
  image?: string;
  workdir?: string;
  network: boolean;
  timeout: number;
  memory?: number;
  cpu?: number;
  diff: boolean;
  config?: string;
  verbose: boolean;
}


/** A git URL (scheme://... or user@host:path) rather than a local path. */
export function isGitUrl(value: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) || /^[\w.-]+@[\w.-]+:/.test(value);
}

/** One argument is a shell command line; several are a program and its arguments. */
export function commandLine(words: string[]): string {
  return words.length === 1 ? words[0]! : words.map(shellQuote).join(' ');
}

export function registerSandboxCommand(program: Command): void {
  const sandbox = program.command('sandbox').description('try and debug sandbox providers');
  sandbox
    .command('run')
    .description('create a sandbox, run a command in it, print its output, close it; exits with the command\'s exit code (124 on timeout)')
    .argument('<command...>', 'after --: one argument is run as a shell command line, several as a program and its arguments')
    .option('--repo <path|url>', 'repository to check out (local path or git URL)')
    .option('--commit <commit>', 'commit to start from (default: HEAD)')
    .option('--provider <name>', `sandbox provider: ${SANDBOX_PROVIDERS.join(' | ')} (default: config or WINNOWER_SANDBOX, else local)`)
    .option('--image <image>', 'container image: name:tag, name@digest, docker://…, or on the local provider also oci:<dir>:<tag>, docker-archive:<file>')
    .option('--workdir <dir>', 'where the repository is inside the sandbox')
    .option('--network', 'allow network access (off by default)', false)
    .option('--timeout <seconds>', 'kill the command after this long', positiveNumber, 120)
    .option('--memory <mb>', 'memory limit in MiB', positiveNumber)
    .option('--cpu <cores>', 'CPU limit in cores', positiveNumber)
    .option('--diff', 'print the workspace diff against the base commit after the command', false)
    .option('-c, --config <file>', 'config file for provider settings (also WINNOWER_CONFIG)')
    .option('-v, --verbose', 'print what the provider enforces, and timings, to stderr', false)
    .action(async (words: string[], flags: RunFlags) => {
      process.exitCode = await runInSandbox(words, flags);
    });
}

async function runInSandbox(words: string[], flags: RunFlags): Promise<number> {
  if (!flags.repo && !flags.image) throw wnwError('WNW_ERR_INPUT_INVALID', 'give --repo <path|url> or --image <image>', { details: { field: 'repo' } });
  const config = loadConfig({ file: flags.config, overrides: flags.provider ? { sandbox: { provider: flags.provider } } : {} });
  const name = config.sandbox.provider;
  const spec: SandboxSpec = {
    ...(flags.repo ? { repo: isGitUrl(flags.repo) ? { url: flags.repo, base_commit: flags.commit } : { path: resolve(flags.repo), base_commit: flags.commit } } : {}),
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
