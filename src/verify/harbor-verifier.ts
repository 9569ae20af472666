/**
 * Harbor's verifier protocol for one candidate (docs/harbor.md#verification): a fresh sandbox of
 * the task's environment with the candidate's patch applied (Harbor's separate-verifier mode: the
 * agent's sandbox is gone), the task's `tests/` at /tests and an empty /logs/verifier, both host
 * folders bound in; `/tests/test.sh` runs in the workdir with `[verifier] env` and its time
 * limit; the reward file it leaves decides. Its exit code is recorded and means nothing. A reward
 * ≥ the threshold is `resolved`, below it `unresolved`; no readable reward is `error` (the check
 * could not run), a verifier past its limit `timeout`; without a reward, `reward_unread` names the
 * file that was wrong and the threshold. Only cancellation throws.
 */
import { chmodSync, copyFileSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { throwIfAborted, wnwError } from '../errors.js';
import type { HarborTask } from '../formats/harbor/read-task.js';
import type { Sandbox, SandboxProvider, SandboxSpec } from '../sandbox/types.js';
import { type HarborReward, VerifyResult } from '../types/verify.js';
import { applyCandidatePatch, rethrowIfAborted } from './apply-candidate.js';
import { readHarborReward } from './harbor-reward.js';
import { HARBOR_PARSER } from './reward-evidence.js';
import { DEFAULT_LOG_TAIL_BYTES, DEFAULT_MAX_LOG_BYTES, tailOf, type Candidate } from './verify-candidate.js';

/** The reward a candidate must reach to count as resolved unless the request says otherwise: Harbor's "1 means solved". */
export const DEFAULT_REWARD_THRESHOLD = 1;
/** Most bytes of tests/ copied for one verification. */
export const MAX_TESTS_BYTES = 64 * 1024 * 1024;
/**
 * Per-file cap (`ulimit -f`, KiB) on what test.sh and the code under test write: /logs/verifier is
 * a host folder, outside the sandbox's own disk cap.
 */
export const VERIFIER_FILE_CAP_KIB = 64 * 1024;

export interface HarborVerifyOptions {
  /** The verifier's time limit (default: the task's `[verifier] timeout_sec`). */
  timeoutMs?: number;
  /** Reward at or above which the candidate is resolved (default DEFAULT_REWARD_THRESHOLD). */
  threshold?: number;
  signal?: AbortSignal;
  /** Bytes of the verifier's output kept in `log_tail` (default 8 KiB). */
  logTailBytes?: number;
  /** Cap on the verifier's output held in memory (default 32 MiB). */
  maxLogBytes?: number;
  /** A host folder to copy /logs/verifier into when done (the trial layout's `verifier/`). */
  keepLogsIn?: string;
}

/** Creates the sandbox from `spec` plus the two bound folders, verifies `candidate` in it, and closes it. */
export async function verifyHarborCandidate(
  provider: SandboxProvider,
  spec: SandboxSpec,
  task: Pick<HarborTask, 'name' | 'testsDir' | 'verifier'>,
  candidate: Candidate,
  options: HarborVerifyOptions = {},
): Promise<VerifyResult> {
  const { signal } = options;
  const started = performance.now();
  const threshold = options.threshold ?? DEFAULT_REWARD_THRESHOLD;
  const timeoutMs = options.timeoutMs ?? task.verifier.timeoutS * 1000;
  const base = {
    trajectory_id: candidate.id,
    instance_id: task.name,
    applied: false,
    tests: {},
    fail_to_pass: { passed: 0, failed: 0, missing: 0 },
    pass_to_pass: { passed: 0, failed: 0, missing: 0 },
    resolved: false,
    parser: HARBOR_PARSER,
    exit_code: null as number | null,
    timed_out: false,
    log_tail: '',
  };
  let unreadFile: 'reward.json' | 'reward.txt' | null = null;
  // Without a reward the evidence still says which file was wrong and the threshold it would have met.
  const finish = (fields: Partial<VerifyResult> & Pick<VerifyResult, 'status'>): VerifyResult =>
    VerifyResult.parse({
      ...base,
      ...(fields.reward ? {} : { reward_unread: { file: unreadFile, threshold } }),
      ...fields,
      duration_ms: Math.round(performance.now() - started),
    });
  throwIfAborted(signal);

  const host = mkdtempSync(join(tmpdir(), 'wnw-harbor-'));
  let sandbox: Sandbox | undefined;
  try {
    // The folder is not listable and the names inside are random, so only the sandbox writes there.
    chmodSync(host, 0o711);
    const tests = join(host, 'tests');
    const logs = join(host, 'verifier');
    copyTests(task.testsDir, tests);
    chmodSync(join(tests, 'test.sh'), 0o755);
    mkdirSync(logs);
    chmodSync(logs, 0o777);
    sandbox = await provider.create(
      {
        ...spec,
        label: `verify:${task.name}:${candidate.id}`,
        mounts: [
          ...(spec.mounts ?? []),
          { source: tests, target: '/tests', readOnly: false },
          { source: logs, target: '/logs/verifier', readOnly: false },
        ],
      },
      signal ? { signal } : {},
    );
    const applied = await applyCandidatePatch(sandbox, candidate.patch, signal);
    if (applied.status !== 'applied') return finish(applied);
    base.applied = true;

    throwIfAborted(signal);
    const run = await sandbox.exec(`exec 2>&1\nulimit -f ${VERIFIER_FILE_CAP_KIB} 2>/dev/null\n/tests/test.sh`, {
      env: task.verifier.env,
      timeoutMs,
      maxOutputBytes: options.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES,
      ...(signal ? { signal } : {}),
    });
    throwIfAborted(signal);
    const log = run.stderr === '' ? run.stdout : `${run.stdout}\n${run.stderr}`;
    base.exit_code = run.exitCode;
    base.log_tail = tailOf(log, options.logTailBytes ?? DEFAULT_LOG_TAIL_BYTES);
    if (run.timedOut) return finish({ status: 'timeout', timed_out: true, error: `the verifier ran past its ${timeoutMs / 1000} s limit` });
    // Read once the sandbox is gone: nothing in it can swap a file for a link meanwhile.
    await closeQuietly(sandbox);
    if (options.keepLogsIn) keepLogs(logs, options.keepLogsIn, log);
    const read = readHarborReward(logs);
    if (!read.ok) {
      unreadFile = read.file;
      return finish({ status: 'error', error: `the verifier could not be graded: ${read.error}` });
    }
    const reward: HarborReward = { file: read.file, rewards: read.rewards, value: read.value, threshold };
    const resolved = read.value >= threshold;
    return finish({ status: resolved ? 'resolved' : 'unresolved', resolved, reward });
  } catch (error) {
    const failure = rethrowIfAborted(error, signal);
    return finish({ status: 'error', error: `${failure.code}: ${failure.message}` });
  } finally {
    if (sandbox) await closeQuietly(sandbox);
    rmSync(host, { recursive: true, force: true });
  }
}

/** tests/ copied file by file (symbolic links refused, MAX_TESTS_BYTES in all), modes kept. */
function copyTests(from: string, to: string): void {
  let total = 0;
  const copy = (source: string, target: string, relative: string): void => {
    mkdirSync(target, { mode: 0o755 });
    for (const entry of readdirSync(source, { withFileTypes: true })) {
      const path = `${relative}${entry.name}`;
      if (entry.isDirectory()) copy(join(source, entry.name), join(target, entry.name), `${path}/`);
      else if (entry.isFile()) {
        total += lstatSync(join(source, entry.name)).size;
        if (total > MAX_TESTS_BYTES)
          throw wnwError('WNW_ERR_INPUT_TOO_LARGE', `tests/ is larger than ${MAX_TESTS_BYTES} bytes`, { details: { field: 'tests/' } });
        copyFileSync(join(source, entry.name), join(target, entry.name));
        chmodSync(join(target, entry.name), (lstatSync(join(source, entry.name)).mode & 0o777) | 0o444);
      } else
        throw wnwError('WNW_ERR_INPUT_INVALID', `tests/${path} is not a regular file or folder`, { details: { field: `tests/${path}` } });
    }
  };
  copy(from, to, '');
}

/** A failed close must not lose the verdict (close is idempotent; the sandbox registry closes what is left at shutdown). */
async function closeQuietly(sandbox: Sandbox): Promise<void> {
  await sandbox.close().catch(() => undefined);
}

/** The verifier's regular files (each within the log cap) and its output as test-stdout.txt, as Harbor keeps them. */
function keepLogs(logs: string, into: string, output: string): void {
  mkdirSync(into, { recursive: true });
  for (const entry of readdirSync(logs, { withFileTypes: true })) {
    const path = join(logs, entry.name);
    if (entry.isFile() && lstatSync(path).size <= DEFAULT_MAX_LOG_BYTES) copyFileSync(path, join(into, entry.name));
  }
  writeFileSync(join(into, 'test-stdout.txt'), output);
}
