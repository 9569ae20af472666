/**
 * verifyCandidate and verifyMany against FakeSandbox (a test double: git clones in temp dirs,
 * commands via child_process, no isolation) and a tiny Python repository with a unittest suite.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WinnowerError, wnwError } from '../../src/errors.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import type { Task } from '../../src/types/task.js';
import { VerifyResult } from '../../src/types/verify.js';
import { tailOf, verifyCandidate, verifyMany } from '../../src/verify/verify-candidate.js';
import { describeOtherFailures, otherTestsFailed } from '../../src/verify/other-failures.js';
import { FakeProvider, FakeSandbox } from './fake-sandbox.js';
import { HAS_PYTHON, type SampleRepo, makeSampleRepo } from './sample-repo.js';

let sample: SampleRepo;
beforeAll(() => {
  sample = makeSampleRepo();
});
afterAll(() => sample.cleanup());

/** Runs verifyCandidate in a fresh FakeSandbox, closing it after. */
async function verifyIn(task: Task, patch: string, options: Parameters<typeof verifyCandidate>[3] = {}) {
  const sandbox = new FakeSandbox(sample.path, sample.baseCommit);
  try {
    const result = await verifyCandidate(sandbox, task, { id: 'cand-1', patch }, options);
    expect(VerifyResult.safeParse(result).success).toBe(true);
    return { result, sandbox };
  } finally {
    await sandbox.close();
  }
}

/** A Sandbox that delegates to `sandbox` except for the methods in `overrides`. */
function withOverrides(sandbox: Sandbox, overrides: Partial<Pick<Sandbox, 'exec' | 'applyPatch' | 'close'>>): Sandbox {
  return {
    id: sandbox.id,
    provider: sandbox.provider,
    workdir: sandbox.workdir,
    exec: overrides.exec ?? ((command, options) => sandbox.exec(command, options)),
    writeFile: (path, content, options) => sandbox.writeFile(path, content, options),
    readFile: (path, options) => sandbox.readFile(path, options),
    listFiles: (path, options) => sandbox.listFiles(path, options),
    diff: (options) => sandbox.diff(options),
    applyPatch: overrides.applyPatch ?? ((patch, options) => sandbox.applyPatch(patch, options)),
    close: overrides.close ?? (() => sandbox.close()),
  };
}

/** A task graded by exit code alone (no listed tests, shell test command). */
const shellTask = (command: string): Task => ({
  ...sample.task,
  test_command: command,
  fail_to_pass: [],
  pass_to_pass: [],
  test_patch: undefined,
});

