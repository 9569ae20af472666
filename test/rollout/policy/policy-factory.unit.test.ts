/** The policy factory: one shared OpenAI client per distinct configuration, closed with the factory. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPolicyFactory } from '../../../src/rollout/policy/policy-factory.js';
import { PolicyOptions } from '../../../src/rollout/policy/policy-options.js';
import { WinnowerError } from '../../../src/errors.js';
import { startFakePolicy, type FakePolicyServer } from '../../fakes/fake-policy.js';

const messages = [
  { role: 'system' as const, content: 'You are an agent.' },
  { role: 'user' as const, content: 'Fix the bug.' },
];

async function rejection(promise: Promise<unknown>, withinMs: number): Promise<WinnowerError | string> {
  const timer = new Promise<string>((resolve) => setTimeout(() => resolve(`no answer within ${withinMs} ms`), withinMs));
  return Promise.race([
    promise.then(
      () => 'resolved',
      (error: unknown) => error as WinnowerError,
    ),
    timer,
  ]);
}

describe('createPolicyFactory', () => {
  let server: FakePolicyServer;

  beforeAll(async () => {
    server = await startFakePolicy({ scripts: { plain: [{ commands: ['ls'] }] } });
  });

  afterAll(async () => {
    await server?.close();
  });

  it("gives a request its own timeout_s, not that of an earlier request's shared client", async () => {
    const factory = createPolicyFactory();
    try {
      const patient = PolicyOptions.parse({ kind: 'openai', url: server.url, model: 'plain', timeout_s: 60 });
      const hurried = PolicyOptions.parse({ kind: 'openai', url: server.url, model: 'plain', timeout_s: 0.3 });
      factory(patient, 0);
      server.hang(10);
      const error = await rejection(factory(hurried, 0).next({ messages, seed: 0 }), 5_000);
      expect(WinnowerError.isInstance(error) ? error.code : error).toBe('WNW_ERR_POLICY_TIMEOUT');
    } finally {
      server.faults.length = 0;
      await factory.close();
    }
  }, 15_000);

  it('closes the clients it made: their connection pools are released at shutdown', async () => {
    const factory = createPolicyFactory();
    const policy = factory(PolicyOptions.parse({ kind: 'openai', url: server.url, model: 'plain' }), 0);
    await policy.next({ messages, seed: 0 });
    await factory.close();
    const error = await rejection(policy.next({ messages, seed: 0 }), 5_000);
    expect(WinnowerError.isInstance(error) ? error.message : error).toContain('closed');
  });
  it('refuses a request-supplied policy server when the server allows only its own', async () => {
    const factory = createPolicyFactory({ url: server.url, model: 'plain', allow_request_urls: false });
    try {
      expect(() => factory(PolicyOptions.parse({ kind: 'openai', url: 'http://169.254.169.254/v1', model: 'x' }), 0)).toThrow(
        expect.objectContaining({ code: 'WNW_ERR_INPUT_INVALID', details: { field: 'policy.url' } }),
      );
      // The configured server itself, and the default, still work.
      expect(factory(PolicyOptions.parse({ kind: 'openai', url: server.url, model: 'plain' }), 0).name).toBe('openai:plain');
      expect(factory(undefined, 0).name).toBe('openai:plain');
    } finally {
      await factory.close();
    }
  });
});
