/**
 * `winnower run --tasks` (issue 32): best-of-N over a folder of Harbor tasks written here, the
 * output in Harbor's job and trial layout (result.json per trial and for the job,
 * agent/trajectory.json as ATIF, verifier/), and a second run of the same job skipping what is done.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareDemoRepo } from '../../src/cli/demo-repo.js';
import { writeDurationsTask } from '../formats/harbor/durations-task.js';
import { DEMO_DIR, hasBubblewrap } from '../solve/helpers.js';
import { runCli } from '../support/cli.js';
import { expectCode } from '../support/expect-code.js';

describe.skipIf(!hasBubblewrap())('winnower run --tasks (a Harbor dataset)', () => {
  let scratch: string;
  const repos: string[] = [];
  beforeAll(() => {
    for (let task = 0; task < 2; task += 1) repos.push(prepareDemoRepo(join(DEMO_DIR, 'repo')));
    scratch = dirname(repos[0]!);
    mkdirSync(join(scratch, 'checkouts'));
    ['durations-a', 'durations-b'].forEach((name, index) => {
      writeDurationsTask(join(scratch, 'tasks', name), `winnower/${name}`);
      symlinkSync(repos[index]!, join(scratch, 'checkouts', name));
    });
  });
  afterAll(() => {
    for (const repo of repos) rmSync(dirname(repo), { recursive: true, force: true });
  });

  const run = () =>
    runCli(
      [
        'run',
        '--tasks',
        join(scratch, 'tasks'),
        '--repos',
        join(scratch, 'checkouts'),
        '--jobs-dir',
        join(scratch, 'jobs'),
        '--job-name',
        'first',
        '--n',
        '2',
        '--replay',
        join(DEMO_DIR, 'trajectories/plausible-wrong-fix.json'),
        join(DEMO_DIR, 'trajectories/correct-fix.json'),
        '--no-regression',
      ],
      { env: { WINNOWER_POLICY_URL: '' }, timeoutMs: 120_000 },
    );

  it("writes Harbor's layout for every candidate of every task, and resumes without redoing a task", async () => {
    const first = await run();
    expect(first.code, first.stderr).toBe(0);
    const jobDir = join(scratch, 'jobs', 'first');
    const trials = readdirSync(jobDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    expect(trials).toHaveLength(4);
    expect(trials.every((name) => /^winnower-durations-[ab]__[0-9a-f]{7}$/.test(name))).toBe(true);
    const results = trials.map((name) => JSON.parse(readFileSync(join(jobDir, name, 'result.json'), 'utf8')));
    expect(results.map((result) => result.verifier_result?.rewards.reward).sort()).toEqual([0, 0, 1, 1]);
    for (const name of trials) {
      const atif = JSON.parse(readFileSync(join(jobDir, name, 'agent', 'trajectory.json'), 'utf8'));
      expect(atif.schema_version).toBe('ATIF-v1.7');
      expect(atif.steps.map((step: { step_id: number }) => step.step_id)).toEqual(atif.steps.map((_: unknown, index: number) => index + 1));
      expect(existsSync(join(jobDir, name, 'verifier', 'reward.txt'))).toBe(true);
    }
    const job = JSON.parse(readFileSync(join(jobDir, 'result.json'), 'utf8'));
    expect(job).toMatchObject({ id: 'first', n_total_trials: 4, stats: { n_completed_trials: 4, n_errored_trials: 0 } });
    expect(job.stats.evals.winnower__replay__adhoc.reward_stats.reward['1']).toHaveLength(2);
    const progress = readFileSync(join(jobDir, 'winnower-tasks.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(progress.map((entry) => [entry.task, entry.resolved])).toEqual([
      ['durations-a', true],
      ['durations-b', true],
    ]);
    // The chosen trial is the one whose reward is 1.
    const chosen = results.find((result) => result.trial_name === progress[0].chosen_trial);
    expect(chosen.verifier_result.rewards.reward).toBe(1);

    const again = await run();
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('durations-a: done in an earlier run, skipped');
    expect(again.stderr).toContain('durations-b: done in an earlier run, skipped');
    expect(JSON.parse(readFileSync(join(jobDir, 'result.json'), 'utf8')).n_total_trials).toBe(4);

    // A run cut off in durations-b (its line never written): the next run redoes it alone, replacing its trials.
    const lines = readFileSync(join(jobDir, 'winnower-tasks.jsonl'), 'utf8').trim().split('\n');
    writeFileSync(join(jobDir, 'winnower-tasks.jsonl'), `${lines[0]}\n`);
    const resumed = await run();
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('durations-a: done in an earlier run, skipped');
    expect(resumed.stderr).toMatch(/durations-b: succeeded; chose winnower-durations-b__[0-9a-f]{7} \(resolved\)/);
    const after = JSON.parse(readFileSync(join(jobDir, 'result.json'), 'utf8'));
    expect(after.n_total_trials).toBe(4);
    expect(readFileSync(join(jobDir, 'winnower-tasks.jsonl'), 'utf8').trim().split('\n')).toHaveLength(2);
  }, 400_000);

  it('names what is missing before any task runs: the code of Dockerfile-only tasks, a checkout', async () => {
    const { runTasks } = await import('../../src/cli/run-action.js');
    const base = { tasks: join(scratch, 'tasks'), jobsDir: join(scratch, 'jobs'), n: 1 };
    const noCode = await expectCode(runTasks(base), 'WNW_ERR_INPUT_INVALID');
    expect(noCode.details.field).toBe('--repos');
    expect(noCode.message).toContain('durations-a: its environment/Dockerfile builds an image');
    const missing = await expectCode(runTasks({ ...base, repos: join(scratch, 'no-checkouts') }), 'WNW_ERR_INPUT_INVALID');
    expect(missing.message).toContain('--repos: no checkout');
    const empty = await expectCode(runTasks({ ...base, tasks: join(scratch, 'checkouts') }), 'WNW_ERR_INPUT_INVALID');
    expect(empty.details.field).toBe('--tasks');
  });
});
