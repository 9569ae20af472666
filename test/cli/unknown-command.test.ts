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
