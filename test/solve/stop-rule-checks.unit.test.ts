import { describe, expect, it } from 'vitest';
import { stopRuleMet } from '../../src/solve/stop-rule.js';
import { Score } from '../../src/types/index.js';

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
