/**
 * `winnower sandbox run`: creates a sandbox, runs one command in it, prints its output (and the
 * workspace diff with --diff), closes it, and exits with the command's exit code (124 on timeout).
 * For trying and debugging sandbox providers.
 */
import type { Command } from 'commander';
import { shellQuote } from '../sandbox/base-sandbox.js';
import { positiveNumber } from './parse-options.js';
import { SANDBOX_PROVIDER_NAMES as SANDBOX_PROVIDERS } from './option-values.js';

export interface RunFlags {
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
    .description("create a sandbox, run a command in it, print its output, close it; exits with the command's exit code (124 on timeout)")
    .argument('<command...>', 'after --: one argument is run as a shell command line, several as a program and its arguments')
    .option('--repo <path|url>', 'repository to check out (local path or git URL)')
    .option('--commit <commit>', 'commit to start from (default: HEAD)')
    .option('--provider <name>', `sandbox provider: ${SANDBOX_PROVIDERS.join(' | ')} (default: config or WINNOWER_SANDBOX, else local)`)
    .option(
      '--image <image>',
      'container image: name:tag, name@digest, docker://…, or on the local provider also oci:<dir>:<tag>, docker-archive:<file>',
    )
    .option('--workdir <dir>', 'where the repository is inside the sandbox')
    .option('--network', 'allow network access (off by default)', false)
    .option('--timeout <seconds>', 'kill the command after this long', positiveNumber, 120)
    .option('--memory <mb>', 'memory limit in MiB', positiveNumber)
    .option('--cpu <cores>', 'CPU limit in cores', positiveNumber)
    .option('--diff', 'print the workspace diff against the base commit after the command', false)
    .option('-c, --config <file>', 'config file for provider settings (also WINNOWER_CONFIG)')
    .option('-v, --verbose', 'print what the provider enforces, and timings, to stderr', false)
    .action(async (words: string[], flags: RunFlags) => {
      process.exitCode = await (await import('./sandbox-run-action.js')).runInSandbox(words, flags);
    });
}
