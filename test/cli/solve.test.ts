/** `winnower solve` as a user runs it: a real child process over the demo task, replaying recordings. */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareDemoRepo } from '../../src/cli/demo-repo.js';
import { DEMO_DIR, demoTask, hasBubblewrap } from '../solve/helpers.js';
import { startFakeJudge } from '../fakes/fake-judge.js';
import { runCli } from '../support/cli.js';

const runSolve = (args: string[]) => runCli(['solve', ...args], { env: { WINNOWER_POLICY_URL: '' } });

describe.skipIf(!hasBubblewrap())('winnower solve', () => {
  let repo: string;
  beforeAll(() => {
    repo = prepareDemoRepo(join(DEMO_DIR, 'repo'));
  });
  afterAll(() => rmSync(dirname(repo), { recursive: true, force: true }));

  it('runs a job without a server, shows progress and writes the job and the chosen patch', async () => {
    const task = demoTask();
    const out = join(dirname(repo), 'job.json');
    const patch = join(dirname(repo), 'chosen.diff');
    const { code, stdout, stderr } = await runSolve([
      '--repo',
      repo,
      '--issue',
      task.problem_statement,
      '--n',
      '2',
      '--replay',
      join(DEMO_DIR, 'trajectories/plausible-wrong-fix.json'),
      '--replay',
      join(DEMO_DIR, 'trajectories/correct-fix.json'),
      '--test-command',
      task.test_command,
      ...task.fail_to_pass.flatMap((id) => ['--fail-to-pass', id]),
      ...task.pass_to_pass.flatMap((id) => ['--pass-to-pass', id]),
      '--test-patch',
      join(DEMO_DIR, 'test_patch.diff'),
      // The given tests only: the regression check (on by default) is not what this test is about.
      '--no-regression',
      '--out',
      out,
      '--patch-out',
      patch,
    ]);
    expect(stderr).toContain('rollout 0 started');
    expect(stderr).toContain('job succeeded');
    expect(code).toBe(0);
    expect(stdout).toMatch(/1\s+finished\s+6\s+\S+\s+resolved\s+3\/3\s+5\/5\s+none\s+✔/);
    const job = JSON.parse(readFileSync(out, 'utf8'));
    expect(job.status).toBe('succeeded');
    expect(job.result.chosen.index).toBe(1);
    expect(job.candidates[0].trajectory.messages.length).toBeGreaterThan(2);
    expect(readFileSync(patch, 'utf8')).toContain('(\\d+)([hms])');
  }, 120_000);

  it('--no-pool-tests: the checks run without the tests from the pool', async () => {
    const run = async (name: string, extra: string[]) => {
      const out = join(dirname(repo), `${name}.json`);
      const { code, stderr } = await runSolve([
        '--repo',
        repo,
        '--issue',
        demoTask().problem_statement,
        '--n',
        '1',
        '--replay',
        join(DEMO_DIR, 'trajectories/correct-fix.json'),
        '--checks',
        '--out',
        out,
        ...extra,
      ]);
      expect(code, stderr).toBe(0);
      return JSON.parse(readFileSync(out, 'utf8')).result.checks;
    };
    // The recorded fix writes no test: the check says so when it runs, and is absent when turned off.
    expect((await run('pool-on', [])).pool_tests).toMatchObject({ error: 'no candidate adds or changes a test file' });
    const off = await run('pool-off', ['--no-pool-tests']);
    expect(off.pool_tests).toBeNull();
    expect(off.regression).not.toBeNull();
  }, 120_000);

  it('exits 3 when the job ran but no candidate had a usable patch, and says so', async () => {
    const out = join(dirname(repo), 'none-usable.json');
    const { code, stdout, stderr } = await runSolve([
      '--repo',
      repo,
      '--issue',
      demoTask().problem_statement,
      '--n',
      '1',
      '--replay',
      join(DEMO_DIR, 'trajectories/gives-up.json'),
      '--out',
      out,
    ]);
    expect(code, stderr).toBe(3);
    expect(stderr).toContain('job succeeded: nothing usable chosen');
    expect(stdout).toContain('nothing chosen: None of the 1 candidate has a usable patch (1 empty)');
    const job = JSON.parse(readFileSync(out, 'utf8'));
    expect(job).toMatchObject({ status: 'succeeded', result: { chosen: null, outcome: 'none-usable' } });
  }, 120_000);

  it('--judge-url and --judge-model rank with the pairwise judge; half a judge is refused, naming the flag', async () => {
    const fake = await startFakeJudge();
    try {
      const out = join(dirname(repo), 'judged.json');
      const { code, stderr } = await runSolve([
        '--repo',
        repo,
        '--issue',
        demoTask().problem_statement,
        '--n',
        '2',
        '--replay',
        join(DEMO_DIR, 'trajectories/plausible-wrong-fix.json'),
        '--replay',
        join(DEMO_DIR, 'trajectories/correct-fix.json'),
        '--strategy',
        'judge',
        '--judge-url',
        `${fake.url}/v1`,
        '--judge-model',
        'judge-m',
        '--judge-k',
        '1',
        '--out',
        out,
      ]);
      expect(code, stderr).toBe(0);
      expect(fake.asked.length).toBeGreaterThan(0);
      const job = JSON.parse(readFileSync(out, 'utf8'));
      expect(job.result.selection.strategy).toBe('judge');
      expect(job.result.judge).toMatchObject({ model: 'judge-m', strategy: 'judge', error: null });
    } finally {
      await fake.close();
    }
    const half = await runSolve(['--repo', repo, '--issue', 'x', '--judge-url', 'http://127.0.0.1:9/v1']);
    expect(half.code).toBe(2);
    expect(half.stderr).toContain('--judge-model');
  }, 120_000);

  it('documents its exit statuses in --help', async () => {
    const { code, stdout } = await runSolve(['--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/Exit status:.*\b3 the job ran but chose nothing/s);
  }, 60_000);

  it('rejects a request that cannot run, naming the field, with exit code 2', async () => {
    const { code, stderr } = await runSolve([
      '--repo',
      repo,
      '--issue',
      'x',
      '--waves',
      '1,2',
      '--n',
      '2',
      '--replay',
      join(DEMO_DIR, 'trajectories/correct-fix.json'),
    ]);
    expect(code).toBe(2);
    // The flag, not the body field the CLI built from it.
    expect(stderr).toContain('--waves: wave sizes must add up to n');
    const mode = await runSolve(['--repo', repo, '--issue', 'x', '--policy-mode', 'banana']);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toMatch(/--policy-mode: Invalid option: expected one of "tools"\|"text"/);
    const missing = await runSolve(['--repo', repo]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--issue');
    expect(existsSync(join(dirname(repo), 'data'))).toBe(false);
  }, 60_000);
});
