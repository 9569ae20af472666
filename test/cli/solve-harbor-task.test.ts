/**
 * `winnower solve --task` (issue 32): a Harbor task written here (the demo's bug as a task folder:
 * task.toml, instruction.md, a Dockerfile with WORKDIR /app, tests/test.sh writing reward.txt)
 * runs with the demo's code as a checkout and replayed candidates; verification is Harbor's, and
 * the candidate whose reward is 1 is chosen although the value model prefers another.
 */
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareDemoRepo } from '../../src/cli/demo-repo.js';
import { writeTaskFolder } from '../formats/harbor/example-task.js';
import { DEMO_DIR, demoTask, hasBubblewrap } from '../solve/helpers.js';
import { runCli } from '../support/cli.js';

const MULTI_DIGIT_TEST = `import unittest

from durations import format_duration, parse_duration


class MultiDigitTests(unittest.TestCase):
    def test_hours_and_minutes(self):
        self.assertEqual(parse_duration("1h30m"), 5400)

    def test_three_digit_amounts(self):
        self.assertEqual(parse_duration("120m"), 7200)

    def test_round_trip_large(self):
        self.assertEqual(format_duration(parse_duration("12h45m30s")), "12h45m30s")
`;

/** The verifier: the task's tests beside the repository's own; pass all, reward 1; the exit code says nothing. */
const TEST_SH = `#!/bin/bash
cd /app
cp /tests/test_multi_digit.py tests/
if python3 -m unittest tests.test_durations tests.test_multi_digit; then r=1; else r=0; fi
echo "$r" > /logs/verifier/reward.txt
exit 0
`;

describe.skipIf(!hasBubblewrap())('winnower solve --task (a Harbor task)', () => {
  let repo: string;
  let taskDir: string;
  beforeAll(() => {
    repo = prepareDemoRepo(join(DEMO_DIR, 'repo'));
    taskDir = writeTaskFolder(
      {
        'task.toml':
          'schema_version = "1.4"\n[task]\nname = "winnower/durations"\n[verifier]\ntimeout_sec = 60.0\n[agent]\ntimeout_sec = 60.0\n[environment]\nnetwork_mode = "no-network"\n',
        'instruction.md': `<!-- harbor canary GUID 0000 -->\n\n${demoTask().problem_statement}`,
        'environment/Dockerfile': 'FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app/\n',
        'tests/test.sh': TEST_SH,
        'tests/test_multi_digit.py': MULTI_DIGIT_TEST,
      },
      join(dirname(repo), 'harbor-task'),
    );
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
    expect(job.result.selection.reason).toContain('reward 1 (resolved at ≥ 1)');
    expect(stdout).toContain('resolved');
  }, 180_000);
});
