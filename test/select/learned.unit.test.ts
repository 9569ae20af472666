import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSelector } from '../../src/scoring/model-folder.js';
import { computeSignals, select, SIGNALS, type Candidate, type LearnedSelector } from '../../src/select/index.js';
import { prepare } from '../../src/select/prepare.js';
import { Cut, Trajectory } from '../../src/types/index.js';

const diff = (path: string, added: string[]) =>
  `diff --git a/${path} b/${path}\n--- a/${path}\n+++ b/${path}\n@@ -1,1 +1,${added.length + 1} @@\n x = 1\n${added.map((line) => `+${line}`).join('\n')}\n`;

function candidate(id: string, patch: string, value?: number): Candidate {
  const trajectory = Trajectory.parse({ id, instance_id: 'acme__widgets-1', source: id, patch });
  return value === undefined
    ? { trajectory }
    : {
        trajectory,
        score: {
          trajectory_id: id,
          instance_id: 'acme__widgets-1',
          value,
          raw: Math.log(value / (1 - value)),
          backend: 'onnx',
          model: 'm',
          template: 'patch-v1',
          input_tokens: 1,
          truncated: false,
          cut: Cut.parse({}),
          cached: false,
        },
      };
}

function selectorWith(weights: Partial<Record<(typeof SIGNALS)[number], number>>): LearnedSelector {
  return {
    format: 'winnower-selector-1',
    signals: SIGNALS.map((name) => ({ name, mean: 0, std: 1, weight: weights[name] ?? 0, learned: true })),
  };
}

const task = { problem_statement: 'Calling parse_widget in widgets/core.py crashes on empty input.' };

describe('group signals', () => {
  it('measure agreement, relative size, issue mentions, test-only edits and debug output', () => {
    const same = diff('widgets/core.py', ['    return parse_widget(x) or None']);
    const instance = prepare([
      candidate('a', same, 0.8),
      candidate('b', same, 0.6),
      candidate('c', diff('tests/test_core.py', ['    assert True'])),
      candidate('d', diff('other.py', ['    print(x)', '    y = 2', '    z = 3'])),
      candidate('e', ''),
    ]);
    const [a, b, c, d, e] = computeSignals(instance, task);
    expect(a!.cluster_share).toBeCloseTo(1 / 3);
    expect(a!.line_agreement).toBeGreaterThan(c!.line_agreement);
    expect(a!.issue_files).toBe(1);
    expect(a!.issue_identifiers).toBeGreaterThan(0);
    expect(a!.value_rel).toBeGreaterThan(0);
    expect(b!.value_rel).toBeLessThan(0);
    expect(c!.has_value).toBe(0);
    expect(c!.tests_only).toBe(1);
    expect(d!.debug_output).toBe(1);
    expect(d!.size_rel).toBeGreaterThan(a!.size_rel);
    expect(d!.issue_files).toBe(0);
    expect(e!.cluster_share).toBe(0);
  });
});

describe('learned selection', () => {
  it('ranks by the weighted signals and explains the contributions', () => {
    const candidates = [
      candidate('big', diff('a.py', ['a = 1', 'b = 2', 'c = 3', 'd = 4']), 0.7),
      candidate('small', diff('a.py', ['a = 1']), 0.6),
    ];
    const bySize = select('learned', candidates, { selector: selectorWith({ size_rel: -1 }), task });
    expect(bySize.strategy).toBe('learned');
    expect(bySize.chosen).toBe('small');
    expect(bySize.ranking[0]!.reasons.join('; ')).toMatch(/learned score [\d.]+ \(size_rel \+/);
    const byValue = select('learned', candidates, { selector: selectorWith({ value_rel: 1 }), task });
    expect(byValue.chosen).toBe('big');
    expect(byValue.reason).toMatch(/highest learned score .* most from value_rel/);
  });

  it('without a selector is value selection, and says so', () => {
    const selection = select('learned', [candidate('a', diff('a.py', ['a = 1']), 0.4), candidate('b', diff('a.py', ['b = 1']), 0.9)]);
    expect(selection.degraded_to).toBe('value');
    expect(selection.chosen).toBe('b');
    expect(selection.reason).toMatch(/no learned selector/i);
  });

  it('never chooses an empty patch, whatever the weights', () => {
    const selection = select('learned', [candidate('empty', '', 0.99), candidate('x', diff('a.py', ['a = 1']), 0.01)], {
      selector: selectorWith({ value_rel: 10 }),
    });
    expect(selection.chosen).toBe('x');
  });

  it('loads selector.json and names the bad field of a broken one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'winnower-selector-'));
    expect(loadSelector(dir)).toBeUndefined();
    const selector = selectorWith({ value_rel: 1.5 });
    writeFileSync(join(dir, 'selector.json'), JSON.stringify(selector));
    expect(loadSelector(dir)).toEqual(selector);
    writeFileSync(join(dir, 'selector.json'), JSON.stringify({ ...selector, signals: [{ ...selector.signals[0], std: 0 }] }));
    expect(() => loadSelector(dir)).toThrow(/selector\.json: signals\.0\.std/);
  });
});
