/**
 * `winnower jobs export --format atif` on a job store: every candidate with a trajectory (or with
 * --labelled only the verified ones) as ATIF-v1.7 documents that validate and read back, through
 * `train`'s own reader, to the same messages and labels.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { validateAtif } from '../../src/formats/atif/index.js';
import { importTrajectories } from '../../src/formats/index.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import { loadDataset } from '../../src/train/dataset.js';
import { CandidateEvidence, VerifyResult } from '../../src/types/index.js';
import { harnessRollout, textModeRollout, toolsModeRollout } from '../formats/atif/trajectories.js';
import { readJsonl, runCli } from '../support/cli.js';

const verified = (status: 'resolved' | 'unresolved' | 'error' | 'timeout') =>
  VerifyResult.parse({
    trajectory_id: 'x',
    instance_id: 'fix-median',
    status,
    applied: status !== 'error',
    fail_to_pass: { passed: status === 'resolved' ? 1 : 0, failed: status === 'resolved' ? 0 : 1, missing: 0 },
    pass_to_pass: { passed: 1, failed: 0, missing: 0 },
    resolved: status === 'resolved',
    parser: 'pytest',
    exit_code: status === 'error' ? null : 0,
    duration_ms: 10,
  });

describe('winnower jobs export --format atif', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'jobs-export-atif-'));
    const store = createSqliteStore(dataDir);
    await store.createJob({
      id: 'job-a',
      kind: 'solve',
      request: { issue: 'median is wrong for even lists', repo: { path: '/tmp/stats' } },
      status: 'succeeded',
    });
    await store.putCandidate('job-a', 0, { status: 'finished', trajectory: toolsModeRollout(), verify: verified('resolved') });
    await store.putCandidate('job-a', 1, { status: 'finished', trajectory: textModeRollout(), verify: verified('unresolved') });
    // The tests could not run: no label, but still a candidate with a trajectory.
    await store.putCandidate('job-a', 2, { status: 'finished', trajectory: harnessRollout(), verify: verified('error') });
    await store.createJob({ id: 'job-b', kind: 'solve', request: { issue: 'another' }, status: 'succeeded' });
    // A rollout's own id (<job_id>/<index>) is its identity: exported as it is, not prefixed again.
    await store.putCandidate('job-b', 0, { status: 'finished', trajectory: { ...toolsModeRollout(), id: 'job-b/0' } });
    await store.putCandidate('job-b', 1, {
      status: 'finished',
      trajectory: { ...textModeRollout(), id: 'job-b/1' },
      verify: verified('timeout'),
    });
    store.close();
  });

  it('writes every candidate of a job as a valid ATIF document that re-imports to the same messages', async () => {
    const out = join(dataDir, 'job-a.atif.jsonl');
    const run = await runCli(['jobs', 'export', '--data-dir', dataDir, '--job', 'job-a', '--format', 'atif', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/3 candidates \(1 resolved\) of 1 jobs .* as atif/);
    const documents = readJsonl(out) as Record<string, unknown>[];
    expect(documents).toHaveLength(3);
    for (const document of documents) expect(validateAtif(document)).toMatchObject({ valid: true, errors: [] });
    const imported = await importTrajectories(out);
    expect(imported.issues).toEqual([]);
    expect(imported.items.map((t) => t.messages)).toEqual([toolsModeRollout(), textModeRollout(), harnessRollout()].map((t) => t.messages));
    expect(imported.items.map((t) => t.id)).toEqual(['job-a/job1/0', 'job-a/job1/1', 'job-a/job2/0']);
  });

  it('with --labelled writes only the verified candidates, and train reads their labels back', async () => {
    const out = join(dataDir, 'labelled.atif.jsonl');
    const run = await runCli(['jobs', 'export', '--labelled', '--data-dir', dataDir, '--format', 'atif', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    const dataset = await loadDataset({ rollouts: [out], tasks: [`${out}.tasks.jsonl`] });
    expect(dataset.candidates.map((c) => [c.trajectory.id, c.resolved])).toEqual([
      ['job-a/job1/0', true],
      ['job-a/job1/1', false],
    ]);
    expect(dataset.candidates[0]!.task.problem_statement).toBe('median is wrong for even lists');
  });

  it("keeps a rollout's id as the job gave it, and never labels a candidate whose tests could not run", async () => {
    const out = join(dataDir, 'job-b.jsonl');
    const run = await runCli(['jobs', 'export', '--data-dir', dataDir, '--job', 'job-b', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    const rows = readJsonl(out) as Array<{ id: string; meta: Record<string, unknown> }>;
    expect(rows.map((row) => row.id)).toEqual(['job-b/0', 'job-b/1']);
    // Tests that timed out (or errored) say nothing about the patch: no label, and no training row.
    expect(rows.map((row) => row.meta.resolved)).toEqual([undefined, undefined]);
    const labelled = await runCli(['jobs', 'export', '--labelled', '--data-dir', dataDir, '--job', 'job-b', '--out', out]);
    expect(labelled.code).toBe(2);
    expect(labelled.stderr).toMatch(/no verified candidates .*in job job-b of the job store/);
  });

  it('with --bundle writes one candidate-with-evidence record per candidate, "could not run" apart from "failed"', async () => {
    const out = join(dataDir, 'bundle.jsonl');
    const run = await runCli(['jobs', 'export', '--bundle', '--data-dir', dataDir, '--job', 'job-a', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/as evidence records/);
    const records = readJsonl(out).map((row) => CandidateEvidence.parse(row));
    expect(records.map((r) => [r.candidate.id, r.candidate.index, r.checks.map((check) => `${check.kind}:${check.outcome}`)])).toEqual([
      ['job-a/job1/0', 0, ['given_tests:passed']],
      ['job-a/job1/1', 1, ['given_tests:failed']],
      ['job-a/job2/0', 2, ['given_tests:could_not_run']],
    ]);
    for (const r of records) expect(validateAtif(r.trajectory).valid).toBe(true);
    const refused = await runCli(['jobs', 'export', '--bundle', '--format', 'winnower', '--data-dir', dataDir, '--out', out]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--bundle writes ATIF trajectories/);
  });

  it('refuses an unknown format, and says when a job has nothing to export', async () => {
    const bad = await runCli(['jobs', 'export', '--data-dir', dataDir, '--format', 'sft', '--out', join(dataDir, 'x')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--format/);
    // A job id that is not in the store is named as such, not answered as an empty job.
    const none = await runCli(['jobs', 'export', '--data-dir', dataDir, '--job', 'nope', '--format', 'atif', '--out', join(dataDir, 'y')]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`no job nope in the job store at ${dataDir} (field: job)`);
  });
});
