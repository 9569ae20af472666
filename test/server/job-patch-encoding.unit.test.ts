/** GET /jobs/:id hands out a patch whose bytes are not UTF-8 as base64 with patch_encoding, byte-exact through the store. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePatch } from '../../src/sandbox/patch-bytes.js';
import { Trajectory } from '../../src/types/trajectory.js';
import { startTestApp, type TestApp } from './test-app.js';

const LATIN1 = Buffer.from('diff --git a/n.txt b/n.txt\n--- a/n.txt\n+++ b/n.txt\n@@ -1 +1 @@\n-cafe\n+caf\xe9\n', 'latin1');
const UTF8 = 'diff --git a/u.txt b/u.txt\n--- a/u.txt\n+++ b/u.txt\n@@ -1 +1 @@\n-cafe\n+café\n';

describe('patches that are not UTF-8 in the job API', () => {
  let server: TestApp;
  let jobId: string;
  beforeAll(async () => {
    server = await startTestApp();
    const latin1 = decodePatch(LATIN1);
    const job = await server.jobs.start('solve', {}, async () => ({
      instance_id: 'demo',
      chosen: { index: 0, trajectory_id: 't0', patch: latin1, value: null, verify_status: null },
      selection: { instance_id: 'demo', strategy: 'value', degraded_to: null, chosen: 't0', ranking: [], reason: 'test' },
      candidates: [],
      rollouts: {},
      compute: {},
    }));
    await server.jobs.wait(job.id);
    jobId = job.id;
    await server.store.putCandidate(jobId, 0, {
      status: 'finished',
      trajectory: Trajectory.parse({ id: 't0', instance_id: 'demo', source: 'replay', patch: latin1 }),
    });
    await server.store.putCandidate(jobId, 1, {
      status: 'finished',
      trajectory: Trajectory.parse({ id: 't1', instance_id: 'demo', source: 'replay', patch: UTF8 }),
    });
  });
  afterAll(async () => server?.close());

  it('gives base64 with patch_encoding for the candidate, its trajectory and the chosen patch, and plain text otherwise', async () => {
    const response = await server.app.inject({ url: `/jobs/${jobId}?trajectories=true` });
    expect(response.statusCode, response.body).toBe(200);
    // The JSON text itself carries no lone surrogate escapes.
    expect(response.body).not.toMatch(/\\ud[c-f]/i);
    const body = response.json();
    const [latin1, utf8] = body.candidates;
    expect(latin1).toMatchObject({ patch_encoding: 'base64' });
    expect(Buffer.from(latin1.patch, 'base64')).toEqual(LATIN1);
    expect(latin1.trajectory.patch_encoding).toBe('base64');
    expect(Buffer.from(latin1.trajectory.patch, 'base64')).toEqual(LATIN1);
    expect(body.result.chosen.patch_encoding).toBe('base64');
    expect(Buffer.from(body.result.chosen.patch, 'base64')).toEqual(LATIN1);
    expect(utf8.patch).toBe(UTF8);
    expect(utf8).not.toHaveProperty('patch_encoding');
  });
});
