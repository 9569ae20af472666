/**
 * Integration: verifyMany with the real local provider (bubblewrap sandboxes) on the tiny Python
 * repository: a good patch resolves, a wrong one does not, one that does not apply is recorded.
 */
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import { verifyMany } from '../../src/verify/verify-candidate.js';
import { type SampleRepo, makeSampleRepo } from './sample-repo.js';

const bwrap = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'].find((path) => existsSync(path));
/** python3 must exist where the sandbox looks (/usr/bin), not only on this user's PATH. */
const sandboxPython = ['/usr/bin/python3', '/usr/local/bin/python3'].some(
  (path) => existsSync(path) && spawnSync(path, ['--version']).status === 0,
);
const skipReason = !bwrap
  ? 'bubblewrap is not installed (apt-get install -y bubblewrap)'
  : !sandboxPython
    ? 'no python3 in /usr/bin or /usr/local/bin for the sandbox'
    : undefined;

describe.skipIf(skipReason !== undefined)(`verifyMany on the local provider${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let sample: SampleRepo;
  const provider = createLocalProvider({ logger: { info: () => undefined, warn: () => undefined } });
  beforeAll(() => {
    sample = makeSampleRepo();
  });
  afterAll(async () => {
    await provider.close();
    sample.cleanup();
  });

  it('resolves a good patch, not a wrong one, and records one that does not apply', async () => {
    const results = await verifyMany(
      provider,
      sample.task,
      [
        { id: 'good', patch: sample.patches.good },
        { id: 'wrong', patch: sample.patches.wrong },
        { id: 'non-applying', patch: sample.patches.nonApplying },
        { id: 'touches-tests', patch: sample.patches.touchesTests },
      ],
      { concurrency: 2, parser: 'unittest', testTimeoutMs: 60_000 },
    );
    expect(results.map((result) => [result.trajectory_id, result.status])).toEqual([
      ['good', 'resolved'],
      ['wrong', 'unresolved'],
      ['non-applying', 'apply_failed'],
      ['touches-tests', 'resolved'],
    ]);
    expect(results[0]).toMatchObject({
      applied: true,
      exit_code: 0,
      fail_to_pass: { passed: 1, failed: 0, missing: 0 },
      pass_to_pass: { passed: 1, failed: 0, missing: 0 },
    });
    expect(results[1]).toMatchObject({
      fail_to_pass: { passed: 0, failed: 1, missing: 0 },
      pass_to_pass: { passed: 1, failed: 0, missing: 0 },
    });
    expect(results[2]!.apply_error).toBeTruthy();
    expect(results[0]!.log_tail).toContain('Ran 2 tests');
  }, 120_000);
});
