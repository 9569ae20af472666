/**
 * `GET /jobs/:id/events` as a real server-sent-events stream: a listening app on real components
 * (local sandboxes, the bundled ONNX scorer, verification), the demo recordings replayed as the
 * policy, and undici reading the stream as it arrives.
 */
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Trajectory } from '../../src/types/trajectory.js';
import { createWorld, demoRecordings, hasBubblewrap, solveBody, type TestWorld } from '../solve/helpers.js';
import { readSse } from '../support/sse.js';

/** A copy of `recording` that first waits `seconds` (so that a subscriber is surely in before the end). */
function withPause(recording: Trajectory, seconds: number): Trajectory {
  const pause = {
    role: 'assistant' as const,
    content: 'Wait a moment.',
    tool_calls: [
      {
        id: 'call_pause',
        type: 'function' as const,
        function: { name: 'bash', arguments: JSON.stringify({ command: `sleep ${seconds}` }) },
      },
    ],
  };
  return { ...recording, messages: [pause, ...recording.messages] };
}

const bwrap = hasBubblewrap();

describe.skipIf(!bwrap)(`job events over SSE${bwrap ? '' : ' (skipped: bubblewrap is not installed)'}`, () => {
  let world: TestWorld;
  let server: Awaited<ReturnType<TestWorld['start']>>;
  let base: string;
  const recordings = demoRecordings();
  const correct = recordings['correct-fix']!;
  const wrong = recordings['plausible-wrong-fix']!;

  beforeAll(async () => {
    world = await createWorld();
    server = await world.start();
    await server.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await server?.close();
    await world?.close();
  });

  async function postSolve(extra: Record<string, unknown>, options: { regressionDefault?: boolean } = {}): Promise<string> {
    const response = await request(`${base}/solve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(solveBody(world.repo, extra, options)),
    });
    const body = (await response.body.json()) as { job_id: string; status: string };
    expect(response.statusCode).toBe(202);
    expect(body.status).toBe('queued');
    return body.job_id;
  }

  async function getJob(jobId: string): Promise<any> {
    const response = await request(`${base}/jobs/${jobId}`);
    expect(response.statusCode).toBe(200);
    return response.body.json();
  }

  it('streams a job from job-start to job-finish, in order, with increasing ids, then ends', async () => {
    const jobId = await postSolve(
      { n: 2, policy: { kind: 'replay', recordings: [withPause(wrong, 1), withPause(correct, 1)] } },
      { regressionDefault: true },
    );
    const { status, contentType, events } = await readSse(`${base}/jobs/${jobId}/events`);
    expect(status).toBe(200);
    expect(contentType).toBe('text/event-stream');

    // ids are the events' sequence numbers: 0, 1, 2, ... with no gap; the SSE event name is the type.
    expect(events.map((event) => event.id)).toEqual(events.map((_, index) => index));
    expect(
      events.every((event) => event.event === event.data.type && event.data.seq === event.id && typeof event.data.time === 'string'),
    ).toBe(true);

    const types = events.map((event) => event.event);
    expect(types[0]).toBe('job-start');
    expect(events[0]!.data).toMatchObject({ n: 2, waves: [2] });
    expect(types.slice(-2)).toEqual(['selection', 'job-finish']);
    expect([...types].sort()).toEqual(
      [
        'job-start',
        'rollout-start',
        'rollout-start',
        'rollout-finish',
        'rollout-finish',
        'score-available',
        'score-available',
        'verify-finish',
        'verify-finish',
        // The regression check (on by default with verification): the base commit's runs, then each candidate's.
        'regression-finish',
        'regression-finish',
        'regression-finish',
        'selection',
        'job-finish',
      ].sort(),
    );
    // Both rollouts start before either finishes (one wave of two), and each candidate's events follow its life.
    expect(types.slice(1, 3)).toEqual(['rollout-start', 'rollout-start']);
    for (const index of [0, 1]) {
      const own = events.filter((event) => event.data.index === index).map((event) => event.event);
      // Scoring, verification and the regression check run at once (src/solve/candidate-stages.ts):
      // all three follow the rollout, in whichever order they finish.
      expect(own.slice(0, 2)).toEqual(['rollout-start', 'rollout-finish']);
      expect(own.slice(2).sort()).toEqual(['regression-finish', 'score-available', 'verify-finish']);
    }
    const byType = (type: string, index: number) => events.find((event) => event.event === type && event.data.index === index)!.data;
    expect(byType('rollout-finish', 0)).toMatchObject({ status: 'finished', exit: 'submitted' });
    expect(byType('rollout-finish', 1)).toMatchObject({ status: 'finished', exit: 'submitted' });
    expect(byType('rollout-finish', 1).patch_bytes).toBeGreaterThan(0);
    expect(byType('verify-finish', 0)).toMatchObject({ status: 'unresolved', resolved: false });
    expect(byType('verify-finish', 1)).toMatchObject({ status: 'resolved', resolved: true });
    expect(byType('score-available', 0).value).toBeGreaterThan(0);
    expect(events.at(-2)!.data).toMatchObject({ chosen_index: 1, trajectory_id: `${jobId}/1` });
    expect(events.at(-1)!.data).toMatchObject({ type: 'job-finish', status: 'succeeded' });

    // Live, not buffered: the first event arrived well before the last.
    expect(events.at(-1)!.at - events[0]!.at).toBeGreaterThan(300);

    const job = await getJob(jobId);
    expect(job.status).toBe('succeeded');
    expect(job.result.chosen.index).toBe(1);
  }, 120_000);

  it('gives a late subscriber the stored events, and one reconnecting with Last-Event-ID those after it, then ends the stream', async () => {
    const jobId = await postSolve({ n: 1, policy: { kind: 'replay', recordings: [correct] }, verify: { enabled: false } });
    for (let attempt = 0; attempt < 600 && ['queued', 'running'].includes((await getJob(jobId)).status); attempt += 1)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await getJob(jobId)).status).toBe('succeeded');
    const { status, events } = await readSse(`${base}/jobs/${jobId}/events`);
    expect(status).toBe(200);
    expect(events.map((event) => event.event)).toEqual([
      'job-start',
      'rollout-start',
      'rollout-finish',
      'score-available',
      'selection',
      'job-finish',
    ]);
    expect(events.map((event) => event.id)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(events.at(-1)).toMatchObject({ event: 'job-finish', data: { type: 'job-finish', status: 'succeeded' } });
    const resumed = await readSse(`${base}/jobs/${jobId}/events`, { 'last-event-id': '3' });
    expect(resumed.events.map((event) => [event.id, event.event])).toEqual([
      [4, 'selection'],
      [5, 'job-finish'],
    ]);
  }, 60_000);

  it('resumes a stream after Last-Event-ID', async () => {
    // A rollout that takes a moment, so the client reconnects while the job runs.
    const slow: Trajectory = {
      ...correct,
      id: 'recorded/slow',
      messages: [
        {
          role: 'assistant',
          content: 'wait',
          tool_calls: [{ id: 'c0', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: 'sleep 1.5' }) } }],
        },
        {
          role: 'assistant',
          content: 'done',
          tool_calls: [
            {
              id: 'c1',
              type: 'function',
              function: { name: 'bash', arguments: JSON.stringify({ command: 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT' }) },
            },
          ],
        },
      ],
    };
    const jobId = await postSolve({ n: 1, policy: { kind: 'replay', recordings: [slow] }, verify: { enabled: false } });
    const { events } = await readSse(`${base}/jobs/${jobId}/events`, { 'last-event-id': '1' });
    expect(events[0]!.id).toBe(2);
    // The rollout changes nothing: no patch, so it is announced unusable instead of scored (issue 18 item 4).
    expect(events.map((event) => event.event)).toEqual(['rollout-finish', 'candidate-unusable', 'selection', 'job-finish']);
  }, 60_000);

  it('answers 404 for the events of an unknown job', async () => {
    const response = await request(`${base}/jobs/no-such-job/events`);
    expect(response.statusCode).toBe(404);
    expect(((await response.body.json()) as any).error.code).toBe('WNW_ERR_JOB_NOT_FOUND');
  });

  it('reports a stop rule: stop-rule, rollout-skip and the compute saved', async () => {
    const jobId = await postSolve({
      n: 2,
      waves: [1, 1],
      stop_rule: { min_value: 0, require_resolved: true },
      policy: { kind: 'replay', recordings: [withPause(correct, 0.5), wrong] },
      // The given tests only: the regression check's base runs would interleave their events.
      verify: { ...(solveBody(world.repo).verify as object), regression: { enabled: false } },
    });
    const { events } = await readSse(`${base}/jobs/${jobId}/events`);
    expect(events.map((event) => event.event)).toEqual([
      'job-start',
      'rollout-start',
      'rollout-finish',
      'score-available',
      'verify-finish',
      'stop-rule',
      'rollout-skip',
      'selection',
      'job-finish',
    ]);
    expect(events[0]!.data).toMatchObject({ n: 2, waves: [1, 1] });
    expect(events[4]!.data).toMatchObject({ index: 0, resolved: true });
    expect(events[5]!.data.index).toBe(0);
    expect(events[5]!.data.reason).toMatch(/^a candidate scored \d\.\d{3} ≥ 0 and passed its tests$/);
    expect(events[6]!.data).toMatchObject({ index: 1 });
    expect(events[6]!.data.reason).toBe(`stop rule: ${events[5]!.data.reason}`);
    expect(events[7]!.data).toMatchObject({ chosen_index: 0 });
    expect(events[8]!.data).toMatchObject({ status: 'succeeded' });

    const job = await getJob(jobId);
    expect(job.result.compute).toMatchObject({ saved_rollouts: 1, saved_fraction: 0.5 });
    expect(job.result.rollouts).toMatchObject({ planned: 2, finished: 1, skipped: 1 });
    expect(job.result.stopped_early).toBe(events[5]!.data.reason);
    expect(job.candidates.map((candidate: { status: string }) => candidate.status)).toEqual(['finished', 'skipped']);
  }, 120_000);

  it('streams a cancellation: cancelled rollouts, then job-finish cancelled', async () => {
    const stuck = {
      ...correct,
      messages: [
        {
          role: 'assistant' as const,
          content: 'Wait.',
          tool_calls: [{ id: 'c', type: 'function' as const, function: { name: 'bash', arguments: '{"command":"sleep 60"}' } }],
        },
      ],
    };
    const jobId = await postSolve({ n: 2, policy: { kind: 'replay', recordings: [stuck] }, verify: { enabled: false } });
    const reading = readSse(`${base}/jobs/${jobId}/events`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const cancelled = await request(`${base}/jobs/${jobId}`, { method: 'DELETE' });
    expect(cancelled.statusCode).toBe(200);
    await cancelled.body.dump();
    const { events } = await reading;
    const types = events.map((event) => event.event);
    expect(types.slice(0, 3)).toEqual(['job-start', 'rollout-start', 'rollout-start']);
    expect(types.filter((type) => type === 'rollout-finish')).toHaveLength(2);
    expect(events.filter((event) => event.event === 'rollout-finish').every((event) => event.data.status === 'cancelled')).toBe(true);
    expect(types).not.toContain('selection');
    expect(events.at(-1)!.data).toMatchObject({ type: 'job-finish', status: 'cancelled' });
    expect(events.map((event) => event.id)).toEqual(events.map((_, index) => index));
  }, 60_000);
});
