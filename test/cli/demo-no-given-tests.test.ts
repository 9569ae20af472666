/**
 * `npm run demo -- --no-given-tests` (issue 20) as a user runs it: no test list; the regression
 * check and three recorded test writers decide. The correct fix is chosen, and the output shows
 * the reproduction tests, the regressions and the pass matrix with the chosen row marked.
 */
import { execFile } from 'node:child_process';
import { cliArgv } from '../support/built-cli.js';
import { describe, expect, it } from 'vitest';
import { hasBubblewrap } from '../solve/helpers.js';

const ROOT = new URL('../../', import.meta.url).pathname;

function runDemo(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, cliArgv(['demo', ...args]), { cwd: ROOT, timeout: 400_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

describe.skipIf(!hasBubblewrap())('winnower demo --no-given-tests', () => {
  it('chooses the correct fix from the regression check and the pass matrix', async () => {
    const { code, stdout, stderr } = await runDemo(['--no-given-tests']);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('reproduction tests: 3 written, 2 valid');
    expect(stdout).toMatch(/regression check: .* on the base commit twice/);
    const row = (name: string) => stdout.split('\n').find((line) => new RegExp(`^\\d+\\s+${name}\\s+\\d+\\s+(pass|FAIL)`).test(line)) ?? '';
    // The matrix rows: regressions, then each valid test's outcome, the pass count, the chosen mark.
    expect(row('correct-fix')).toMatch(/\s0\s+pass\s+pass\s+2\/2\s+✔ chosen$/);
    expect(row('plausible-wrong-fix')).toMatch(/\s0\s+pass\s+FAIL\s+1\/2$/);
    expect(row('breaks-other-tests')).toMatch(/\s2\s+pass\s+pass\s+2\/2$/);
    // No patch: neither checked nor run against the tests.
    expect(stdout.split('\n').find((line) => /^\d+\s+gives-up\s+—/.test(line))).toMatch(/^\d+\s+gives-up\s+—\s+—\s+—\s+—$/);
    // Test ids as the runner gives them: `test_rejects_empty` from unittest, or
    // `tests/test_durations.py::ParseDurationTests::test_rejects_empty` where the host's Python has pytest.
    expect(stdout).toMatch(/regressions: (?:\S+::)?test_rejects_empty .*test_rejects_garbage/);
    expect(stdout).toContain('+_PART = re.compile(r"(\\d+)([hms])")');
  }, 400_000);
});
