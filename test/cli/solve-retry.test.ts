/**
 * `winnower solve --retry-of` (docs/solve.md#retrying-what-failed) as a user runs it: two child
 * processes over one job store; the retry takes the first job's finished rollouts as they are,
 * and is refused, naming the flag's field, for a job the store does not have.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareDemoRepo } from '../../src/cli/demo-repo.js';
import { DEMO_DIR, demoTask, hasBubblewrap } from '../solve/helpers.js';
import { readJsonl, runCli } from '../support/cli.js';

describe.skipIf(!hasBubblewrap())('winnower solve --retry-of', () => {
  let repo: string;
  let dataDir: string;
  beforeAll(() => {
    repo = prepareDemoRepo(join(DEMO_DIR, 'repo'));
    dataDir = mkdtempSync(join(tmpdir(), 'wnw-retry-cli-'));
  });
  afterAll(() => {
    rmSync(dirname(repo), { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  const solve = (extra: string[]) =>
    runCli(
      [
        'solve',
        '--repo',
        repo,
        '--issue',
        demoTask().problem_statement,
        '--n',
        '2',
        '--replay',
        join(DEMO_DIR, 'trajectories/plausible-wrong-fix.json'),
        join(DEMO_DIR, 'trajectories/correct-fix.json'),
        '--test-command',
        demoTask().test_command,
        '--no-regression',
        ...extra,
      ],
      { env: { WINNOWER_POLICY_URL: '', WINNOWER_DATA_DIR: dataDir } },
    );

  it('takes the finished rollouts of the earlier job instead of running them again', async () => {
    const out = join(dataDir, 'first.json');
    const first = await solve(['--out', out]);
    expect(first.code, first.stderr).toBe(0);
    const id = JSON.parse(readFileSync(out, 'utf8')).job_id as string;
    // Named on stderr before any event, so a retry needs no --out.
    expect(first.stderr.split('\n')).toContain(`job ${id}`);

    const retry = await solve(['--retry-of', id]);
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stderr).not.toContain('started');
    expect(retry.stderr).toContain(`rollout 0 finished in the earlier job: ${id}/0, not run again`);
    expect(retry.stderr).toContain(`rollout 1 finished in the earlier job: ${id}/1, not run again`);
    expect(retry.stderr).toContain('job succeeded');

    // `jobs export` lists both jobs, the retry's candidates marked as the first job's.
    const exported = join(dataDir, 'export.jsonl');
    const run = await runCli(['jobs', 'export', '--data-dir', dataDir, '--out', exported]);
    expect(run.code, run.stderr).toBe(0);
    const rows = readJsonl(exported) as Array<{ id: string; meta: { job_id: string; reused_from?: unknown } }>;
    const marks = rows.map((row) => [row.meta.job_id === id ? 'first' : 'retry', row.meta.reused_from ?? null]);
    expect(marks).toEqual([
      ['retry', { job_id: id, index: 0 }],
      ['retry', { job_id: id, index: 1 }],
      ['first', null],
      ['first', null],
    ]);
  }, 240_000);

  it('is refused with exit code 2, naming the field, for a job the store does not have', async () => {
    const { code, stderr } = await solve(['--retry-of', 'no-such-job']);
    expect(code).toBe(2);
    expect(stderr).toContain('--retry-of: ');
  }, 120_000);
});
