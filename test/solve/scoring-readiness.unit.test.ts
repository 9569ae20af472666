/**
 * Issue 27 item 14: a /solve job's scoring uses the server's readiness verdict. With the scorer
 * known to be down, a candidate is not sent to it (no wait for its deadline): its score event
 * carries the probe's error and selection degrades as on any scorer outage.
 */
import { describe, expect, it } from 'vitest';
import { wnwError } from '../../src/errors.js';
import type { ValueModel } from '../../src/scoring/value-model.js';
import { scoreSlot } from '../../src/solve/scoring.js';
import type { Slot, SolveContext } from '../../src/solve/solve-context.js';
import type { Trajectory } from '../../src/types/trajectory.js';

const trajectory = {
  id: 'job/0',
  instance_id: 'i',
  source: 's',
  messages: [{ role: 'assistant', content: 'done' }],
  patch: 'diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n',
  exit: 'submitted',
  usage: { prompt_tokens: 1, completion_tokens: 1 },
  meta: {},
} as unknown as Trajectory;

function contextWith(down: Error | undefined, calls: string[]) {
  const events: Array<Record<string, unknown>> = [];
  const valueModel = {
    scorer: {
      backend: 'test',
      model: 'm',
      maxInputTokens: 1000,
      score: async () => {
        calls.push('score');
        return [{ value: 0.5, raw: 0 }];
      },
      close: async () => undefined,
    },
    identity: undefined,
  } as unknown as ValueModel;
  const context = {
    valueModel,
    task: { instance_id: 'i', problem_statement: 'x', fail_to_pass: [], pass_to_pass: [], meta: {} },
    request: { scoring: { enabled: true } },
    deps: { scorerDown: async () => down },
    hooks: { emit: (event: Record<string, unknown>) => events.push(event), signal: new AbortController().signal },
  } as unknown as SolveContext;
  return { context, events };
}

describe('scoring a /solve candidate while the scorer is down', () => {
  it('does not call the scorer and reports the probe’s error', async () => {
    const calls: string[] = [];
    const down = wnwError('WNW_ERR_SCORE_UNAVAILABLE', 'the value model is not answering');
    const { context, events } = contextWith(down, calls);
    const slot = { index: 0, trajectory } as unknown as Slot;
    await scoreSlot(context, slot);
    expect(calls).toEqual([]);
    expect(slot.score).toBeUndefined();
    expect(events).toEqual([{ type: 'score-available', index: 0, value: null, error: 'the value model is not answering' }]);
  });

  it('scores as usual while it is up', async () => {
    const calls: string[] = [];
    const { context } = contextWith(undefined, calls);
    const slot = { index: 0, trajectory } as unknown as Slot;
    await scoreSlot(context, slot);
    expect(calls).toEqual(['score']);
  });
});
