/**
 * The selection stage of a /solve job with a judge: the request's judge (or the server's) is asked
 * before the ranking, the result carries its report, and a judge that fails does not fail the job.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JudgeOptions } from '../../src/judge/judge-options.js';
import { selectCandidate } from '../../src/solve/selection.js';
import type { Slot, SolveContext } from '../../src/solve/solve-context.js';
import type { Trajectory } from '../../src/types/trajectory.js';
import { startFakeJudge, type FakeJudge } from '../fakes/fake-judge.js';

const trajectory = (index: number, line: string) =>
  ({
    format: 'winnower-trajectory-1',
    id: `job/${index}`,
    instance_id: 'i',
    source: 's',
    messages: [],
    patch: `diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+${line}\n`,
    exit: 'submitted',
    meta: {},
  }) as unknown as Trajectory;

function contextWith(request: Record<string, unknown>, deps: Record<string, unknown> = {}) {
  const events: Array<Record<string, unknown>> = [];
  const slots = [trajectory(0, 'x = 2'), trajectory(1, 'x = 3 # JUDGE-PREFERS-ME'), trajectory(2, 'x = 4')].map(
    (t, index) => ({ index, status: 'finished', trajectory: t }) as unknown as Slot,
  );
  return {
    events,
    context: {
      request,
      task: { instance_id: 'i', problem_statement: 'x must change', fail_to_pass: [], pass_to_pass: [], meta: {} },
      slots,
      verifying: false,
      deps,
      evidence: { forCandidate: () => undefined },
      hooks: { emit: (event: Record<string, unknown>) => events.push(event), signal: new AbortController().signal },
    } as unknown as SolveContext,
  };
}

describe('solve selection with a judge', () => {
  let fake: FakeJudge;
  beforeAll(async () => {
    fake = await startFakeJudge();
  });
  afterAll(async () => fake?.close());

  it("asks the request's judge and carries its report", async () => {
    const judge = JudgeOptions.parse({ url: `${fake.url}/v1`, model: 'req-judge' });
    const { context, events } = contextWith({ judge });
    const { selection, chosen, judge: report } = await selectCandidate(context);
    expect(selection.strategy).toBe('judge');
    expect(chosen?.index).toBe(1);
    expect(report).toMatchObject({ model: 'req-judge', pairs: 3, comparisons: 6, error: null });
    expect(events.at(-1)).toMatchObject({ type: 'selection', chosen_index: 1 });
  });

  it("uses the server's judge for strategy judge, and none for a strategy that reads none", async () => {
    const judge = JudgeOptions.parse({ url: `${fake.url}/v1`, model: 'server-judge' });
    expect((await selectCandidate(contextWith({ strategy: 'judge' }, { judge }).context)).judge?.model).toBe('server-judge');
    expect((await selectCandidate(contextWith({ strategy: 'value' }, { judge }).context)).judge).toBeNull();
  });

  it('a failing judge does not fail the job: selection falls back and the report says why', async () => {
    fake.fail(500, 50);
    const judge = JudgeOptions.parse({ url: `${fake.url}/v1`, model: 'm' });
    const { selection, judge: report } = await selectCandidate(contextWith({ strategy: 'judge', judge }).context);
    expect(report?.error?.code).toBe('WNW_ERR_JUDGE_UPSTREAM');
    expect(selection.chosen).not.toBeNull();
    expect(selection.reason).toMatch(/^The judge failed/);
    fake.faults.length = 0;
  });
});
