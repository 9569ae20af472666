/**
 * A running rollout's trajectory is stored after every step, so GET /jobs/:id shows how far it got
 * and a server that dies mid-rollout leaves it to the interrupted job ("with what they had").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorld, demoRecordings, hasBubblewrap, solveBody, type TestWorld } from './helpers.js';

describe.skipIf(!hasBubblewrap())('partial trajectories', () => {
  let world: TestWorld;

  beforeAll(async () => {
    world = await createWorld();
  });

  afterAll(async () => {
    await world?.close();
  });

  it('are stored while the rollout runs', async () => {
    const server = await world.start();
    try {
      const correct = demoRecordings()['correct-fix']!;
      const call = (id: string, command: string) => ({
        role: 'assistant' as const,
        content: `Step ${id}.`,
        tool_calls: [{ id, type: 'function' as const, function: { name: 'bash', arguments: JSON.stringify({ command }) } }],
      });
      const twoSteps = { ...correct, messages: [call('a', 'echo first step'), call('b', 'sleep 60')] };
      const posted = await server.app.inject({
        method: 'POST',
        url: '/solve',
        payload: solveBody(world.repo, { n: 1, policy: { kind: 'replay', recordings: [twoSteps] }, verify: { enabled: false } }),
      });
      const jobId = posted.json().job_id as string;
      let candidate: { status: string; trajectory: { messages: Array<{ role: string; content: string }> } | null } | undefined;
      for (let i = 0; i < 200; i += 1) {
        candidate = (await server.app.inject(`/jobs/${jobId}?trajectories=true`)).json().candidates[0];
        if (candidate?.trajectory) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(candidate?.status).toBe('running');
      expect(candidate?.trajectory?.messages.some((message) => message.role === 'tool' && message.content.includes('first step'))).toBe(
        true,
      );
    } finally {
      await server.close();
    }
  }, 60_000);
});
