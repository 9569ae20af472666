/**
 * Issue 18 items 1-4: the gate around every strategy (src/select/usable-gate.ts). A patch
 * that did not apply, is refused by the patch rules, or cannot be prepared is never chosen and
 * ranks below every usable patch; a resolved candidate whose other tests failed ranks below a
 * resolved one without.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_DIR } from '../../src/config.js';
import { loadSelector } from '../../src/scoring/model-folder.js';
import { select, type Candidate, type SelectOptions } from '../../src/select/index.js';
import { type Selection, Strategy } from '../../src/types/index.js';
import { FIX_A, FIX_B, candidate, trajectory, verify } from './fixtures.js';

const order = (selection: Selection): string[] => selection.ranking.map((entry) => entry.trajectory_id);
const entry = (selection: Selection, id: string) => selection.ranking.find((ranked) => ranked.trajectory_id === id)!;
const variant = (n: number): string => FIX_A.replace('+    return a + b', `+    return a + b + ${n}`);
const LINK_OUT =
  'diff --git a/passwd b/passwd\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n+++ b/passwd\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n';

const selector = loadSelector(DEFAULT_MODEL_DIR());
/** Every strategy, learned with the bundled model's selector (the strategy under test, not its fallback). */
const run = (strategy: Strategy, candidates: Candidate[], options: SelectOptions = {}) =>
  select(strategy, candidates, {
    ...(strategy === 'learned' && selector ? { selector } : {}),
    task: { problem_statement: 'add() is wrong' },
    ...options,
  });

/** A candidate whose patch did not apply in verification. */
function notApplied(id: string, value: number): Candidate {
  const result = {
    ...verify(id, 'apply_failed'),
    apply_error: 'error: patch failed: src/calc.py:7\nerror: src/calc.py: patch does not apply',
  };
  return { ...candidate(id, variant(9), value), verify: result };
}

/** Resolved by the named tests; `others` unnamed tests failed (and the command exited 1 then). */
function resolved(id: string, patch: string, value: number, others: string[] = []): Candidate {
  const result = { ...verify(id, 'resolved'), exit_code: others.length ? 1 : 0, other_failed: others, other_failed_count: others.length };
  return { ...candidate(id, patch, value), verify: result };
}

describe.each(Strategy.options)('the usable gate under %s', (strategy) => {
  it('never chooses a candidate whose patch did not apply, even alone, and says why', () => {
    const alone = run(strategy, [notApplied('a', 0.9)]);
    expect(alone.chosen).toBeNull();
    expect(alone.reason).toBe('None of the 1 candidate has a usable patch (1 did not apply), nothing chosen.');
    expect(entry(alone, 'a').unusable).toEqual({
      kind: 'apply_failed',
      reason: 'patch did not apply (error: patch failed: src/calc.py:7)',
    });

    const pair = run(strategy, [notApplied('a', 0.99), { ...candidate('b', FIX_B, 0.01), verify: verify('b', 'unresolved') }]);
    expect(pair.chosen).toBe('b');
    expect(order(pair)).toEqual(['b', 'a']);
    expect(entry(pair, 'b').unusable).toBeNull();
    expect(pair.reason).toMatch(/; a scored higher \(0\.99\) but its patch did not apply\.$/);
  });

  it('ranks empty, unparseable, refused and non-applying patches below every usable one, unverified and unscored included', () => {
    const selection = run(strategy, [
      candidate('empty', '', 0.99),
      candidate('broken', 'diff --git a/x b/x\n...', 0.98),
      { ...candidate('link', LINK_OUT, 0.97), verify: verify('link', 'resolved') },
      notApplied('stale', 0.96),
      candidate('usable', FIX_B),
    ]);
    expect(selection.chosen).toBe('usable');
    expect(order(selection)).toEqual(['usable', 'empty', 'broken', 'link', 'stale']);
    expect(selection.ranking.slice(1).map((ranked) => ranked.unusable?.kind)).toEqual(['empty', 'unparseable', 'refused', 'apply_failed']);
    expect(entry(selection, 'link').unusable?.reason).toMatch(/symbolic link to "\/etc\/passwd"/);
  });

  it('ranks a resolved candidate whose other tests failed below a resolved one without', () => {
    const selection = run(strategy, [
      resolved('dirty', variant(1), 0.9, ['test_rejects_empty', 'test_rejects_garbage']),
      resolved('clean', variant(2), 0.5),
    ]);
    expect(order(selection)).toEqual(['clean', 'dirty']);
    expect(selection.chosen).toBe('clean');
    expect(entry(selection, 'dirty')).toMatchObject({ other_tests_failed: true, unusable: null });
    expect(entry(selection, 'dirty').reasons).toContain(
      'other tests failed: exit 1, 2 other tests failed (test_rejects_empty, test_rejects_garbage)',
    );
    expect(entry(selection, 'clean').other_tests_failed).toBe(false);
  });

  it('turns a candidate that cannot be prepared into an unusable one with a code, not an error', () => {
    const cursed = trajectory('cursed', FIX_A);
    Object.defineProperty(cursed, 'patch', {
      get() {
        throw new RangeError('Maximum call stack size exceeded');
      },
    });
    const selection = run(strategy, [{ trajectory: cursed }, candidate('fine', FIX_B, 0.4)]);
    expect(selection.chosen).toBe('fine');
    expect(entry(selection, 'cursed')).toMatchObject({ value: null, unusable: { kind: 'unprepared', code: 'WNW_ERR_SELECT_CANDIDATE' } });
    expect(entry(selection, 'cursed').unusable?.reason).toMatch(/RangeError: Maximum call stack size exceeded/);
  });
});

describe('the usable gate', () => {
  it('sets aside a candidate the strategy itself cannot handle (learned signals read the trajectory)', () => {
    const cursed = trajectory('cursed', FIX_A);
    Object.defineProperty(cursed, 'messages', {
      get() {
        throw new TypeError('messages unreadable');
      },
    });
    const selection = run('learned', [{ trajectory: cursed }, candidate('fine', FIX_B, 0.4)]);
    expect(selection.chosen).toBe('fine');
    expect(entry(selection, 'cursed').unusable).toMatchObject({ kind: 'unprepared', code: 'WNW_ERR_SELECT_CANDIDATE' });
  });

  it('keeps hybrid choosing the resolved candidate with other failures over an unresolved one', () => {
    const selection = run('hybrid', [
      resolved('dirty', variant(1), 0.2, ['test_x']),
      { ...candidate('unresolved', variant(2), 0.9), verify: verify('unresolved', 'unresolved') },
    ]);
    expect(selection.chosen).toBe('dirty');
    expect(selection.reason).toMatch(/; other tests failed for it: exit 1, 1 other test failed \(test_x\)\.$/);
  });

  it('says why a resolved candidate with other failures lost its place', () => {
    const selection = run('hybrid', [resolved('dirty', variant(1), 0.9, ['test_x']), resolved('clean', variant(2), 0.5)]);
    expect(selection.reason).toBe(
      'Chose clean: it resolved the named tests and no other test failed; dirty, first by hybrid, resolved them too but exit 1, 1 other test failed (test_x).',
    );
  });

  it("still refuses bad input on unusable candidates (the caller's error)", () => {
    expect(() => select('value', [candidate('a', ''), candidate('a', FIX_A)])).toThrow(/appears twice/);
  });
});
