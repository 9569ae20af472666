/**
 * `retry_of` (issue 32 item 6, docs/solve.md#retrying-what-failed): a retry runs again only the
 * rollouts that did not finish, each with its index and so its seed, and takes the finished ones
 * as they are, their candidate ids kept; every candidate is evaluated and selected anew. On real
 * components: local sandboxes, the demo repository, replayed candidates. The earlier job's failed
 * rollout is an infrastructure failure written into its store, as a crashed sandbox would leave it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareDemoRepo } from '../../src/cli/demo-repo.js';
import { demoRecordings } from '../../src/cli/demo-task.js';
import { redactRequest } from '../../src/server/plugins/redact-request.js';
import { SolveRequest } from '../../src/solve/solve-request.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import { candidatesFromStore, labelledFromStore } from '../../src/train/store-rows.js';
import { startTestApp, type TestApp } from '../server/test-app.js';
import { DEMO_DIR, hasBubblewrap, solveBody } from './helpers.js';

const recordings = demoRecordings();

describe.skipIf(!hasBubblewrap())('/solve retry_of: rerun only what failed', () => {
  let server: TestApp;
  let repo: string;
  let dataDir: string;
  beforeAll(async () => {
    repo = prepareDemoRepo(`${DEMO_DIR}repo`);
    // On disk, so training and exports read the store the jobs wrote.
    dataDir = mkdtempSync(join(tmpdir(), 'wnw-retry-'));
    server = await startTestApp({ valueModel: 'bundled', store: createSqliteStore(dataDir) });
  });
  afterAll(async () => {
    await server?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const body = () =>
    solveBody(repo, {
      n: 2,
      policy: { kind: 'replay', recordings: [recordings['correct-fix'], recordings['plausible-wrong-fix']] },
    });
  const solve = async (payload: Record<string, unknown>) => {
    const response = await server.app.inject({ method: 'POST', url: '/solve?wait=true', payload });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };

  it('reruns the failed rollout with its seed, keeps the finished one and its id, and selects over both', async () => {
    const first = await solve(body());
    expect(first.status, JSON.stringify(first.error)).toBe('succeeded');
    const fixed = first.result.chosen.index as number;
    const other = 1 - fixed;
    // The chosen rollout's sandbox "crashed": no trajectory, an infrastructure error.
    await server.store.putCandidate(first.job_id, fixed, {
      status: 'failed',
      trajectory: null,
      score: null,
      verify: null,
      error: { code: 'WNW_ERR_SBX_CREATE', message: 'sandbox could not be created' },
    });

    const retry = await solve({ ...body(), retry_of: first.job_id });
    expect(retry.status, JSON.stringify(retry.error)).toBe('succeeded');
    expect(retry.job_id).not.toBe(first.job_id);
    const events = (await server.store.listEvents(retry.job_id)).filter((event) => event.type.startsWith('rollout-'));
    expect(events.filter((event) => event.type === 'rollout-start').map((event) => event.index)).toEqual([fixed]);
    expect(events.filter((event) => event.type === 'rollout-reuse')).toEqual([
      expect.objectContaining({ index: other, from: `${first.job_id}/${other}` }),
    ]);
    const candidates = await server.store.listCandidates(retry.job_id);
    const byIndex = new Map(candidates.map((candidate) => [candidate.index, candidate]));
    // The finished rollout is the earlier job's candidate, id and seed kept; the rerun one has its index's seed.
    expect(byIndex.get(other)?.trajectory).toMatchObject({ id: `${first.job_id}/${other}`, meta: { seed: other } });
    expect(byIndex.get(fixed)?.trajectory).toMatchObject({ id: `${retry.job_id}/${fixed}`, meta: { seed: fixed } });
    // Both evaluated again, and the same seed replayed the same fix, chosen again.
    expect(byIndex.get(other)?.verify).not.toBeNull();
    expect(retry.result.chosen.index).toBe(fixed);
    expect(retry.result.rollouts).toMatchObject({ planned: 2, finished: 2, failed: 0 });
    // The store says which candidate was taken from the earlier job, and from where.
    expect([byIndex.get(other)?.reused_from, byIndex.get(fixed)?.reused_from]).toEqual([{ job_id: first.job_id, index: other }, null]);
    // So does GET /jobs/:id.
    const shown = new Map(
      retry.candidates.map((candidate: { index: number; reused_from: unknown }) => [candidate.index, candidate.reused_from]),
    );
    expect([shown.get(other), shown.get(fixed)]).toEqual([{ job_id: first.job_id, index: other }, null]);
    // Training reads the retry's pool only: the reused rollout is one row, the earlier job is left out.
    const rows = await labelledFromStore(dataDir);
    expect(rows.map((row) => row.trajectory.meta.job_id)).toEqual([retry.job_id, retry.job_id]);
    // An export keeps both jobs, the reused candidate marked.
    const exported = await candidatesFromStore(dataDir, { labelledOnly: false });
    expect(exported.map((row) => [row.trajectory.meta.job_id, row.trajectory.meta.reused_from ?? null])).toEqual(
      expect.arrayContaining([
        [retry.job_id, { job_id: first.job_id, index: other }],
        [first.job_id, null],
      ]),
    );
  });

  it('refuses, naming retry_of, a job that does not exist or that ran another request', async () => {
    const unknown = await server.app.inject({ method: 'POST', url: '/solve', payload: { ...body(), retry_of: 'no-such-job' } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error).toMatchObject({ code: 'WNW_ERR_INPUT_INVALID', details: { field: 'body.retry_of' } });

    // An ended job of the same request, as the route stores it.
    const earlier = await server.store.createJob({ id: 'earlier', kind: 'solve', request: redactRequest(SolveRequest.parse(body())) });
    await server.store.updateJob(earlier.id, { status: 'succeeded' });
    const other = await server.app.inject({
      method: 'POST',
      url: '/solve',
      payload: { ...body(), n: 1, policy: { kind: 'replay', recordings: [recordings['correct-fix']] }, retry_of: earlier.id },
    });
    expect(other.statusCode).toBe(400);
    expect(other.json().error).toMatchObject({ details: { field: 'body.retry_of', differs: ['n', 'policy'] } });
  });
});
