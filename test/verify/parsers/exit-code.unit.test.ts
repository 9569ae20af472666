import { describe, expect, it } from 'vitest';
import { parseExitCode } from '../../../src/verify/parsers/exit-code.js';

describe('parseExitCode', () => {
  it('passes every listed test on exit 0 and fails them otherwise', () => {
    expect(Object.fromEntries(parseExitCode('', { exitCode: 0, testIds: ['a', 'b'] }))).toEqual({ a: 'passed', b: 'passed' });
    expect(Object.fromEntries(parseExitCode('', { exitCode: 2, testIds: ['a'] }))).toEqual({ a: 'failed' });
  });

  it('says nothing when the command was killed or nothing is listed', () => {
    expect(parseExitCode('', { exitCode: null, testIds: ['a'] }).size).toBe(0);
    expect(parseExitCode('', { exitCode: 0 }).size).toBe(0);
  });
});
