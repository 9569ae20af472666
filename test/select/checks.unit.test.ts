/**
 * Execution checks in selection (issue 20): without any test list, a candidate that breaks no
 * test that passed on base and passes the most valid reproduction tests comes first; the value
 * model (or the learned score) only breaks ties, and the reason names the checks.
 */
import { describe, expect, it } from 'vitest';
import { computeSignals, select, SIGNALS, type Candidate, type LearnedSelector } from '../../src/select/index.js';
import { prepare } from '../../src/select/prepare.js';
import type { CandidateChecks } from '../../src/types/index.js';
import { FIX_A, candidate } from './fixtures.js';

const variant = (n: number): string => FIX_A.replace('+    return a + b', `+    return a + b + ${n}`);
const checked = (id: string, n: number, value: number, checks: CandidateChecks): Candidate => ({
  ...candidate(id, variant(n), value),
  checks,
});

/** The demo's shape: the value model prefers the wrong fixes. */
const pool = (): Candidate[] => [
  checked('breaks-tests', 1, 0.9, { regressions: 2, repro_passed: 2, repro_total: 2 }),
  checked('plausible-wrong', 2, 0.8, { regressions: 0, repro_passed: 1, repro_total: 2 }),
  checked('correct', 3, 0.4, { regressions: 0, repro_passed: 2, repro_total: 2 }),
];

describe('selection with regressions and reproduction tests', () => {
  it('value alone picks wrong; hybrid with the checks picks the fix that breaks nothing and passes every test', () => {
    expect(select('value', pool()).chosen).toBe('breaks-tests');
    const selection = select('hybrid', pool());
    expect(selection.chosen).toBe('correct');
    expect(selection.degraded_to).toBeNull();
    expect(selection.reason).toMatch(/breaks no test, passes 2\/2 reproduction tests/);
    expect(selection.reason).toMatch(
      /breaks-tests \(breaks 2 tests \(regression\), passes 2\/2 reproduction tests\).* had a higher value but worse checks/,
    );
    expect(selection.ranking.map((entry) => entry.trajectory_id)).toEqual(['correct', 'plausible-wrong', 'breaks-tests']);
  });

  it('the value model breaks a tie on the checks', () => {
    const tied = [
      checked('a', 1, 0.3, { regressions: 0, repro_passed: 1, repro_total: 1 }),
      checked('b', 2, 0.7, { regressions: 0, repro_passed: 1, repro_total: 1 }),
    ];
    const selection = select('hybrid', tied);
    expect(selection.chosen).toBe('b');
    expect(selection.reason).toMatch(/2 candidates tied on the checks; value broke the tie/);
  });

  it("tests from the pool: ranks by the weight of the others' tests it fails, not by the passes' score", () => {
    // `writer` wrote the only test that tells it from `silent`, which wrote none: by passes they tie
    // (its own test counted apart), and the value model would choose `silent`.
    const pooled = (score: number, failed: number, own: number) => ({
      regressions: 0,
      repro_passed: 0,
      repro_total: 0,
      pool: { score, passed: score, total: 1 + failed, own_passed: own, own_total: own, failed_weight: failed },
    });
    const selection = select('hybrid', [checked('silent', 1, 0.9, pooled(1, 1, 0)), checked('writer', 2, 0.4, pooled(1, 0, 1))]);
    expect(selection.chosen).toBe('writer');
    expect(selection.reason).toMatch(/pool tests: passes 1\/1 of the others' \(failed weight 0, score 1; its own 1\/1 not counted\)/);
    // Evidence written before failed_weight existed still ranks by the passes' score.
    const old = (score: number) => ({
      regressions: 0,
      repro_passed: 0,
      repro_total: 0,
      pool: { score, passed: score, total: 2, own_passed: 0, own_total: 0 },
    });
    expect(select('hybrid', [checked('low', 1, 0.9, old(1)), checked('high', 2, 0.4, old(2))]).chosen).toBe('high');
  });

  it('learned: the checks come before the learned score', () => {
    const selector: LearnedSelector = {
      format: 'winnower-selector-1',
      signals: SIGNALS.map((name) => ({ name, mean: 0, std: 1, weight: name === 'value_rel' ? 1 : 0, learned: true })),
    };
    const selection = select('learned', pool(), { selector });
    expect(selection.chosen).toBe('correct');
    expect(selection.reason).toMatch(/checks: breaks no test/);
  });

  it('gives the learned selector the checks as signals (its weights can be trained on them)', () => {
    const signals = computeSignals(prepare(pool()));
    expect(signals.map((s) => [s.check_regressed, s.check_repro_share])).toEqual([
      [1, 1],
      [0, 0.5],
      [0, 1],
    ]);
    const byChecks: LearnedSelector = {
      format: 'winnower-selector-1',
      signals: [
        { name: 'check_repro_share', mean: 0, std: 1, weight: 1, learned: true },
        { name: 'check_regressed', mean: 0, std: 1, weight: -2, learned: true },
      ],
    };
    expect(select('learned', pool(), { selector: byChecks }).ranking[0]!.reasons.join(' ')).toMatch(/check_regressed|check_repro_share/);
  });

  it('without checks the order is what it was', () => {
    const plain = pool().map(({ checks: _checks, ...rest }) => rest);
    expect(select('hybrid', plain).chosen).toBe('breaks-tests');
  });
});
