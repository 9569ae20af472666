/**
 * `winnower solve` option parsing: `--replay` takes several files after one flag, as an unquoted
 * glob (`--replay recs/*.json`) arrives from the shell, and still accumulates when repeated. The
 * command's action is swapped for one that records the flags, so nothing runs.
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerSolveCommand } from '../../src/cli/solve.js';

function parseSolve(args: string[]): Record<string, unknown> {
  const program = new Command('winnower').exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  registerSolveCommand(program);
  let flags: Record<string, unknown> | undefined;
  program.commands
    .find((command) => command.name() === 'solve')!
    .action((parsed: Record<string, unknown>) => {
      flags = parsed;
    });
  program.parse(['solve', ...args], { from: 'user' });
  return flags!;
}

describe('winnower solve --replay', () => {
  it('takes several files after one flag (an unquoted glob expanded by the shell)', () => {
    const flags = parseSolve(['--issue', 'x', '--replay', 'recs/a.json', 'recs/b.json', 'recs/c.json', '--n', '3']);
    expect(flags.replay).toEqual(['recs/a.json', 'recs/b.json', 'recs/c.json']);
    expect(flags.n).toBe(3);
  });

  it('accumulates the files of a repeated flag', () => {
    const flags = parseSolve(['--replay', 'a.json', '--issue', 'x', '--replay', 'b.json', 'c.json']);
    expect(flags.replay).toEqual(['a.json', 'b.json', 'c.json']);
  });
});

describe('winnower solve --task', () => {
  it('parses the task folder and the reward threshold', () => {
    const flags = parseSolve(['--task', 'tasks/fix-median', '--reward-threshold', '0.5']);
    expect(flags).toMatchObject({ task: 'tasks/fix-median', rewardThreshold: 0.5 });
    expect(() => parseSolve(['--task', 't', '--reward-threshold', 'high'])).toThrow();
  });
});

describe('winnower solve --fork-at', () => {
  it('parses setup, first-edit and a step number, and refuses anything else or --no-fork beside it', () => {
    expect(parseSolve(['--issue', 'x', '--fork-at', 'first-edit']).forkAt).toBe('first-edit');
    expect(parseSolve(['--issue', 'x', '--setup', 'make', '--fork-at', 'setup']).forkAt).toBe('setup');
    expect(parseSolve(['--issue', 'x', '--fork-at', '3']).forkAt).toBe(3);
    for (const bad of ['0', '1.5', 'last'])
      expect(() => parseSolve(['--issue', 'x', '--fork-at', bad])).toThrow(/must be setup, first-edit or a step number/);
    expect(() => parseSolve(['--issue', 'x', '--setup', 'make', '--no-fork', '--fork-at', 'setup'])).toThrow(/cannot be used with/);
  });
});
