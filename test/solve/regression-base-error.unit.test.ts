/**
 * What the regression check says when its base passes nothing (src/solve/regression.ts
 * noPassError): a suite whose parser found no passing test, or a command graded by its exit code
 * that fails on the base commit, though its log says "OK" for the tests it ran first.
 */
import { describe, expect, it } from 'vitest';
import { noPassError } from '../../src/solve/regression.js';

describe('regression base error', () => {
  it('a parsed suite that passed no test says so, with the log quoted', () => {
    const error = noPassError(
      { runner: 'pytest', command: 'python3 -m pytest', parser: 'pytest' },
      { exit_code: 4, log: 'ERROR: file or directory not found: tests\n\n' },
    );
    expect(error).toBe(
      'the base suite passed no test (runner pytest, command `python3 -m pytest`, exit 4), so no candidate can be checked against it: ERROR: file or directory not found: tests',
    );
  });

  it('a command graded by its exit code fails on the base commit, whatever its log says first', () => {
    const command = "python3 -m unittest tests.test_durations && python3 -c 'assert False'";
    const error = noPassError(
      { runner: 'given', command, parser: 'exit-code' },
      { exit_code: 1, log: 'Ran 5 tests in 0.010s\n\nOK\nTraceback (most recent call last):\nAssertionError\n' },
    );
    expect(error).toContain(
      `the base commit fails the test command (runner given, command \`${command}\`, exit 1; graded by its exit code`,
    );
    expect(error).toContain('give verify.regression.test_command a command that passes on the base');
    expect(error).toContain('Ran 5 tests in 0.010s | OK | Traceback');
    expect(error).not.toContain('passed no test');
  });
});
