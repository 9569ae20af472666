/**
 * Integration: Harbor's verifier protocol on the real local provider. The example task's code is a
 * checkout bound at the task's workdir (/app); tests/ goes to /tests, the reward file to
 * /logs/verifier; the reward decides, never the exit code.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readHarborTask } from '../../src/formats/harbor/read-task.js';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import type { SandboxSpec } from '../../src/sandbox/types.js';
import { verifyHarborCandidate } from '../../src/verify/harbor-verifier.js';
import { EXAMPLE_STATS_PY, FIXED_STATS_PY, writeExampleTask } from '../formats/harbor/example-task.js';
import { commitRepo, stagedDiff } from '../support/git-fixture.js';

const bwrap = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'].find((path) => existsSync(path));
const sandboxPython = ['/usr/bin/python3', '/usr/local/bin/python3'].some(
  (path) => existsSync(path) && spawnSync(path, ['--version']).status === 0,
);
const skipReason = !bwrap
  ? 'bubblewrap is not installed (apt-get install -y bubblewrap)'
  : !sandboxPython
    ? 'no python3 in /usr/bin or /usr/local/bin for the sandbox'
    : undefined;

/** A test.sh that writes `reward` (a shell snippet) and exits with `exit`. */
const script = (body: string) => `#!/bin/bash\ncd /app\n${body}\n`;

describe.skipIf(skipReason !== undefined)(`Harbor verifier on the local provider${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  const provider = createLocalProvider({ logger: { info: () => undefined, warn: () => undefined } });
  let root: string;
  let spec: SandboxSpec;
  let good: string;
  let wrong: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'harbor-verify-'));
    const repo = join(root, 'repo');
    mkdirSync(repo);
    commitRepo(repo, { 'stats.py': EXAMPLE_STATS_PY }, 'the task code');
    good = stagedDiff(repo, join(root, 'good'), { 'stats.py': FIXED_STATS_PY });
    wrong = stagedDiff(repo, join(root, 'wrong'), { 'stats.py': EXAMPLE_STATS_PY.replace('xs = sorted(xs)', 'xs = list(xs)') });
    spec = { repo: { path: repo }, workdir: '/app', network: false };
  });
  afterAll(async () => {
    await provider.close();
    rmSync(root, { recursive: true, force: true });
  });

  const taskWith = (files: Record<string, string> = {}) => readHarborTask(writeExampleTask(files));

  it('resolves the fix (reward 1), not the wrong patch (reward 0), and keeps the reward as evidence', async () => {
    const task = taskWith();
    const [fixed, broken] = await Promise.all([
      verifyHarborCandidate(provider, spec, task, { id: 'good', patch: good }),
      verifyHarborCandidate(provider, spec, task, { id: 'wrong', patch: wrong }),
    ]);
    expect(fixed).toMatchObject({ status: 'resolved', resolved: true, applied: true, parser: 'harbor-reward', exit_code: 0 });
    expect(fixed.reward).toEqual({ file: 'reward.json', rewards: { reward: 1 }, value: 1, threshold: 1 });
    expect(broken).toMatchObject({ status: 'unresolved', resolved: false, applied: true });
    expect(broken.reward?.value).toBe(0);
    expect(broken.log_tail).toContain('AssertionError');
  }, 120_000);

  it('ignores the exit code: a failing script with reward 1 resolves, a passing one with reward 0 does not', async () => {
    const failing = taskWith({ 'tests/test.sh': script('echo 1 > /logs/verifier/reward.txt\nexit 3') });
    const passing = taskWith({ 'tests/test.sh': script('echo 0 > /logs/verifier/reward.txt\nexit 0') });
    const [a, b] = await Promise.all([
      verifyHarborCandidate(provider, spec, failing, { id: 'a', patch: good }),
      verifyHarborCandidate(provider, spec, passing, { id: 'b', patch: good }),
    ]);
    expect(a).toMatchObject({ status: 'resolved', exit_code: 3, reward: { file: 'reward.txt', value: 1 } });
    expect(b).toMatchObject({ status: 'unresolved', exit_code: 0, reward: { value: 0 } });
  }, 120_000);

  it('holds the reward to the threshold given', async () => {
    const half = taskWith({ 'tests/test.sh': script('echo \'{"reward": 0.5, "style": 1}\' > /logs/verifier/reward.json') });
    const [strict, lenient] = await Promise.all([
      verifyHarborCandidate(provider, spec, half, { id: 'strict', patch: good }),
      verifyHarborCandidate(provider, spec, half, { id: 'lenient', patch: good }, { threshold: 0.5 }),
    ]);
    expect(strict).toMatchObject({ status: 'unresolved', reward: { value: 0.5, threshold: 1, rewards: { reward: 0.5, style: 1 } } });
    expect(lenient).toMatchObject({ status: 'resolved', reward: { value: 0.5, threshold: 0.5 } });
  }, 120_000);

  it('a malformed or missing reward is a check that could not run (error), not a failure', async () => {
    const malformed = taskWith({ 'tests/test.sh': script('echo "{reward: yes}" > /logs/verifier/reward.json') });
    const missing = taskWith({ 'tests/test.sh': script('echo ran') });
    const [a, b] = await Promise.all([
      verifyHarborCandidate(provider, spec, malformed, { id: 'a', patch: good }),
      verifyHarborCandidate(provider, spec, missing, { id: 'b', patch: good }),
    ]);
    expect(a).toMatchObject({ status: 'error', resolved: false, error: 'the verifier could not be graded: reward.json is not JSON' });
    expect(a.reward).toBeUndefined();
    // The evidence names the file that was wrong and the threshold it was held to.
    expect(a.reward_unread).toEqual({ file: 'reward.json', threshold: 1 });
    expect(b).toMatchObject({
      status: 'error',
      error: 'the verifier could not be graded: the verifier wrote neither reward.json nor reward.txt',
      reward_unread: { file: null, threshold: 1 },
    });
  }, 120_000);

  it('runs test.sh in the workdir with [verifier] env, under its time limit; an empty patch does not apply', async () => {
    const env = taskWith({
      'task.toml': '[verifier]\ntimeout_sec = 60\n[verifier.env]\nWANT = "yes"\n',
      'tests/test.sh': script(
        'pwd; [ "$WANT" = yes ] && [ -x /tests/test.sh ] && [ -f /tests/test_stats.py ] && echo 1 > /logs/verifier/reward.txt',
      ),
    });
    const slow = taskWith({
      'task.toml': '[verifier]\ntimeout_sec = 1\n',
      'tests/test.sh': script('sleep 30; echo 1 > /logs/verifier/reward.txt'),
    });
    const kept = mkdtempSync(join(tmpdir(), 'harbor-kept-'));
    const [withEnv, timedOut, empty] = await Promise.all([
      verifyHarborCandidate(provider, spec, env, { id: 'env', patch: good }, { keepLogsIn: kept }),
      verifyHarborCandidate(provider, spec, slow, { id: 'slow', patch: good }),
      verifyHarborCandidate(provider, spec, env, { id: 'empty', patch: '' }),
    ]);
    expect(withEnv).toMatchObject({ status: 'resolved' });
    expect(withEnv.log_tail).toContain('/app');
    expect(readFileSync(join(kept, 'reward.txt'), 'utf8')).toBe('1\n');
    expect(readFileSync(join(kept, 'test-stdout.txt'), 'utf8')).toContain('/app');
    expect(timedOut).toMatchObject({ status: 'timeout', timed_out: true });
    expect(empty).toMatchObject({ status: 'apply_failed', apply_error: 'candidate patch is empty' });
  }, 120_000);
});
