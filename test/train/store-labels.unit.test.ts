/**
 * Training rows from a job store (issue 32's "done when"): a candidate whose tests could not run
 * (the sandbox or runner failed, it timed out, a Harbor reward file was malformed) is never an
 * unresolved row; a patch that did not apply or tests that failed are.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { exportCandidates } from '../../src/cli/jobs-action.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import { candidatesFromStore, labelledFromStore } from '../../src/train/store-rows.js';
import { Trajectory, type VerifyResult, type VerifyStatus } from '../../src/types/index.js';
import { verify as verified } from '../select/fixtures.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  vi.restoreAllMocks();
});

const CASES: Array<{ name: string; status: VerifyStatus; extra?: Partial<VerifyResult> }> = [
  { name: 'resolved', status: 'resolved' },
  { name: 'unresolved', status: 'unresolved' },
  { name: 'apply-failed', status: 'apply_failed' },
  { name: 'sandbox-error', status: 'error', extra: { error: 'WNW_ERR_SANDBOX_CREATE: no sandbox' } },
  { name: 'timeout', status: 'timeout', extra: { timed_out: true } },
  {
    name: 'malformed-reward',
    status: 'error',
    extra: { parser: 'harbor-reward', exit_code: 0, error: 'the verifier could not be graded: reward.txt does not hold one number ("x")' },
  },
];

/** A store with one solve job whose candidates came out as CASES, in order. */
async function storeWithOutcomes(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'wnw-labels-'));
  dirs.push(dir);
  const store = createSqliteStore(dir);
  try {
    await store.createJob({ id: 'job1', kind: 'solve', request: { issue: 'Fix add.', repo: { path: '/srv/calc' } } });
    for (const [index, { name, status, extra }] of CASES.entries()) {
      const id = `job1/${index}`;
      const trajectory = Trajectory.parse({
        id,
        instance_id: 'calc-1',
        source: 'replay',
        messages: [{ role: 'user', content: 'Fix add.' }],
        patch: `diff --git a/${name}.py b/${name}.py\n`,
        exit: 'submitted',
        meta: { seed: index },
      });
      const verify: VerifyResult = { ...verified(id, status, 'calc-1'), ...extra };
      await store.putCandidate('job1', index, { status: 'finished', trajectory, verify });
    }
    await store.updateJob('job1', { status: 'succeeded', result: { chosen: { index: 0 } } });
  } finally {
    await store.close();
  }
  return dir;
}

describe('training rows from a job store', () => {
  it('never count a check that could not run as unresolved', async () => {
    const dir = await storeWithOutcomes();
    const rows = await labelledFromStore(dir);
    expect(rows.map((row) => [row.trajectory.id, row.resolved])).toEqual([
      ['job1/0', true],
      ['job1/1', false],
      ['job1/2', false],
    ]);
    // Unlabelled listing keeps them, with no label at all.
    const all = await candidatesFromStore(dir, { labelledOnly: false });
    const unlabelled = all.filter((row) => row.resolved === undefined).map((row) => row.trajectory.id);
    expect(unlabelled).toEqual(['job1/3', 'job1/4', 'job1/5']);
    for (const row of all.filter((each) => each.resolved === undefined)) expect(row.trajectory.meta).not.toHaveProperty('resolved');
  });

  it('jobs export --labelled writes only the candidates whose tests ran, and the bundle says could_not_run', async () => {
    const dir = await storeWithOutcomes();
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const out = join(dir, 'labelled.jsonl');
    await exportCandidates({ dataDir: dir, labelled: true, out });
    const exported = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((text) => JSON.parse(text) as { id: string; meta: { resolved?: boolean } });
    expect(exported.map((row) => [row.id, row.meta.resolved])).toEqual([
      ['job1/0', true],
      ['job1/1', false],
      ['job1/2', false],
    ]);
    const bundle = join(dir, 'bundle.jsonl');
    await exportCandidates({ dataDir: dir, bundle: true, out: bundle });
    const outcomes = readFileSync(bundle, 'utf8')
      .trim()
      .split('\n')
      .map((text) => (JSON.parse(text) as { checks: Array<{ outcome: string }> }).checks.map((check) => check.outcome));
    expect(outcomes.flat()).toEqual(['passed', 'failed', 'failed', 'could_not_run', 'could_not_run', 'could_not_run']);
  });
});
