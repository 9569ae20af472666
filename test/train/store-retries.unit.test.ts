/**
 * A retried job in the job store (docs/training.md#training-on-a-servers-own-jobs): training reads
 * each retry family once, its newest ended job, so a reused rollout is one row, and says how many
 * jobs it left out; an export keeps every job and marks the reused candidates with where they came from.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { exportCandidates } from '../../src/cli/jobs-action.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import type { JobStatus, JobStore, ReusedFrom } from '../../src/store/types.js';
import { loadDataset } from '../../src/train/dataset.js';
import { loadTrainingRows } from '../../src/train/load-rows.js';
import { train } from '../../src/train/train.js';
import { leftOutOfFamilies } from '../../src/train/retry-families.js';
import { candidatesFromStore, labelledFromStore } from '../../src/train/store-rows.js';
import { Trajectory, type VerifyStatus } from '../../src/types/index.js';
import { verify as verified } from '../select/fixtures.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  vi.restoreAllMocks();
});

const REQUEST = { issue: 'Fix add.', repo: { path: '/srv/calc' }, n: 2 };

/** A finished candidate `index` of `jobId` whose trajectory is `id` (the earlier job's for a reused one), verified `status`. */
async function candidate(
  store: JobStore,
  jobId: string,
  index: number,
  id: string,
  status: VerifyStatus,
  reusedFrom?: ReusedFrom,
  instance = 'calc-1',
) {
  const trajectory = Trajectory.parse({
    id,
    instance_id: instance,
    source: 'replay',
    messages: [{ role: 'user', content: 'Fix add.' }],
    patch: `diff --git a/${index}.py b/${index}.py\n`,
    exit: 'submitted',
    meta: { seed: index },
  });
  await store.putCandidate(jobId, index, {
    status: 'finished',
    trajectory,
    verify: verified(id, status, instance),
    ...(reusedFrom ? { reused_from: reusedFrom } : {}),
  });
}

async function job(store: JobStore, id: string, retryOf?: string, status: JobStatus = 'succeeded') {
  // A later job is created later (the store orders jobs by creation time, to the millisecond).
  await new Promise((resolve) => setTimeout(resolve, 3));
  await store.createJob({ id, kind: 'solve', request: { ...REQUEST, ...(retryOf ? { retry_of: retryOf } : {}) } });
  await store.updateJob(id, { status });
}

/**
 * Job `first`: rollout 0 finished (resolved), rollout 1's sandbox failed. Its retry `second`
 * reused rollout 0 and ran rollout 1 again; with `chain`, `third` retried `second`, reusing both.
 * `other` is a job of its own.
 */
async function storeWithRetries(options: { chain?: boolean } = {}): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'wnw-retries-'));
  dirs.push(dir);
  const store = createSqliteStore(dir);
  try {
    await job(store, 'other');
    await candidate(store, 'other', 0, 'other/0', 'unresolved');
    await job(store, 'first');
    await candidate(store, 'first', 0, 'first/0', 'resolved');
    await store.putCandidate('first', 1, { status: 'failed', error: { code: 'WNW_ERR_SBX_CREATE', message: 'no sandbox' } });
    await job(store, 'second', 'first');
    await candidate(store, 'second', 0, 'first/0', 'resolved', { job_id: 'first', index: 0 });
    await candidate(store, 'second', 1, 'second/1', 'unresolved');
    if (options.chain) {
      await job(store, 'third', 'second');
      await candidate(store, 'third', 0, 'first/0', 'resolved', { job_id: 'second', index: 0 });
      await candidate(store, 'third', 1, 'second/1', 'unresolved', { job_id: 'second', index: 1 });
    }
  } finally {
    await store.close();
  }
  return dir;
}

const jsonl = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((text) => JSON.parse(text));

