/** The tests from the pool in the terminal output of `winnower solve`/`jobs` (docs/checks.md#tests-from-the-pool). */
import { describe, expect, it } from 'vitest';
import { type CandidateView, formatEvent, type JobView, renderChecks } from '../../src/cli/job-output.js';

const candidate = (index: number): CandidateView => ({
  index,
  status: 'finished',
  exit: 'submitted',
  steps: 3,
  value: 0.5,
  verify: null,
  trajectory_id: `job/${index}`,
  error: null,
  patch: 'diff --git a/x b/x\n',
});

const test = (writer: number, valid: boolean, discard: string | null = null) => ({
  writer,
  files: [{ path: `tests/test_${writer}.py` }],
  ids: valid ? [`tests/test_${writer}.py::t`] : [],
  valid,
  discard_reason: discard,
});
const cell = (index: number, writer: number, outcome: string) => ({ index, writer, outcome, own: index === writer });

describe('job output: tests from the pool', () => {
  it('lists every pool test with its weight or discard, and the matrix with own cells apart and scores', () => {
    const job: JobView = {
      job_id: 'j',
      status: 'succeeded',
      error: null,
      candidates: [0, 1, 2].map(candidate),
      result: {
        chosen: { index: 1, patch: '' },
        rollouts: {},
        compute: {},
        checks: {
          regression: null,
          reproduction: null,
          pool_tests: {
            runner: 'pytest',
            tests: [test(0, true), test(1, true), test(2, false, 'errors at collection on the base commit: ImportError: x')],
            matrix: [
              cell(0, 0, 'passed'),
              cell(0, 1, 'passed'),
              cell(1, 0, 'passed'),
              cell(1, 1, 'passed'),
              cell(2, 0, 'failed'),
              cell(2, 1, 'failed'),
            ],
            clusters: [{ writers: [0, 1], weight: 2 }],
            scores: [
              { index: 0, score: 2, passed: 1, total: 1, own_passed: 1, own_total: 1 },
              { index: 1, score: 2, passed: 1, total: 1, own_passed: 1, own_total: 1 },
              { index: 2, score: 0, passed: 0, total: 2, own_passed: 0, own_total: 0 },
            ],
            sandbox_ms: [
              { index: 0, sandbox_ms: 1500 },
              { index: 1, sandbox_ms: 1000 },
              { index: 2, sandbox_ms: 2000 },
            ],
          },
          cost: { sandbox_ms: 4500, policy_tokens: 0, policy_calls: 0 },
        },
      },
    };
    const text = renderChecks(job, (c) => `c${c.index}`);
    expect(text).toContain('tests from the pool (pytest runner): 3 written by the candidates, 2 valid');
    expect(text).toContain("candidate 0's test  tests/test_0.py: valid, 1 id, weight 2");
    expect(text).toContain("candidate 2's test  tests/test_2.py: discarded: errors at collection on the base commit: ImportError: x");
    const rows = text.split('\n');
    expect(rows.find((line) => line.startsWith('0 ') && line.includes('(pass)'))).toMatch(/^0 +c0 +\(pass\) +pass +2 \(1\/1\) +1\.5$/);
    expect(rows.find((line) => line.startsWith('1 ') && line.includes('(pass)'))).toMatch(/✔ chosen$/);
    expect(rows.find((line) => line.startsWith('2 ') && line.includes('FAIL'))).toMatch(/^2 +c2 +FAIL +FAIL +0 \(0\/2\) +2\.0$/);
  });

  it('says why the check did not run, and reads its events', () => {
    expect(formatEvent('pool-tests-start', { runner: null, error: 'no candidate adds or changes a test file' })).toBe(
      'tests from the pool: not run: no candidate adds or changes a test file',
    );
    expect(
      formatEvent('pool-test-finish', { writer: 3, test: { files: [{ path: 'tests/test_a.py' }], ids: ['a', 'b'], discard_reason: null } }),
    ).toBe('pool test of candidate 3 (tests/test_a.py): 2 failing on base');
    expect(formatEvent('pool-matrix-finish', { scores: [{ index: 0, score: 2, passed: 1, total: 2 }] })).toBe(
      'pool matrix: candidate 0 score 2 (1/2)',
    );
  });
});
