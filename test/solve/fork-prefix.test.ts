/**
 * `fork.at: "first-edit"` and a step number (src/solve/agent-prefix.ts): one prefix rollout of the
 * built-in agent runs to its first file edit (or step k), and every rollout goes on from a fork of
 * its sandbox with its conversation and its own seed. Each trajectory carries the prefix once,
 * marked `meta.shared`; the compute counts its calls once and says what forking saved; the
 * snapshot is released; a prefix that ends before its fork point leaves the rollouts to start over.
 * The policy is the OpenAI-compatible stub over HTTP, scripted by seed and turn.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPolicyStub, type PolicyStub } from '../../src/loadgen/policy-stub.js';
import type { ChatMessage } from '../../src/types/index.js';
import { commandsOf, createWorld, demoRecordings, hasBubblewrap, solveBody, type TestWorld } from './helpers.js';

const correct = commandsOf(demoRecordings()['correct-fix']!);
const SUBMIT = correct.at(-1)!;
/** Seed 0 (the prefix, and rollout 0): the correct fix, whose first edit is turn 2. Other seeds add a note after it. */
const script = (seed: number): string[] => (seed === 0 ? correct : [...correct.slice(0, 3), 'echo mine > NOTES.txt', SUBMIT]);

async function snapshotsLeft(world: TestWorld): Promise<string[]> {
  const forks = join(String((await world.sandboxes.describe()).rootDir), 'forks');
  return existsSync(forks) ? readdirSync(forks) : [];
}

describe.skipIf(!hasBubblewrap())('rollouts forked from a shared prefix of the built-in agent', () => {
  let world: TestWorld;
  let stub: PolicyStub;
  beforeAll(async () => {
    world = await createWorld();
    stub = await startPolicyStub({ script, latencyMs: 0 });
  });
  afterAll(async () => {
    await stub?.close();
    await world?.close();
  });

  const body = (n: number, at: unknown) =>
    solveBody(world.repo, { n, policy: { kind: 'openai', url: stub.url, model: 'stub' }, fork: { at } });

  it('first-edit: the prefix runs once, every trajectory carries it marked shared, its calls count once', {
    timeout: 240_000,
  }, async () => {
    const server = await world.start();
    try {
      const before = stub.calls();
      const response = await server.app.inject({ method: 'POST', url: '/solve?wait=true', payload: body(3, 'first-edit') });
      const job = response.json();
      expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
      // The prefix: 3 turns (its third edits durations.py); then rollout 0 goes on for 3, rollouts 1 and 2 for 2 each.
      expect(stub.calls() - before).toBe(3 + 3 + 2 + 2);
      expect(job.result.compute).toMatchObject({
        policy_calls: 10,
        prefix_steps: 3,
        prefix_policy_calls: 3,
        fork_saved_policy_calls: 6,
      });
      const types: string[] = [];
      await server.jobs.subscribe(
        job.job_id,
        (event) => types.push(event.type),
        () => undefined,
      );
      expect(types.filter((type) => type === 'prefix-finish')).toHaveLength(1);
      expect(types.indexOf('prefix-finish')).toBeLessThan(types.indexOf('rollout-start'));

      const trajectories = await Promise.all(
        [0, 1, 2].map(async (index) => (await server.app.inject({ url: `/jobs/${job.job_id}/candidates/${index}/trajectory` })).json()),
      );
      const shared = (messages: ChatMessage[]) => messages.filter((message) => message.meta?.shared === true);
      const prefix = shared(trajectories[0].messages);
      // System, instance, and three turns with their observations.
      expect(prefix).toHaveLength(2 + 3 * 2);
      for (const [index, trajectory] of trajectories.entries()) {
        const messages = trajectory.messages as ChatMessage[];
        expect(messages.slice(0, prefix.length)).toEqual(prefix);
        expect(shared(messages.slice(prefix.length))).toEqual([]);
        expect(trajectory.meta.seed).toBe(index);
        expect(trajectory.meta.shared_prefix).toMatchObject({ steps: 3, messages: prefix.length });
      }
      // The prefix's edit is in every patch; the continuations' own work only in theirs.
      const patches = job.candidates.map((candidate: { patch: string }) => candidate.patch);
      for (const patch of patches) expect(patch).toContain('(\\d+)([hms])');
      expect(patches.map((patch: string) => patch.includes('NOTES.txt'))).toEqual([false, true, true]);
      const deadline = Date.now() + 15_000;
      while ((await snapshotsLeft(world)).length > 0 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 100));
      expect(await snapshotsLeft(world)).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('a step number forks there; a prefix that ends first leaves the rollouts to start over, and says so', {
    timeout: 240_000,
  }, async () => {
    const server = await world.start();
    try {
      const atStep = (await server.app.inject({ method: 'POST', url: '/solve?wait=true', payload: body(2, 1) })).json();
      expect(atStep.status, JSON.stringify(atStep.error)).toBe('succeeded');
      expect(atStep.result.compute).toMatchObject({ prefix_steps: 1, prefix_policy_calls: 1, fork_saved_policy_calls: 1 });

      // Step 40 is past the submit: nothing is shared, every rollout runs from the start, the prefix's calls still count.
      const before = stub.calls();
      const ended = (await server.app.inject({ method: 'POST', url: '/solve?wait=true', payload: body(2, 40) })).json();
      expect(ended.status, JSON.stringify(ended.error)).toBe('succeeded');
      expect(stub.calls() - before).toBe(correct.length + correct.length + 5);
      expect(ended.result.compute).toMatchObject({ policy_calls: stub.calls() - before, fork_saved_policy_calls: 0 });
      const events: Array<{ type: string; shared?: boolean; reason?: string }> = [];
      await server.jobs.subscribe(
        ended.job_id,
        (event) => events.push(event as never),
        () => undefined,
      );
      const finish = events.find((event) => event.type === 'prefix-finish');
      expect(finish).toMatchObject({ shared: false, reason: expect.stringMatching(/ended \(submitted.*before step 40/) });
    } finally {
      await server.close();
    }
  });
});
