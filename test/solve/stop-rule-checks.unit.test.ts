import { describe, expect, it } from 'vitest';
import { stopRuleMet } from '../../src/solve/stop-rule.js';
import { Score, VerifyResult, type VerifyStatus } from '../../src/types/index.js';

const score = Score.parse({
  trajectory_id: 't',
  instance_id: 'i',
  value: 0.5,
  raw: 0,
  backend: 'onnx',
  model: 'm',
  template: 'judge-v1',
  input_tokens: 1,
  truncated: false,
  cut: {},
});
const rule = { min_value: 0, require_resolved: true, require_checks: true };

describe('the stop rule with execution checks', () => {
  it('stops only on a candidate that breaks nothing and passes every valid reproduction test', () => {
    expect(stopRuleMet(rule, score, undefined, true, { regressions: 0, repro_passed: 2, repro_total: 2 })).toMatch(
      /passes 2\/2 valid reproduction tests and breaks no test/,
    );
    expect(stopRuleMet(rule, score, undefined, true, { regressions: 1, repro_passed: 2, repro_total: 2 })).toBeUndefined();
    expect(stopRuleMet(rule, score, undefined, true, { regressions: 0, repro_passed: 1, repro_total: 2 })).toBeUndefined();
    // The regression check did not run for it: not enough evidence to stop.
    expect(stopRuleMet(rule, score, undefined, true, { regressions: null, repro_passed: 2, repro_total: 2 })).toBeUndefined();
    expect(stopRuleMet(rule, score, undefined, true, undefined)).toBeUndefined();
  });
});

describe('the stop rule with a test run that could not run', () => {
  const ran = (status: VerifyStatus, other = 0): VerifyResult =>
    VerifyResult.parse({
      trajectory_id: 't',
      instance_id: 'i',
      status,
      applied: true,
      fail_to_pass: { passed: 0, failed: 0, missing: 1 },
      pass_to_pass: { passed: 0, failed: 0, missing: 0 },
      resolved: status === 'resolved',
      parser: 'pytest',
      exit_code: null,
      other_failed: other ? ['tests/test_x.py::test_other'] : [],
      other_failed_count: other,
      timed_out: status === 'timeout',
      duration_ms: 1,
    });
  const loose = { min_value: 0, require_resolved: false, require_checks: false };

  it('is no evidence of failure: the failing tests of its partial log do not hold a stop back', () => {
    expect(stopRuleMet(loose, score, ran('timeout', 1), true)).toMatch(/a candidate scored/);
    expect(stopRuleMet(loose, score, ran('error', 1), true)).toMatch(/a candidate scored/);
    // The same failing tests in a run that ran do.
    expect(stopRuleMet(loose, score, ran('unresolved', 1), true)).toBeUndefined();
  });

  it('is no evidence of resolution: a rule that wants resolved tests waits, whatever the checks say', () => {
    const clean = { regressions: 0, repro_passed: 1, repro_total: 1 };
    const strict = { min_value: 0, require_resolved: true, require_checks: false };
    expect(stopRuleMet(strict, score, ran('timeout'), true, clean)).toBeUndefined();
    expect(stopRuleMet(strict, score, ran('error'), true)).toBeUndefined();
    expect(stopRuleMet(strict, score, ran('resolved'), true)).toMatch(/passed its tests/);
  });
});
