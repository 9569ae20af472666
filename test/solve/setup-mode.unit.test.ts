/**
 * How a job's setup reaches its sandboxes (src/solve/shared-setup.ts): forked where the provider
 * copies files (local, docker), run in each sandbox where it cannot fork or forks only by replaying
 * what the parent received (orchard: a replay of the setup saves nothing), with the reason said; an
 * explicit `fork.at: "setup"` that cannot be honoured is refused naming the field.
 */
import { describe, expect, it } from 'vitest';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { checkSetupFork, setupMode } from '../../src/solve/shared-setup.js';
import { expectCode } from '../support/expect-code.js';

function provider(name: string, fork: 'copy' | 'replay' | 'none'): SandboxProvider {
  return {
    name,
    describe: async () => ({}),
    create: async () => {
      throw new Error('not used');
    },
    close: async () => undefined,
    ...(fork === 'none' ? {} : { fork: async () => Promise.reject(new Error('not used')) }),
    ...(fork === 'replay' ? { forkReplays: true } : {}),
  };
}

const setup = ['make'];

describe('setupMode and checkSetupFork', () => {
  it('forks where the provider copies, runs in each where it cannot fork or only replays', () => {
    expect(setupMode({ setup }, provider('local', 'copy'))).toEqual({ mode: 'fork', reason: 'the default with setup commands' });
    expect(setupMode({ setup, fork: { at: 'none' } }, provider('local', 'copy')).mode).toBe('each');
    expect(setupMode({ setup }, provider('plain', 'none'))).toMatchObject({ mode: 'each', reason: expect.stringContaining('cannot fork') });
    expect(setupMode({ setup }, provider('orchard', 'replay'))).toMatchObject({
      mode: 'each',
      reason: expect.stringContaining('the orchard provider forks by replaying the setup'),
    });
  });

  it('refuses an explicit fork.at setup on a provider that cannot fork or only replays, naming the field', async () => {
    expect(() => checkSetupFork({ setup, fork: { at: 'setup' } }, provider('local', 'copy'))).not.toThrow();
    for (const kind of ['none', 'replay'] as const) {
      const error = await expectCode(
        (async () => checkSetupFork({ setup, fork: { at: 'setup' } }, provider('p', kind)))(),
        'WNW_ERR_INPUT_INVALID',
      );
      expect(error.details.field).toBe('fork.at');
      expect(error.message).toContain(kind === 'replay' ? 'forks only by replaying' : 'cannot fork');
    }
  });
});
