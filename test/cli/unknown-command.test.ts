/** An unknown command is an error with exit 2, with or without --help (issue 27 item 25). */
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

describe('winnower <unknown command>', () => {
  it.each([['frobnicate'], ['frobnicate', '--help'], ['sandbox', 'frobnicate', '--help']])('%s exits 2 naming it', async (...args) => {
    const { code, stderr, stdout } = await runCli(args);
    expect(code).toBe(2);
    expect(stderr).toContain(`unknown command '${args.filter((a) => !a.startsWith('-')).join(' ')}'`);
    expect(stdout).toBe('');
  });

  it('points at the help of the command whose subcommand is unknown', async () => {
    const { code, stderr } = await runCli(['jobs', 'frobnicate']);
    expect(code).toBe(2);
    expect(stderr).toContain('(commands: export); see winnower jobs --help');
  });

  it('still answers help for a known one', async () => {
    const { code, stdout } = await runCli(['sandbox', 'serve', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('Usage: winnower sandbox serve');
  });
});

/** A flag commander refuses is invalid input like any other: exit 2, the reason, a pointer to --help (not all of it). */
describe('winnower <command> with a bad flag', () => {
  it.each([
    [['solve', '--n', '0'], "option '--n <n>' argument '0' is invalid"],
    [['solve', '--bogus'], "unknown option '--bogus'"],
    [['rerank', '--strategy', 'nope'], "option '--strategy <name>' argument 'nope' is invalid"],
    [['jobs', 'export', '--format', 'xml'], "option '--format <name>' argument 'xml' is invalid"],
  ])('%j exits 2 saying why', async (args, reason) => {
    const { code, stderr, stdout } = await runCli(args);
    expect(code).toBe(2);
    expect(stderr).toContain(reason);
    expect(stderr).toContain('(add --help for the options)');
    expect(stderr).not.toContain('Usage:');
    expect(stdout).toBe('');
  });

  it('--version and --help still exit 0', async () => {
    expect((await runCli(['--version'])).code).toBe(0);
    expect((await runCli(['rerank', '--help'])).code).toBe(0);
  });
});
