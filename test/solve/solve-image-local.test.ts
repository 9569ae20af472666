/**
 * POST /solve with a container image on the embedded default (the local bubblewrap provider, no
 * container engine): the demo task's repository shipped at /testbed of an image in a real
 * registry (Debian's docker-registry on loopback, started and filled by .ci/registry.sh), rollouts
 * and verification in sandboxes over the image, the ONNX scorer, a fake policy. Also: an image on a
 * registry that is not there fails the job with a clear reason, not a hang.
 */
import { createServer } from 'node:net';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSandboxCount } from '../../src/sandbox/lifecycle.js';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import { startFakePolicy, type FakePolicyServer } from '../fakes/fake-policy.js';
import { tempDir } from '../sandbox/local-helpers.js';
import { imageToolsMissing } from '../sandbox/local-image-helpers.js';
import { commandsOf, createWorld, demoRecordings, hasBubblewrap, solveBody, type TestWorld } from './helpers.js';

const recordings = demoRecordings();
const registryImage = process.env.WINNOWER_TEST_REGISTRY_IMAGE;
const missing = !hasBubblewrap() ? 'bubblewrap is not installed (apt-get install -y bubblewrap)' : imageToolsMissing;

/** The demo task's body with the repository inside `image` instead of a checkout here. */
function imageBody(image: string, extra: Record<string, unknown>): Record<string, unknown> {
  const body = solveBody('/unused', extra);
  delete body.repo;
  return { ...body, image };
}

describe.skipIf(missing)(`[images] POST /solve with an image on the local provider${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let scratch: { dir: string; remove(): void };
  let world: TestWorld;
  let policy: FakePolicyServer;

  beforeAll(async () => {
    scratch = tempDir('wnw-solve-image-');
    // As root, the sandbox user unpacks into the cache and must reach it.
    chmodSync(scratch.dir, 0o711);
    world = await createWorld({ sandboxes: createLocalProvider({ imageCacheDir: join(scratch.dir, 'images'), pullTimeoutMs: 120_000 }) });
    policy = await startFakePolicy({
      scripts: {
        // The correct fix is rollout 1: selection must find it.
        mixed: [{ commands: commandsOf(recordings['plausible-wrong-fix']!) }, { commands: commandsOf(recordings['correct-fix']!) }],
      },
    });
  });

  afterAll(async () => {
    await policy?.close();
    await world?.close();
    scratch?.remove();
  });

  it.skipIf(!registryImage)(
    `resolves the demo task from its image in the registry, verification included${registryImage ? '' : ' (skipped: WINNOWER_TEST_REGISTRY_IMAGE is not set; .ci/run starts a registry and sets it)'}`,
    async () => {
      const server = await world.start();
      try {
        const response = await server.app.inject({
          method: 'POST',
          url: '/solve?wait=true',
          payload: imageBody(registryImage!, { n: 2, policy: { kind: 'openai', url: policy.url, model: 'mixed' } }),
        });
        expect(response.statusCode).toBe(200);
        const job = response.json();
        expect(job.status, JSON.stringify(job.error ?? job.candidates?.map((c: { error?: unknown }) => c.error))).toBe('succeeded');
        expect(job.result.chosen.index).toBe(1);
        expect(job.result.chosen.patch).toContain('(\\d+)([hms])');
        expect(job.result.chosen.verify_status).toBe('resolved');
        const [wrong] = job.candidates;
        expect(wrong.verify.status).toBe('unresolved');
        expect(wrong.verify.fail_to_pass).toEqual({ passed: 2, failed: 1, missing: 0 });
        expect(openSandboxCount()).toBe(0);
      } finally {
        await server.close();
      }
    },
    180_000,
  );

  it("fails the job with WNW_ERR_SBX_REGISTRY when the image's registry is not there", async () => {
    const closed = createServer();
    const port = await new Promise<number>((resolve) =>
      closed.listen(0, '127.0.0.1', () => resolve((closed.address() as { port: number }).port)),
    );
    await new Promise((resolve) => closed.close(resolve));
    const server = await world.start();
    try {
      const response = await server.app.inject({
        method: 'POST',
        url: '/solve?wait=true',
        payload: imageBody(`127.0.0.1:${port}/winnower/testbed:1`, { n: 2, policy: { kind: 'openai', url: policy.url, model: 'mixed' } }),
      });
      const job = response.json();
      expect(job.status).toBe('failed');
      expect(job.error.code).toBe('WNW_ERR_SBX_REGISTRY');
      expect(job.error.message).toContain(`127.0.0.1:${port}`);
    } finally {
      await server.close();
    }
  }, 60_000);
});
