/**
 * Closing the app while a job runs and clients wait on it (an SSE subscriber, a `?wait=true`
 * request): the running job is stopped first, so those connections end and the close completes.
 */
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSandboxCount } from '../../src/sandbox/lifecycle.js';
import { createWorld, demoRecordings, hasBubblewrap, solveBody, type TestWorld } from '../solve/helpers.js';

const stuckRecording = () => {
  const correct = demoRecordings()['correct-fix']!;
  return {
    ...correct,
    messages: [
      {
        role: 'assistant' as const,
        content: 'Wait.',
        tool_calls: [{ id: 'c', type: 'function' as const, function: { name: 'bash', arguments: '{"command":"sleep 60"}' } }],
      },
    ],
  };
};

describe.skipIf(!hasBubblewrap())('closing the app with a running job', () => {
  let world: TestWorld;

  beforeAll(async () => {
    world = await createWorld();
  });

  afterAll(async () => {
    await world?.close();
  });

  it('ends SSE streams and waiting requests instead of waiting for the job', async () => {
    const server = await world.start();
    let closing: Promise<void> | undefined;
    const client = new Agent();
    try {
      await server.app.listen({ host: '127.0.0.1', port: 0 });
      const base = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
      const body = JSON.stringify(
        solveBody(world.repo, { n: 1, policy: { kind: 'replay', recordings: [stuckRecording()] }, verify: { enabled: false } }),
      );
      const posted = await request(`${base}/solve`, {
        dispatcher: client,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const { job_id: jobId } = (await posted.body.json()) as { job_id: string };
      const events = request(`${base}/jobs/${jobId}/events`, { dispatcher: client }).then((response) => response.body.text());
      const waiting = request(`${base}/solve?wait=true`, {
        dispatcher: client,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      }).then(async (response) => ({
        status: response.statusCode,
        job: (await response.body.json()) as { status: string; result: unknown },
      }));
      // Handled here so that a failed expectation below does not leave them rejecting unobserved.
      events.catch(() => undefined);
      waiting.catch(() => undefined);
      for (let i = 0; i < 200 && openSandboxCount() < 2; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(openSandboxCount()).toBe(2);

      const started = Date.now();
      closing = server.close();
      const outcome = await Promise.race([
        closing.then(() => 'closed'),
        new Promise((resolve) => setTimeout(() => resolve('still closing'), 10_000)),
      ]);
      expect(outcome).toBe('closed');
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(openSandboxCount()).toBe(0);
      expect(await events).toContain('event: job-finish');
      expect((await waiting).status).toBe(200);
      // Stopped by the server, not by a client: interrupted (as after a crash), not cancelled.
      expect(await events).toContain('"type":"job-finish","status":"interrupted"');
      expect((await waiting).job.status).toBe('interrupted');
      // Its result says it is partial; no rollout had finished, so nothing was chosen.
      expect((await waiting).job).toMatchObject({ result: { partial: true, chosen: null, rollouts: { planned: 1, finished: 0 } } });
    } finally {
      // Without the fix the close waits for the job: stop it so the test ends.
      await server.jobs.shutdown();
      await client.destroy();
      await (closing ?? server.close());
    }
  }, 60_000);
});