describe('training rows of a store with a retried job', () => {
  it('count the retry and leave out the job it superseded, so the reused rollout is one row', async () => {
    const dir = await storeWithRetries();
    const rows = await labelledFromStore(dir);
    expect(rows.map((row) => [row.trajectory.id, row.pool, row.resolved])).toEqual([
      ['second/first/0', 'second|calc-1', true],
      ['second/1', 'second|calc-1', false],
      ['other/0', 'other|calc-1', false],
    ]);
    const loaded = await loadTrainingRows({ rollouts: [], fromStore: dir } as unknown as Parameters<typeof loadTrainingRows>[0]);
    expect(loaded.candidates).toHaveLength(3);
    expect(loaded.supersededJobs).toEqual(['first']);
  });

  it('with a chain first → second → third, only third counts', async () => {
    const dir = await storeWithRetries({ chain: true });
    const rows = await labelledFromStore(dir);
    expect(rows.map((row) => row.trajectory.id)).toEqual(['third/first/0', 'third/second/1', 'other/0']);
    const loaded = await loadTrainingRows({ rollouts: [], fromStore: dir } as unknown as Parameters<typeof loadTrainingRows>[0]);
    expect(loaded.supersededJobs).toEqual(['second', 'first']);
  });

  it('are what train fits on, and its data line says how many jobs it left out as superseded', async () => {
    const dir = await storeWithRetries({ chain: true });
    const store = createSqliteStore(dir);
    try {
      // More instances, each its own job with both outcomes, so there is a validation side.
      for (const instance of ['calc-2', 'calc-3', 'calc-4']) {
        await job(store, instance);
        await candidate(store, instance, 0, `${instance}/0`, 'resolved', undefined, instance);
        await candidate(store, instance, 1, `${instance}/1`, 'unresolved', undefined, instance);
      }
    } finally {
      await store.close();
    }
    const lines: string[] = [];
    const result = await train({
      rollouts: [],
      fromStore: dir,
      out: join(dir, 'model'),
      onLog: (line) => lines.push(line),
      folds: 2,
      validationFraction: 0.01,
      sourceCheck: 'none',
      baselineModel: null,
      vocabSize: 200,
      bigramBuckets: 256,
      dims: 4,
      hidden: 4,
      maxEpochs: 1,
      budgetTokens: 256,
      bootstrap: 5,
    });
    // third's two, other's one, two for each of the three instances: first's and second's left out.
    expect(result.trainCandidates + result.validationCandidates).toBe(3 + 6);
    expect(lines.find((line) => line.startsWith('data: '))).toContain('2 job(s) left out as superseded by a retry');
  }, 120_000);
});

describe('train --rollouts on an export of a store with retries', () => {
  it('reads each run once: the reused copies are dropped, and counted', async () => {
    const dir = await storeWithRetries({ chain: true });
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    for (const format of ['winnower', 'atif'] as const) {
      const out = join(dir, `labelled.${format}.jsonl`);
      await exportCandidates({ dataDir: dir, labelled: true, format, out });
      const dataset = await loadDataset({ rollouts: [out], tasks: [`${out}.tasks.jsonl`] });
      expect(dataset.candidates.map((c) => c.trajectory.id)).toEqual(['second/1', 'first/0', 'other/0']);
      expect(dataset.dropped.reused).toBe(3);
    }
  });
});

describe('retry families', () => {
  const record = (id: string, created: number, retryOf?: string, status: JobStatus = 'succeeded') => ({
    id,
    kind: 'solve' as const,
    status,
    request: retryOf ? { retry_of: retryOf } : {},
    progress: {},
    result: null,
    error: null,
    created_at: new Date(Date.UTC(2026, 0, 1, 0, created)).toISOString(),
    updated_at: new Date(Date.UTC(2026, 0, 1, 0, created)).toISOString(),
  });

  it('count the newest ended job of each family: two retries of one job keep the newer, a purged first job still joins them', () => {
    const left = leftOutOfFamilies([record('b2', 3, 'a'), record('b1', 2, 'a'), record('a', 1), record('lone', 0)]);
    expect([...left].sort()).toEqual(['a', 'b1']);
    // `a` purged by retention: its retries are still one family.
    expect([...leftOutOfFamilies([record('b2', 3, 'a'), record('b1', 2, 'a')])]).toEqual(['b1']);
  });

  it('keep counting the last ended job while its retry still runs', () => {
    const left = leftOutOfFamilies([record('c', 3, 'b', 'running'), record('b', 2, 'a'), record('a', 1)]);
    expect([...left].sort()).toEqual(['a', 'c']);
  });
});

describe('jobs export of a store with a retried job', () => {
  it('keeps both jobs and marks the reused candidate with where it came from, in JSONL, ATIF and the bundle', async () => {
    const dir = await storeWithRetries();
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    // Every job, the superseded one too: an export records what each job returned.
    expect((await candidatesFromStore(dir)).map((row) => row.trajectory.id)).toEqual(['second/first/0', 'second/1', 'first/0', 'other/0']);

    const out = join(dir, 'rows.jsonl');
    await exportCandidates({ dataDir: dir, out });
    expect(jsonl(out).map((row) => [row.id, row.meta.job_id, row.meta.reused_from ?? null])).toEqual([
      ['second/first/0', 'second', { job_id: 'first', index: 0 }],
      ['second/1', 'second', null],
      ['first/0', 'first', null],
      ['other/0', 'other', null],
    ]);

    const atif = join(dir, 'rows.atif.jsonl');
    await exportCandidates({ dataDir: dir, format: 'atif', out: atif, job: 'second' });
    expect(jsonl(atif).map((document) => document.extra.winnower.meta.reused_from ?? null)).toEqual([{ job_id: 'first', index: 0 }, null]);

    const bundle = join(dir, 'bundle.jsonl');
    await exportCandidates({ dataDir: dir, bundle: true, out: bundle });
    expect(jsonl(bundle).map((record) => [record.candidate.job_id, record.candidate.index, record.candidate.reused_from ?? null])).toEqual([
      ['second', 0, { job_id: 'first', index: 0 }],
      ['second', 1, null],
      ['first', 0, null],
      ['other', 0, null],
    ]);
  });
});
