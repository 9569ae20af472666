/**
 * A writer's test files that all pass on the base commit reproduce nothing, but they assert
 * behaviour the base has: as a `keeps` pool test they count against a candidate that fails them
 * (docs/checks.md#tests-from-the-pool), as a base-failing test does; before, they were discarded
 * and a wrong fix that breaks the case another agent tested tied with the right fixes.
 */
import { describe, expect, it } from 'vitest';
import { CheckEvidence } from '../../src/solve/evidence.js';
import type { PoolCell, PoolTest } from '../../src/types/index.js';

const test = (writer: number, over: Partial<PoolTest>): PoolTest => ({
  writer,
  trajectory_id: `t${writer}`,
  files: [{ path: `tests/test_${writer}.py`, change: 'added', bytes: 10 }],
  command: `python3 -m pytest tests/test_${writer}.py`,
  ids: [`tests/test_${writer}.py::test_it`],
  base_outcome: 'failed',
  valid: false,
  discard_reason: null,
  base_log_tail: '',
  sandbox_ms: 1,
  ...over,
});
const cell = (index: number, writer: number, outcome: PoolCell['outcome']): PoolCell => ({
  index,
  writer,
  outcome,
  own: index === writer,
  duration_ms: 1,
});

describe('pool evidence: keeps tests', () => {
  it('counts a keeps test against the candidate that fails it; a base-passing test without the mark stays out', () => {
    const evidence = new CheckEvidence({ regression: false, reproduction: false, poolTests: true });
    // 0: a right fix whose test passes on base (the case the wrong fix breaks); 1: the wrong fix, no test.
    evidence.apply({ type: 'pool-test-finish', writer: 0, test: test(0, { base_outcome: 'passed', keeps: true }) });
    evidence.apply({ type: 'pool-test-finish', writer: 2, test: test(2, { base_outcome: 'passed', discard_reason: 'passes on base' }) });
    for (const c of [cell(0, 0, 'passed'), cell(1, 0, 'failed'), cell(2, 0, 'passed')])
      evidence.apply({ type: 'pool-cell-finish', cell: c });
    expect(evidence.forCandidate(0)?.pool).toMatchObject({ failed_weight: 0, own_total: 1 });
    expect(evidence.forCandidate(1)?.pool).toMatchObject({ failed_weight: 1, passed: 0, total: 1 });
    expect(evidence.poolWeighing().valid).toEqual(new Set([0]));
  });
});
