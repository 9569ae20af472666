/** GET /jobs/:id/candidates/:n/trajectory: one candidate's trajectory, winnower's own or ATIF-v1.7 that validates and reads back. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromAtif, validateAtif } from '../../src/formats/atif/index.js';
import { decodePatch } from '../../src/sandbox/patch-bytes.js';
import { Trajectory } from '../../src/types/trajectory.js';
import { harnessRollout, toolsModeRollout } from '../formats/atif/trajectories.js';
import { startTestApp, type TestApp } from './test-app.js';

const LATIN1 = Buffer.from('diff --git a/n.txt b/n.txt\n--- a/n.txt\n+++ b/n.txt\n@@ -1 +1 @@\n-cafe\n+caf\xe9\n', 'latin1');

describe('GET /jobs/:id/candidates/:n/trajectory', () => {
  let server: TestApp;
  let jobId: string;
  beforeAll(async () => {
    server = await startTestApp();
    const job = await server.jobs.start('solve', {}, async () => ({
      instance_id: 'fix-median',
      candidates: [],
      rollouts: {},
      compute: {},
    }));
    await server.jobs.wait(job.id);
    jobId = job.id;
    await server.store.putCandidate(jobId, 0, { status: 'finished', trajectory: toolsModeRollout() });
    await server.store.putCandidate(jobId, 1, { status: 'finished', trajectory: harnessRollout() });
    await server.store.putCandidate(jobId, 2, {
      status: 'finished',
      trajectory: Trajectory.parse({ id: 't2', instance_id: 'fix-median', source: 'replay', patch: decodePatch(LATIN1) }),
    });
    await server.store.putCandidate(jobId, 3, { status: 'pending' });
  });
  afterAll(async () => server?.close());

  it.each([0, 1, 2])('answers candidate %i as valid ATIF-v1.7 that reads back to the stored trajectory', async (index) => {
    const response = await server.app.inject({ url: `/jobs/${jobId}/candidates/${index}/trajectory?format=atif` });
    expect(response.statusCode, response.body).toBe(200);
    const document = response.json();
    expect(document.schema_version).toBe('ATIF-v1.7');
    expect(validateAtif(document)).toMatchObject({ valid: true, errors: [] });
    const stored = (await server.store.listCandidates(jobId)).find((candidate) => candidate.index === index)!.trajectory!;
    expect(fromAtif(document).trajectory).toEqual(stored);
  });

  it('carries a patch whose bytes are not UTF-8 as base64, byte-exact', async () => {
    const document = (await server.app.inject({ url: `/jobs/${jobId}/candidates/2/trajectory?format=atif` })).json();
    expect(document.extra.patch_encoding).toBe('base64');
    expect(Buffer.from(document.extra.patch, 'base64')).toEqual(LATIN1);
  });

  it("answers winnower's own format by default", async () => {
    const body = (await server.app.inject({ url: `/jobs/${jobId}/candidates/0/trajectory` })).json();
    expect(body).toEqual(JSON.parse(JSON.stringify(toolsModeRollout())));
  });

  it('refuses an unknown format (400 naming it), a candidate without a trajectory or out of range, and an unknown job (404)', async () => {
    const bad = await server.app.inject({ url: `/jobs/${jobId}/candidates/0/trajectory?format=sft` });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('format');
    for (const index of [3, 9]) {
      const missing = await server.app.inject({ url: `/jobs/${jobId}/candidates/${index}/trajectory?format=atif` });
      expect(missing.statusCode).toBe(404);
      expect(missing.json().error).toMatchObject({ code: 'WNW_ERR_CANDIDATE_NOT_FOUND', details: { index } });
    }
    expect((await server.app.inject({ url: `/jobs/${jobId}/candidates/-1/trajectory` })).statusCode).toBe(400);
    expect((await server.app.inject({ url: '/jobs/nope/candidates/0/trajectory' })).json().error.code).toBe('WNW_ERR_JOB_NOT_FOUND');
  });
});
