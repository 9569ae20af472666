/**
 * A /rerank that verifies is kept as a finished job of kind `rerank` (src/server/rerank-job.ts):
 * GET /jobs and GET /jobs/:id show it, `jobs export` and `train --from-store` read its labelled
 * candidates with job-id-prefixed ids; a score-only /rerank stores nothing; a store that fails
 * while recording costs the client nothing but the job_id, and the failure is logged.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { exportCandidates } from '../../src/cli/jobs-action.js';
import type { Scorer } from '../../src/scoring/types.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import type { JobStore } from '../../src/store/types.js';
import { labelledFromStore } from '../../src/train/store-rows.js';
import { fakeValueModel } from '../fakes/fake-value-model.js';
import { FakeProvider } from '../verify/fake-sandbox.js';
import { gitRepo } from './git-repo.js';
import { startTestApp, type TestApp } from './test-app.js';

/** Every candidate gets 0.7: what the store keeps is the scorer's value, whatever it is. */
const constant: Scorer = {
  backend: 'fake',
  model: 'constant-0.7',
  maxInputTokens: 4096,
  score: async (inputs) => inputs.map(() => ({ value: 0.7, raw: 0.85 })),
  close: async () => {},
};

const patchTo = (value: string) => `diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = ${value}\n`;
const candidates = [
  { id: 'fix', patch: patchTo('2') },
  { id: 'wrong', patch: patchTo('3') },
];

describe('POST /rerank kept as a rerank job', () => {
  let dir: string;
  let dataDir: string;
  let task: Record<string, unknown>;
  let server: TestApp;
  const sandboxes = new FakeProvider();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wnw-rerank-job-'));
    dataDir = join(dir, 'data');
    task = {
      instance_id: 'demo__demo-1',
      problem_statement: 'x should be 2',
      repo: { path: gitRepo(join(dir, 'repo')) },
      test_command: 'grep -q "x = 2" a.py',
      fail_to_pass: ['a.py'],
    };
    server = await startTestApp({ store: createSqliteStore(dataDir), sandboxes, valueModel: fakeValueModel(constant) });
  });
  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const rerank = (app: TestApp, extra: Record<string, unknown>) =>
    app.app.inject({ method: 'POST', url: '/rerank', payload: { task, candidates, ...extra } });

  it('stores a verifying /rerank as a rerank job that GET /jobs and GET /jobs/:id show, and answers its job_id', async () => {
    const response = await rerank(server, { verify: true, verify_parser: 'exit-code' });
    expect(response.statusCode, response.body).toBe(200);
    const answer = response.json();
    expect(answer.selection.chosen).toBe('fix');
    expect(answer.job_id).toEqual(expect.any(String));

    const listed = (await server.app.inject(`/jobs?kind=rerank`)).json();
    expect(listed.jobs).toHaveLength(1);
    expect(listed.jobs[0]).toMatchObject({
      job_id: answer.job_id,
      kind: 'rerank',
      status: 'succeeded',
      overview: { instance_id: 'demo__demo-1', n: 2, chosen_index: 0, resolved: true, outcome: 'chosen' },
    });
    expect((await server.app.inject(`/jobs?kind=solve`)).json().jobs).toEqual([]);

    const shown = await server.app.inject(`/jobs/${answer.job_id}?trajectories=true`);
    expect(shown.statusCode, shown.body).toBe(200);
    const job = shown.json();
    expect(job).toMatchObject({ job_id: answer.job_id, kind: 'rerank', status: 'succeeded', error: null });
    expect(job.candidates.map((c: Record<string, unknown>) => [c.index, c.trajectory_id, c.patch, c.value])).toEqual([
      [0, 'fix', candidates[0]!.patch, 0.7],
      [1, 'wrong', candidates[1]!.patch, 0.7],
    ]);
    expect(job.candidates.map((c: { verify: { status: string } }) => c.verify.status)).toEqual(['resolved', 'unresolved']);
    expect(job.candidates[0].trajectory).toMatchObject({ id: 'fix', instance_id: 'demo__demo-1', source: 'request' });
    expect(job.result).toMatchObject({
      instance_id: 'demo__demo-1',
      outcome: 'chosen',
      chosen: { index: 0, trajectory_id: 'fix', verify_status: 'resolved', value: 0.7 },
      selection: { chosen: 'fix' },
      chosen_patch: candidates[0]!.patch,
    });
    expect(job.result.candidates.map((c: Record<string, unknown>) => [c.index, c.verify_status])).toEqual([
      [0, 'resolved'],
      [1, 'unresolved'],
    ]);
    // The request is kept without the candidates' contents: they are the job's candidates.
    const stored = await server.store.getJob(answer.job_id);
    expect((stored!.request as { candidates: unknown }).candidates).toEqual([{ id: 'fix' }, { id: 'wrong' }]);
  });

  it('stores nothing for a score-only /rerank', async () => {
    const before = (await server.store.listJobs()).length;
    const response = await rerank(server, {});
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).not.toHaveProperty('job_id');
    expect(await server.store.listJobs()).toHaveLength(before);
  });

  it("exports the rerank job's candidates with job-id-prefixed ids, and train --from-store reads their labels", async () => {
    const [job] = await server.store.listJobs({ kind: 'rerank' });
    const out = join(dir, 'rows.jsonl');
    vi.spyOn(console, 'log').mockImplementation(() => {});
    onTestFinished(() => {
      vi.restoreAllMocks();
    });
    await exportCandidates({ dataDir, labelled: true, out });
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows.map((row) => [row.id, row.meta.resolved, row.meta.job_id])).toEqual([
      [`${job!.id}/fix`, true, job!.id],
      [`${job!.id}/wrong`, false, job!.id],
    ]);
    const labelled = await labelledFromStore(dataDir);
    expect(labelled.map((row) => [row.trajectory.id, row.resolved, row.task.problem_statement])).toEqual([
      [`${job!.id}/fix`, true, 'x should be 2'],
      [`${job!.id}/wrong`, false, 'x should be 2'],
    ]);
  });

  it('answers 200 without job_id when the store fails while recording, and logs the failure', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    const real = createSqliteStore(':memory:');
    const failing: JobStore = {
      ...real,
      createJob: async () => {
        throw new Error('disk full');
      },
    };
    const app = await startTestApp({
      store: failing,
      sandboxes: new FakeProvider(),
      valueModel: fakeValueModel(constant),
      logger: { level: 'error', stream },
    });
    onTestFinished(() => app.close());
    const response = await rerank(app, { verify: true, verify_parser: 'exit-code' });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().selection.chosen).toBe('fix');
    expect(response.json()).not.toHaveProperty('job_id');
    expect(lines.some((line) => line.includes('could not record the /rerank job') && line.includes('disk full'))).toBe(true);
  });
});
