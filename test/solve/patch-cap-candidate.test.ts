/**
 * A rollout that submits but whose patch is over the sandbox's size cap is a failed candidate
 * carrying WNW_ERR_SBX_PATCH_SIZE, not a finished one with an empty patch that could be chosen.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPolicyFactory } from '../../src/rollout/policy/policy-factory.js';
import { loadValueModel, type ValueModel } from '../../src/scoring/value-model.js';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { buildApp } from '../../src/server/app.js';
import { JobManager } from '../../src/solve/job-manager.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import { TINY_MODEL_DIR } from '../../src/config.js';
import { DEMO_DIR, hasBubblewrap, solveBody } from './helpers.js';
import { prepareDemoRepo } from '../../src/cli/demo-repo.js';
import { join } from 'node:path';

const call = (id: string, command: string) => ({
  role: 'assistant',
  content: '',
  tool_calls: [{ id, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } }],
});
const recording = {
  id: 'recorded/huge',
  instance_id: 'durations-1',
  source: 'recorded-huge',
  exit: 'submitted',
  messages: [
    call('c0', 'head -c 300000 /dev/urandom | base64 > huge.txt && echo ok'),
    call('c1', 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT'),
  ],
};

describe.skipIf(!hasBubblewrap())('a patch over the cap in /solve', () => {
  let sandboxes: SandboxProvider;
  let valueModel: ValueModel;
  beforeAll(async () => {
    sandboxes = createLocalProvider({ patch: { maxBytes: 64 * 1024 } });
    valueModel = await loadValueModel({ backend: 'onnx', model: TINY_MODEL_DIR() });
  });
  afterAll(async () => {
    await sandboxes?.close();
    await valueModel?.scorer.close();
  });

  it('fails that candidate with the cap error', async () => {
    const repo = prepareDemoRepo(join(DEMO_DIR, 'repo'));
    const store = createSqliteStore(':memory:');
    const app = await buildApp({
      jobs: new JobManager(store),
      store,
      valueModel,
      solveDeps: { sandboxes, store, createPolicy: createPolicyFactory() },
    });
    try {
      const body = solveBody(repo, { n: 1, policy: { kind: 'replay', recordings: [recording] } });
      delete (body as { verify?: unknown }).verify;
      const response = await app.inject({ method: 'POST', url: '/solve?wait=true', payload: body });
      const job = response.json();
      expect(job.candidates[0].status).toBe('failed');
      expect(job.candidates[0].error.code).toBe('WNW_ERR_SBX_PATCH_SIZE');
      expect(job.status).toBe('failed'); // its only rollout failed
    } finally {
      await app.close();
      store.close();
    }
  }, 120_000);
});
