/**
 * Tamper flags in selection (issue 33, item 5): a flagged candidate ranks below the clean ones
 * with the same outcome, never below a worse outcome, under every strategy that ranks by
 * outcomes; the reasons and the ranking carry the flags.
 */
import { describe, expect, it } from 'vitest';
import { select, SIGNALS, type Candidate, type LearnedSelector } from '../../src/select/index.js';
import type { CandidateChecks } from '../../src/types/index.js';
import { FIX_A, FIX_B, candidate, fileDiff } from './fixtures.js';

const SKIPS = fileDiff('tests/test_calc.py', ['+@pytest.mark.skip(reason="fails")', ' def test_add():', '     assert add(1, 2) == 3']);
const ADDS_TEST = fileDiff('tests/test_calc.py', [
  '     assert add(1, 2) == 3',
  '+',
  '+',
  '+def test_add_negative():',
  '+    assert add(-1, -2) == -3',
]);

/** Same outcome, the flagged one with the higher value. */
const pair = (status?: 'resolved' | 'unresolved'): Candidate[] => [
  candidate('tampered', FIX_A + SKIPS, 0.9, status),
  candidate('clean', FIX_B + ADDS_TEST, 0.4, status),
];

const order = (selection: { ranking: Array<{ trajectory_id: string }> }) => selection.ranking.map((entry) => entry.trajectory_id);

describe('tamper flags in selection', () => {
  it('hybrid: with the same test outcome the flagged candidate ranks second, and the reason names its flag', () => {
    const selection = select('hybrid', pair('resolved'));
    expect(selection.chosen).toBe('clean');
    expect(order(selection)).toEqual(['clean', 'tampered']);
    expect(selection.reason).toContain('tampered ranked lower, flagged: skips-test in tests/test_calc.py');
    const tampered = selection.ranking.find((entry) => entry.trajectory_id === 'tampered')!;
    expect(tampered.reasons).toContain('flagged: skips-test in tests/test_calc.py');
    expect(tampered.tamper).toEqual([{ kind: 'skips-test', file: 'tests/test_calc.py', detail: 'adds @pytest.mark.skip to test_add' }]);
    expect(selection.ranking.find((entry) => entry.trajectory_id === 'clean')!.tamper).toEqual([]);
  });

  it('hybrid: a flagged resolved candidate still beats a clean unresolved one', () => {
    const selection = select('hybrid', [
      candidate('tampered', FIX_A + SKIPS, 0.2, 'resolved'),
      candidate('clean', FIX_B, 0.9, 'unresolved'),
    ]);
    expect(selection.chosen).toBe('tampered');
    expect(selection.reason).toContain('flagged: skips-test in tests/test_calc.py (no clean candidate had that outcome)');
  });

  it('robust and value: the flagged candidate ranks below the clean one', () => {
    for (const strategy of ['robust', 'value'] as const) {
      const selection = select(strategy, pair('resolved'));
      expect(order(selection), strategy).toEqual(['clean', 'tampered']);
    }
    // robust keeps the test outcome first: the flagged resolved one beats the clean unresolved one.
    const mixed = [candidate('tampered', FIX_A + SKIPS, 0.2, 'resolved'), candidate('clean', FIX_B, 0.9, 'unresolved')];
    expect(select('robust', mixed).chosen).toBe('tampered');
  });

  it('learned: after the checks, before the learned score; better checks still win', () => {
    const selector: LearnedSelector = {
      format: 'winnower-selector-1',
      signals: SIGNALS.map((name) => ({ name, mean: 0, std: 1, weight: name === 'value_rel' ? 1 : 0, learned: true })),
    };
    const checks = (regressions: number): CandidateChecks => ({ regressions, repro_passed: 1, repro_total: 1 });
    const same = pair().map((c) => ({ ...c, checks: checks(0) }));
    expect(order(select('learned', same, { selector }))).toEqual(['clean', 'tampered']);
    const better = [
      { ...candidate('tampered', FIX_A + SKIPS, 0.9), checks: checks(0) },
      { ...candidate('clean', FIX_B, 0.4), checks: checks(2) },
    ];
    expect(select('learned', better, { selector }).chosen).toBe('tampered');
  });

  it("hybrid: the task's test patch makes an edit of its file a flag", () => {
    const edits = fileDiff('tests/test_calc.py', [' def test_add():', '-    assert add(1, 2) == 3', '+    assert add(1, 2) == 4']);
    const testPatch = fileDiff('tests/test_calc.py', ['+def test_new():', '+    assert add(0, 0) == 0', ' def test_add():']);
    const candidates = [candidate('edits', FIX_A + edits, 0.9, 'resolved'), candidate('clean', FIX_B, 0.4, 'resolved')];
    expect(select('hybrid', candidates).chosen).toBe('edits');
    const task = { problem_statement: '', test_patch: testPatch };
    const selection = select('hybrid', candidates, { task });
    expect(selection.chosen).toBe('clean');
    expect(selection.reason).toContain('edits ranked lower, flagged: edits-verified-file in tests/test_calc.py');
  });

  it('without a flagged candidate the keys are unchanged', () => {
    const selection = select('hybrid', [candidate('a', FIX_A + ADDS_TEST, 0.9, 'resolved'), candidate('b', FIX_B, 0.4, 'resolved')]);
    expect(selection.ranking.map((entry) => entry.key.length)).toEqual([6, 6]);
    expect(selection.reason).not.toContain('flagged');
  });
});
