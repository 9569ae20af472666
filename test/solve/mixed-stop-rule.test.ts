/**
 * The stop rule in a mixed-policy job (issue 19 item 4): a candidate that meets it stops the job
 * only once every policy has had a rollout end, so a fast policy cannot cancel the others before
 * they produced anything; a one-policy job stops at once, as before.
 */
import { describe, expect, it } from 'vitest';
import type { JobEventBody } from '../../src/solve/events.js';
import type { SolveContext, Slot } from '../../src/solve/solve-context.js';
import { applyStopRule, releasePendingStop } from '../../src/solve/stop-rule.js';
import type { Score } from '../../src/types/index.js';

const score = (value: number): Score => ({
  trajectory_id: 't',
  instance_id: 'i',
  value,
  raw: 0,
  backend: 'test',
  model: 'test',
  template: 'test',
  input_tokens: 1,
  truncated: false,
  cut: { thoughts: 0, observations: 0, steps_dropped: 0, patch: false, tokens_before: 1 },
  cached: false,
});

/** The parts of a job's context the stop rule reads: its plan, slots, rule and signals. */
function contextOf(policies: number): { context: SolveContext; events: JobEventBody[] } {
  const events: JobEventBody[] = [];
  const context = {
    plan: Array.from({ length: policies }, (_, index) => ({ index })),
    slots: Array.from({ length: policies }, (_, index): Partial<Slot> => ({ index, policy: index, config: {}, status: 'running' })),
    request: { stop_rule: { min_value: 0.5, require_resolved: false, require_checks: false } },
    verifying: false,
    evidence: { forCandidate: () => undefined },
    hooks: { emit: (event: JobEventBody) => events.push(event) },
    stoppedEarly: null as string | null,
    pendingStop: null,
    stop(reason: string) {
      this.stoppedEarly = reason;
    },
  };
  return { context: context as unknown as SolveContext, events };
}

describe('the stop rule with several policies', () => {
  it('waits until every policy had a rollout end, then fires for the candidate that met it; one policy fires at once', () => {
    const { context, events } = contextOf(2);
    const [fast, slow] = context.slots as [Slot, Slot];
    Object.assign(fast, { status: 'finished', score: score(0.9) });
    applyStopRule(context, fast);
    fast.settled = true;
    releasePendingStop(context);
    expect(context.stoppedEarly).toBeNull();
    expect(events).toEqual([]);
    Object.assign(slow, { status: 'failed', settled: true });
    releasePendingStop(context);
    expect(events).toEqual([{ type: 'stop-rule', index: 0, reason: expect.stringContaining('fired once every policy had a rollout end') }]);
    expect(context.stoppedEarly).toContain('scored 0.900');

    // With one policy it fires at once, as it always did.
    const single = contextOf(1);
    const [only] = single.context.slots as [Slot];
    Object.assign(only, { status: 'finished', score: score(0.9) });
    applyStopRule(single.context, only);
    expect(single.events).toMatchObject([{ type: 'stop-rule', index: 0 }]);
    expect(single.context.stoppedEarly).not.toBeNull();
  });
});
