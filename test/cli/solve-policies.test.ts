/** `winnower solve --policies <file>`: a mixed-policy job from the command line (issue 19 item 4), replaying recordings. */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareDemoRepo } from '../../src/cli/demo-repo.js';
import { DEMO_DIR, demoTask, hasBubblewrap } from '../solve/helpers.js';
import { runCli } from '../support/cli.js';

const runSolve = (args: string[]) => runCli(['solve', ...args], { env: { WINNOWER_POLICY_URL: '' } });

describe.skipIf(!hasBubblewrap())('winnower solve --policies', () => {
  let repo: string;
  let file: string;
  beforeAll(() => {
    repo = prepareDemoRepo(join(DEMO_DIR, 'repo'));
    file = join(dirname(repo), 'policies.yaml');
    // One path absolute, one relative to the file: both are where the file says.
    writeFileSync(
      file,
      [
        '- name: steady',
        '  n: 1',
        `  replay: ${join(DEMO_DIR, 'trajectories/correct-fix.json')}`,
        '- name: lucky',
        '  n: 1',
        `  replay: [${relative(dirname(file), join(DEMO_DIR, 'trajectories/plausible-wrong-fix.json'))}]`,
        '',
      ].join('\n'),
    );
  });
  afterAll(() => rmSync(dirname(repo), { recursive: true, force: true }));

  it('runs every policy of the file, n their sum, each candidate with its configuration', async () => {
    const task = demoTask();
    const out = join(dirname(repo), 'job.json');
    const { code, stderr } = await runSolve([
      '--repo',
      repo,
      '--issue',
      task.problem_statement,
      '--policies',
      file,
      '--test-command',
      task.test_command,
      ...task.fail_to_pass.flatMap((id) => ['--fail-to-pass', id]),
      ...task.pass_to_pass.flatMap((id) => ['--pass-to-pass', id]),
      '--test-patch',
      join(DEMO_DIR, 'test_patch.diff'),
      '--no-regression',
      '--out',
      out,
    ]);
    expect(code, stderr).toBe(0);
    expect(stderr).toContain('rollout 0 started (steady)');
    expect(stderr).toContain('rollout 1 started (lucky)');
    const job = JSON.parse(readFileSync(out, 'utf8'));
    expect(job.result.rollouts).toMatchObject({ planned: 2, finished: 2 });
    expect(job.result.candidates.map((c: { config: { run: string } }) => c.config.run)).toEqual(['steady', 'lucky']);
    expect(job.result.candidates.map((c: { verify_status: string }) => c.verify_status)).toEqual(['resolved', 'unresolved']);
    expect(job.result.chosen.index).toBe(0);
  }, 120_000);

  it("refuses an n that is not the policies' sum, naming it, with exit code 2", async () => {
    const { code, stderr } = await runSolve(['--repo', repo, '--issue', 'x', '--policies', file, '--n', '3']);
    expect(code).toBe(2);
    expect(stderr).toContain('n (3) must equal the sum of policies[].n (2)');
  }, 60_000);
});