describe.skipIf(!HAS_PYTHON)('verifyCandidate with a Python unittest suite (skipped: no `python3` on PATH)', () => {
  it('resolves a good patch, running the built unittest command', async () => {
    const { result, sandbox } = await verifyIn(sample.task, sample.patches.good, { parser: 'unittest' });
    expect(result).toMatchObject({
      trajectory_id: 'cand-1',
      instance_id: 'demo__calc-1',
      status: 'resolved',
      resolved: true,
      applied: true,
      parser: 'unittest',
      exit_code: 0,
      timed_out: false,
      fail_to_pass: { passed: 1, failed: 0, missing: 0 },
      pass_to_pass: { passed: 1, failed: 0, missing: 0 },
    });
    expect(result.tests['test_add (tests.test_ops.OpsTest)']).toBe('passed');
    expect(result.log_tail).toContain('Ran 2 tests');
    expect(result.duration_ms).toBeGreaterThan(0);
    expect(sandbox.calls.filter((call) => call === 'applyPatch')).toHaveLength(2);
    expect(
      sandbox.calls.some((call) => call.includes('python3 -m unittest -v tests.test_ops.OpsTest.test_add tests.test_ops.OpsTest.test_mul')),
    ).toBe(true);
  });

  it('uses the task test command and detects its parser', async () => {
    const task = { ...sample.task, test_command: 'python3 -m unittest -v tests.test_ops' };
    const { result } = await verifyIn(task, sample.patches.good);
    expect(result).toMatchObject({ status: 'resolved', parser: 'unittest' });
  });

  it('marks a wrong fix unresolved (F2P fails)', async () => {
    const { result } = await verifyIn(sample.task, sample.patches.wrong, { parser: 'unittest' });
    expect(result).toMatchObject({ status: 'unresolved', resolved: false, applied: true, exit_code: 1 });
    expect(result.fail_to_pass).toEqual({ passed: 0, failed: 1, missing: 0 });
    expect(result.pass_to_pass).toEqual({ passed: 1, failed: 0, missing: 0 });
  });

  it('marks a fix that breaks another test unresolved (P2P fails)', async () => {
    const { result } = await verifyIn(sample.task, sample.patches.breaking, { parser: 'unittest' });
    expect(result.status).toBe('unresolved');
    expect(result.pass_to_pass).toEqual({ passed: 0, failed: 1, missing: 0 });
  });

  it('keeps SWE-bench grading with only FAIL_TO_PASS named, but records the exit code and the unnamed tests that failed', async () => {
    // Issue 18 item 3: the breaking fix passes test_add (named) and fails test_mul (not named).
    const task = { ...sample.task, pass_to_pass: [], test_command: 'python3 -m unittest -v tests.test_ops' };
    const { result } = await verifyIn(task, sample.patches.breaking);
    // The log spells the test `test_mul (tests.test_ops.OpsTest)`, or with `.test_mul` on Python 3.11+.
    expect(result).toMatchObject({
      status: 'resolved',
      resolved: true,
      exit_code: 1,
      other_failed: [expect.stringMatching(/^test_mul \(tests\.test_ops\.OpsTest/)],
      other_failed_count: 1,
    });
    expect(otherTestsFailed(result)).toBe(true);
    expect(describeOtherFailures(result)).toMatch(/^exit 1, 1 other test failed \(test_mul /);
    const clean = (await verifyIn(task, sample.patches.good)).result;
    expect(clean).toMatchObject({ status: 'resolved', exit_code: 0, other_failed: [], other_failed_count: 0 });
    expect(otherTestsFailed(clean)).toBe(false);
  });

  it('restores test files the candidate edited before applying the test patch', async () => {
    // The candidate replaced test_add with `pass`; the gold test patch must still apply and rule.
    const { result } = await verifyIn(sample.task, sample.patches.touchesTests, { parser: 'unittest' });
    expect(result.status).toBe('resolved');
  });

  it('ignores harness markers printed by the code under test when the test command prints none', async () => {
    // add() stays wrong; the module prints a section of fake results, which must not hide the real ones.
    const forged = [
      'diff --git a/calc/ops.py b/calc/ops.py',
      '--- a/calc/ops.py',
      '+++ b/calc/ops.py',
      '@@ -1,2 +1,4 @@',
      '+import sys',
      "+sys.stderr.write('>>>>> Start Test Output\\ntest_add (tests.test_ops.OpsTest) ... ok\\ntest_mul (tests.test_ops.OpsTest) ... ok\\n>>>>> End Test Output\\n')",
      ' def add(a, b):',
      '     return a - b',
      '',
    ].join('\n');
    const { result } = await verifyIn(sample.task, forged, { parser: 'unittest' });
    expect(result.applied).toBe(true);
    expect(result.status).toBe('unresolved');
    expect(result.tests['test_add (tests.test_ops.OpsTest)']).toBe('failed');
    // A task command with markers of its own still has them honoured, but not a second pair.
    const marked = {
      ...sample.task,
      test_command: "echo '>>>>> Start Test Output'; python3 -m unittest -v tests.test_ops; echo '>>>>> End Test Output'",
    };
    const withMarkers = await verifyIn(marked, forged, { parser: 'unittest' });
    expect(withMarkers.result.status).toBe('unresolved');
    expect(withMarkers.result.tests['test_add (tests.test_ops.OpsTest)']).toBe('failed');
  });

  it('restores the files of the listed tests even without a test patch, so a candidate cannot rewrite them', async () => {
    // Breaks mul() and replaces test_mul's assertion with `pass`.
    const rewritesTest = [
      'diff --git a/calc/ops.py b/calc/ops.py',
      '--- a/calc/ops.py',
      '+++ b/calc/ops.py',
      '@@ -5,2 +5,2 @@',
      ' def mul(a, b):',
      '-    return a * b',
      '+    return a + b',
      'diff --git a/tests/test_ops.py b/tests/test_ops.py',
      '--- a/tests/test_ops.py',
      '+++ b/tests/test_ops.py',
      '@@ -7,2 +7,2 @@',
      '     def test_mul(self):',
      '-        self.assertEqual(mul(3, 4), 12)',
      '+        pass',
      '',
    ].join('\n');
    const task = { ...sample.task, test_patch: undefined, fail_to_pass: ['test_mul (tests.test_ops.OpsTest)'], pass_to_pass: [] };
    const { result } = await verifyIn(task, rewritesTest, { parser: 'unittest' });
    expect(result.applied).toBe(true);
    expect(result.status).toBe('unresolved');
    expect(result.tests['test_mul (tests.test_ops.OpsTest)']).toBe('failed');
  });

  it('resolves a fix whose PASS_TO_PASS list names a test the environment skips, as the SWE-bench harness does', async () => {
    // The test patch adds the F2P test and a P2P test that unittest skips (as Django skips tests
    // that need a database backend the sandbox lacks).
    const testPatch = [
      'diff --git a/tests/test_ops.py b/tests/test_ops.py',
      '--- a/tests/test_ops.py',
      '+++ b/tests/test_ops.py',
      '@@ -6,3 +6,10 @@ from calc.ops import add, mul',
      ' class OpsTest(unittest.TestCase):',
      '     def test_mul(self):',
      '         self.assertEqual(mul(3, 4), 12)',
      '+',
      '+    def test_add(self):',
      '+        self.assertEqual(add(2, 3), 5)',
      '+',
      "+    @unittest.skip('needs a database')",
      '+    def test_db(self):',
      "+        self.fail('never runs')",
      '',
    ].join('\n');
    const skippedP2P = 'test_db (tests.test_ops.OpsTest)';
    const task = { ...sample.task, test_patch: testPatch, pass_to_pass: ['test_mul (tests.test_ops.OpsTest)', skippedP2P] };
    const good = await verifyIn(task, sample.patches.good, { parser: 'unittest' });
    expect(good.result.tests[skippedP2P]).toBe('skipped');
    expect(good.result).toMatchObject({ status: 'resolved', pass_to_pass: { passed: 2, failed: 0, missing: 0 } });

    // The same skip among FAIL_TO_PASS shows nothing fixed: still failed.
    const asF2P = { ...task, fail_to_pass: [skippedP2P], pass_to_pass: ['test_mul (tests.test_ops.OpsTest)'] };
    const f2p = await verifyIn(asF2P, sample.patches.good, { parser: 'unittest' });
    expect(f2p.result).toMatchObject({ status: 'unresolved', fail_to_pass: { passed: 0, failed: 1, missing: 0 } });
  });

  it('reports listed tests the run never names as missing', async () => {
    const task = { ...sample.task, pass_to_pass: ['test_gone (tests.test_ops.OpsTest)'] };
    const { result } = await verifyIn(task, sample.patches.good, { parser: 'unittest', testTimeoutMs: 60_000 });
    expect(result.status).toBe('unresolved');
    expect(result.tests['test_gone (tests.test_ops.OpsTest)']).toBe('missing');
  });
});

describe('verifyCandidate outcomes that never throw', () => {
  it("records a patch that does not apply as apply_failed, with git's message, and runs nothing", async () => {
    const { result, sandbox } = await verifyIn(sample.task, sample.patches.nonApplying);
    expect(result).toMatchObject({ status: 'apply_failed', applied: false, resolved: false, exit_code: null });
    expect(result.apply_error).toMatch(/patch/i);
    expect(sandbox.calls.filter((call) => call.startsWith('exec:') && !call.includes('git apply'))).toEqual([]);
  });

  it('records an empty patch as apply_failed', async () => {
    const { result } = await verifyIn(sample.task, '  \n');
    expect(result).toMatchObject({ status: 'apply_failed', applied: false, apply_error: 'candidate patch is empty' });
  });

  it('refuses a patch that makes a symbolic link out of the repository (patch rules), applying nothing', async () => {
    // Issue 18 item 2: git apply would make the link, and a test run that never reads it passes.
    const link =
      'diff --git a/passwd b/passwd\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n+++ b/passwd\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n';
    const { result, sandbox } = await verifyIn(shellTask('exit 0'), link, { parser: 'exit-code' });
    expect(result).toMatchObject({ status: 'apply_failed', applied: false, resolved: false });
    expect(result.apply_error).toMatch(/^refused by the patch rules: .*symbolic link to "\/etc\/passwd"/);
    expect(sandbox.calls.filter((call) => call.startsWith('exec:') || call.startsWith('applyPatch'))).toEqual([]);
  });

  it('records a test patch that does not apply as error', async () => {
    const task = { ...sample.task, test_patch: sample.patches.nonApplying };
    const { result } = await verifyIn(task, sample.patches.good);
    expect(result).toMatchObject({ status: 'error', applied: true, resolved: false });
    expect(result.error).toMatch(/^test patch did not apply/);
    expect(result.apply_error).toBeTruthy();
  });

  it('grades by exit code when no tests are listed', async () => {
    expect((await verifyIn(shellTask('echo fine; exit 0'), sample.patches.good, { parser: 'exit-code' })).result).toMatchObject({
      status: 'resolved',
      exit_code: 0,
    });
    expect((await verifyIn(shellTask('echo bad >&2; exit 3'), sample.patches.good, { parser: 'exit-code' })).result).toMatchObject({
      status: 'unresolved',
      exit_code: 3,
    });
  });

  it('merges stderr into the log', async () => {
    const { result } = await verifyIn(shellTask('echo to-out; echo to-err >&2'), sample.patches.good, { parser: 'exit-code' });
    expect(result.log_tail).toBe('to-out\nto-err\n');
  });

  it('records a run past its timeout as timeout', async () => {
    const started = Date.now();
    const { result } = await verifyIn(shellTask('sleep 20'), sample.patches.good, { parser: 'exit-code', testTimeoutMs: 300 });
    expect(result).toMatchObject({ status: 'timeout', timed_out: true, resolved: false, exit_code: null });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('records a harness log with a start marker, no end marker and `Timeout error` as timeout', async () => {
    const command = "echo '>>>>> Start Test Output'; echo 't.py ..'; echo 'Timeout error: 1800 seconds exceeded.'";
    const { result } = await verifyIn({ ...shellTask(command), fail_to_pass: ['t.py::test_a'] }, sample.patches.good, { parser: 'pytest' });
    expect(result).toMatchObject({ status: 'timeout', timed_out: true, fail_to_pass: { passed: 0, failed: 0, missing: 1 } });
  });

  it('records a test runner that cannot start as error', async () => {
    const task = { ...shellTask('no-such-test-runner-xyz'), fail_to_pass: ['t.py::test_a'] };
    const { result } = await verifyIn(task, sample.patches.good, { parser: 'pytest' });
    expect(result).toMatchObject({ status: 'error', exit_code: 127 });
    expect(result.error).toMatch(/could not be started/);
    const exitCodeOnly = await verifyIn(task, sample.patches.good, { parser: 'exit-code' });
    expect(exitCodeOnly.result).toMatchObject({ status: 'error', exit_code: 127 });
  });

  it('records an unknown parser name as error', async () => {
    const { result } = await verifyIn(sample.task, sample.patches.good, { parser: 'nose' });
    expect(result.status).toBe('error');
    expect(result.error).toMatch(/WNW_ERR_INPUT_INVALID: unknown test log parser "nose"/);
  });

  it('records a sandbox failure as error', async () => {
    const sandbox = new FakeSandbox(sample.path);
    const broken = withOverrides(sandbox, {
      exec: async () => {
        throw wnwError('WNW_ERR_SBX_EXEC', 'bwrap died');
      },
      applyPatch: async () => ({ dropped: [] }),
    });
    try {
      const result = await verifyCandidate(broken, shellTask('true'), { id: 'c', patch: sample.patches.good }, { parser: 'exit-code' });
      expect(result).toMatchObject({ status: 'error', applied: true, error: 'WNW_ERR_SBX_EXEC: bwrap died' });
    } finally {
      await sandbox.close();
    }
  });

  it('keeps the last 8 KiB of the log', async () => {
    const { result } = await verifyIn(shellTask('for i in $(seq 1 3000); do echo "line $i"; done'), sample.patches.good, {
      parser: 'exit-code',
    });
    expect(Buffer.byteLength(result.log_tail)).toBeLessThanOrEqual(8 * 1024);
    expect(result.log_tail.endsWith('line 3000\n')).toBe(true);
    expect(tailOf('héllo', 4)).toBe('llo'); // never starts inside a UTF-8 character
  });
});

describe('verifyCandidate cancellation', () => {
  it('throws WNW_ERR_OP_ABORTED when the signal fires during the tests', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const sandbox = new FakeSandbox(sample.path);
    try {
      await expect(
        verifyCandidate(
          sandbox,
          shellTask('sleep 20'),
          { id: 'c', patch: sample.patches.good },
          { parser: 'exit-code', signal: controller.signal },
        ),
      ).rejects.toMatchObject({
        code: 'WNW_ERR_OP_ABORTED',
      });
    } finally {
      await sandbox.close();
    }
  });
});

describe('verifyMany', () => {
  const candidates = () => [
    { id: 'good', patch: sample.patches.good },
    { id: 'wrong', patch: sample.patches.wrong },
    { id: 'nonApplying', patch: sample.patches.nonApplying },
    { id: 'empty', patch: '' },
    { id: 'good-2', patch: sample.patches.good },
  ];

  it('verifies each candidate in its own sandbox, in order, with bounded concurrency, closing all', async () => {
    const provider = new FakeProvider();
    const seen: string[] = [];
    const task = HAS_PYTHON ? sample.task : shellTask('grep -q "a + b" calc/ops.py');
    const results = await verifyMany(provider, task, candidates(), {
      concurrency: 2,
      parser: HAS_PYTHON ? 'unittest' : 'exit-code',
      onResult: (result) => seen.push(result.trajectory_id),
    });
    expect(results.map((result) => [result.trajectory_id, result.status])).toEqual([
      ['good', 'resolved'],
      ['wrong', 'unresolved'],
      ['nonApplying', 'apply_failed'],
      ['empty', 'apply_failed'],
      ['good-2', 'resolved'],
    ]);
    expect(seen.sort()).toEqual(['empty', 'good', 'good-2', 'nonApplying', 'wrong']);
    expect(provider.created).toHaveLength(5);
    expect(provider.openCount).toBe(0);
    expect(provider.peakOpen).toBeLessThanOrEqual(2);
  });

  it('isolates a candidate whose sandbox cannot be created', async () => {
    const provider = new FakeProvider({ failCreate: (spec) => spec.label?.endsWith(':wrong') ?? false });
    const results = await verifyMany(provider, shellTask('true'), candidates().slice(0, 2), { parser: 'exit-code' });
    expect(results[0]).toMatchObject({ trajectory_id: 'good', status: 'resolved' });
    expect(results[1]).toMatchObject({ trajectory_id: 'wrong', status: 'error', parser: 'exit-code', applied: false });
    expect(results[1]!.error).toMatch(/^WNW_ERR_SBX_CREATE/);
    expect(VerifyResult.safeParse(results[1]).success).toBe(true);
  });

  it('isolates a candidate whose sandbox misbehaves, and still closes its sandbox', async () => {
    let created = 0;
    const provider = new FakeProvider({
      wrap: (sandbox) =>
        ++created === 1
          ? withOverrides(sandbox, {
              applyPatch: async () => {
                throw new TypeError('provider bug');
              },
            })
          : sandbox,
    });
    const results = await verifyMany(provider, shellTask('true'), candidates().slice(0, 2), { parser: 'exit-code', concurrency: 1 });
    expect(results[0]).toMatchObject({ trajectory_id: 'good', status: 'error', applied: false });
    expect(results[0]!.error).toMatch(/provider bug/);
    expect(results[1]).toMatchObject({ trajectory_id: 'wrong', status: 'resolved' });
    expect(provider.openCount).toBe(0);
  });

  it('keeps the result when closing a sandbox fails, and says so', async () => {
    const provider = new FakeProvider({
      wrap: (sandbox) =>
        withOverrides(sandbox, {
          close: async () => {
            await sandbox.close();
            throw wnwError('WNW_ERR_OP_INTERNAL', 'overlay busy');
          },
        }),
    });
    const [result] = await verifyMany(provider, shellTask('true'), candidates().slice(0, 1), { parser: 'exit-code' });
    expect(result).toMatchObject({ status: 'resolved', error: 'sandbox close failed: WNW_ERR_OP_INTERNAL: overlay busy' });
  });

  it('rejects with WNW_ERR_OP_ABORTED when cancelled, after closing every sandbox', async () => {
    const provider = new FakeProvider();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const run = verifyMany(provider, shellTask('sleep 20'), candidates(), {
      parser: 'exit-code',
      concurrency: 2,
      signal: controller.signal,
    });
    await expect(run).rejects.toSatisfy((error: unknown) => WinnowerError.isInstance(error) && error.code === 'WNW_ERR_OP_ABORTED');
    expect(provider.created.length).toBeGreaterThan(0);
    expect(provider.created.length).toBeLessThanOrEqual(2);
    expect(provider.openCount).toBe(0);
  });
});
