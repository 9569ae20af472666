/**
 * The harness side of the CLI as a user runs it (child processes): `demo --harness pi` runs the
 * real pi CLI on recorded answers when it is installed and says how to install it when not;
 * `solve --harness` refuses an unknown or missing harness naming the fix, and hands a harness
 * that speaks Anthropic Messages the policy flags as an Anthropic server.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarnessCatalog } from '../../src/rollout/harness/harness-catalog.js';
import { prepareDemoRepo } from '../../src/cli/demo-repo.js';
import { startFakeHarnessPolicy, type FakeHarnessPolicy } from '../fakes/fake-harness-policy.js';
import { commandsOf, DEMO_DIR, demoRecordings, demoTask, hasBubblewrap } from '../solve/helpers.js';
import { runCli } from '../support/cli.js';

const empty = mkdtempSync(join(tmpdir(), 'wnw-no-harnesses-'));
const status = (name: string) =>
  createHarnessCatalog()
    .list()
    .find((harness) => harness.name === name)!;
const skipNote = (name: string) =>
  status(name).available ? '' : ` [skipped: ${status(name).reason}; install with: ${status(name).install_command}]`;

describe.skipIf(!hasBubblewrap())('winnower demo / solve --harness', () => {
  let repo: string;
  let fake: FakeHarnessPolicy;
  beforeAll(async () => {
    repo = prepareDemoRepo(join(DEMO_DIR, 'repo'));
    const fix = commandsOf(demoRecordings()['correct-fix']!).filter((command) => !command.includes('COMPLETE_TASK_AND_SUBMIT'));
    fake = await startFakeHarnessPolicy({
      'claude-fix': { tool: 'Bash', args: (command) => ({ command, description: 'step' }), commands: fix },
    });
  });
  afterAll(async () => {
    await fake?.close();
    rmSync(dirname(repo), { recursive: true, force: true });
    rmSync(empty, { recursive: true, force: true });
  });

  it('demo --harness pi says how to install pi when it is not installed', async () => {
    const { code, stdout, stderr } = await runCli(['demo', '--harness', 'pi'], {
      env: { WINNOWER_HARNESS_DIR: empty, WINNOWER_POLICY_URL: '' },
    });
    expect(code).toBe(1);
    expect(stderr).toContain('@mariozechner/pi-coding-agent@0.73.1 is not installed');
    expect(stderr).toContain('harness install pi');
    expect(stdout).toBe('');
  }, 60_000);

  it.skipIf(!status('pi').available)(
    `[harness-cli] demo --harness pi runs the real pi CLI on the recorded answers${skipNote('pi')}`,
    async () => {
      const { code, stdout, stderr } = await runCli(['demo', '--harness', 'pi'], { env: { WINNOWER_POLICY_URL: '' }, timeoutMs: 180_000 });
      expect(code, stderr).toBe(0);
      expect(stdout).toContain('the pi CLI in each sandbox');
      expect(stdout).toMatch(/1\s+correct-fix\s+6\s+\S+\s+resolved\s+3\/3\s+5\/5\s+none\s+✔/);
    },
    180_000,
  );

  it('solve --harness refuses an unknown harness and a missing CLI, naming the fix', async () => {
    const base = ['solve', '--repo', repo, '--issue', 'x', '--n', '1', '--replay', join(DEMO_DIR, 'harnesses/pi/correct-fix.json')];
    const unknown = await runCli([...base, '--harness', 'no-such-agent'], { env: { WINNOWER_POLICY_URL: '' } });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('WNW_ERR_HARNESS_UNKNOWN');
    expect(unknown.stderr).toContain('known: winnower, claude-code, codex, pi');
    const missing = await runCli([...base, '--harness', 'pi'], { env: { WINNOWER_HARNESS_DIR: empty, WINNOWER_POLICY_URL: '' } });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('winnower harness install pi');
    expect(missing.stderr).toContain('--harness: ');
  }, 60_000);

  it.skipIf(!status('claude-code').available)(
    `[harness-cli] solve --harness claude-code sends the policy flags as an Anthropic server${skipNote('claude-code')}`,
    async () => {
      const task = demoTask();
      const out = join(dirname(repo), 'claude-job.json');
      const { code, stderr } = await runCli(
        [
          'solve',
          '--repo',
          repo,
          '--issue',
          task.problem_statement,
          '--n',
          '1',
          '--harness',
          'claude-code',
          '--policy-url',
          fake.url,
          '--policy-model',
          'claude-fix',
          '--policy-key',
          'sk-cli-upstream',
          '--out',
          out,
          '--test-command',
          task.test_command,
          ...task.fail_to_pass.flatMap((id) => ['--fail-to-pass', id]),
          '--test-patch',
          join(DEMO_DIR, 'test_patch.diff'),
          '--no-regression',
        ],
        { env: { WINNOWER_POLICY_URL: '' }, timeoutMs: 180_000 },
      );
      expect(code, stderr).toBe(0);
      const job = JSON.parse(readFileSync(out, 'utf8'));
      expect(job.candidates[0]).toMatchObject({ status: 'finished', exit: 'submitted', verify: { status: 'resolved' } });
      expect(fake.requests.every((request) => request.path === '/v1/messages' && request.headers['x-api-key'] === 'sk-cli-upstream')).toBe(
        true,
      );
      expect(JSON.stringify(job)).not.toContain('sk-cli-upstream');
    },
    180_000,
  );
});
