/**
 * `winnower solve --task` (issue 32): a Harbor task written here (the demo's bug as a task folder:
 * task.toml, instruction.md, a Dockerfile with WORKDIR /app, tests/test.sh writing reward.txt)
 * runs with the demo's code as a checkout and replayed candidates; verification is Harbor's, and
 * the candidate whose reward is 1 is chosen although the value model prefers another.
 */
import { readFileSync, rmSync } from 'node:fs';
import { Command } from 'commander';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareDemoRepo } from '../../src/cli/demo-repo.js';
import { writeDurationsTask } from '../formats/harbor/durations-task.js';
import { DEMO_DIR, hasBubblewrap } from '../solve/helpers.js';
import { runCli } from '../support/cli.js';
import { expectCode } from '../support/expect-code.js';

describe.skipIf(!hasBubblewrap())('winnower solve --task (a Harbor task)', () => {
  let repo: string;
  let taskDir: string;
  beforeAll(() => {
    repo = prepareDemoRepo(join(DEMO_DIR, 'repo'));
    taskDir = writeDurationsTask(join(dirname(repo), 'harbor-task'));
  });
  afterAll(() => rmSync(dirname(repo), { recursive: true, force: true }));

  it('chooses the candidate whose reward is 1', async () => {
    const out = join(dirname(repo), 'harbor-job.json');
    const { code, stdout, stderr } = await runCli(
      [
        'solve',
        '--task',
        taskDir,
        '--repo',
        repo,
        '--n',
        '3',
        '--replay',
        join(DEMO_DIR, 'trajectories/breaks-other-tests.json'),
        '--replay',
        join(DEMO_DIR, 'trajectories/correct-fix.json'),
        '--replay',
        join(DEMO_DIR, 'trajectories/plausible-wrong-fix.json'),
        '--no-regression',
        '--out',
        out,
      ],
      { env: { WINNOWER_POLICY_URL: '' } },
    );
    expect(stderr).toContain('job succeeded');
    expect(code, stderr).toBe(0);
    const job = JSON.parse(readFileSync(out, 'utf8'));
    expect(job.status).toBe('succeeded');
    expect(job.result.instance_id).toBe('winnower/durations');
    // The instruction, its canary line stripped, is what the agent was asked.
    const asked = JSON.stringify(job.candidates[0].trajectory.messages);
    expect(asked).toContain('parse_duration rejects amounts with more than one digit');
    expect(asked).not.toContain('canary');
    const rewards = job.candidates.map((candidate: { verify: { status: string; reward?: { value: number } } }) => [
      candidate.verify.status,
      candidate.verify.reward?.value,
    ]);
    expect(rewards).toEqual([
      ['unresolved', 0],
      ['resolved', 1],
      ['unresolved', 0],
    ]);
    expect(job.result.chosen.index).toBe(1);
    // The result itself carries each reward, the file it came from and its threshold.
    const reward = (value: number) => ({ value, file: 'reward.txt', threshold: 1, rewards: { reward: value } });
    expect(job.result.candidates.map((candidate: { harbor_reward?: unknown }) => candidate.harbor_reward)).toEqual([
      reward(0),
      reward(1),
      reward(0),
    ]);
    expect(job.result.chosen.harbor_reward).toEqual(reward(1));
    expect(job.result.selection.reason).toContain('reward 1 (resolved at ≥ 1)');
    expect(stdout).toMatch(/resolved +1 \(≥ 1\) +✔/);
  }, 180_000);

  it('holds the rewards to --reward-threshold: at 0 every candidate resolves and the value model decides', async () => {
    const out = join(dirname(repo), 'harbor-threshold.json');
    const { code, stderr } = await runCli(
      [
        'solve',
        '--task',
        taskDir,
        '--repo',
        repo,
        '--n',
        '2',
        '--replay',
        join(DEMO_DIR, 'trajectories/breaks-other-tests.json'),
        join(DEMO_DIR, 'trajectories/correct-fix.json'),
        '--reward-threshold',
        '0',
        '--no-regression',
        '--out',
        out,
      ],
      { env: { WINNOWER_POLICY_URL: '' } },
    );
    expect(code, stderr).toBe(0);
    const job = JSON.parse(readFileSync(out, 'utf8'));
    expect(
      job.candidates.map((candidate: { verify: { status: string; reward: { threshold: number } } }) => [
        candidate.verify.status,
        candidate.verify.reward.threshold,
      ]),
    ).toEqual([
      ['resolved', 0],
      ['resolved', 0],
    ]);
  }, 180_000);
});

describe('winnower solve --task flags', () => {
  it('refuses --reward-threshold without --task, naming the flag', async () => {
    const { runSolve } = await import('../../src/cli/solve-action.js');
    const error = await expectCode(runSolve({ n: 1, issue: 'x', rewardThreshold: 0.5 }, new Command()), 'WNW_ERR_INPUT_INVALID');
    expect(error.details.field).toBe('--reward-threshold');
    const noIssue = await expectCode(runSolve({ n: 1 }, new Command()), 'WNW_ERR_INPUT_INVALID');
    expect(noIssue.message).toContain('or a Harbor task with --task');
  });
});
