/**
 * Verifies many candidates of one task, each in its own fresh sandbox, with bounded concurrency.
 * verifyMany owns those sandboxes: it creates each from `{ repo: task.repo, image: task.image }`
 * and closes it whatever happens. A candidate whose sandbox cannot be created, or whose
 * verification fails unexpectedly, gets its own VerifyResult with status `error`; the batch only
 * rejects (WNW_ERR_OP_ABORTED) when the signal fires, and then only after every sandbox it opened
 * is closed.
 */
import pLimit from 'p-limit';
import { throwIfAborted, toWinnowerError } from '../errors.js';
import type { SandboxProvider } from '../sandbox/types.js';
import type { Task } from '../types/task.js';
import type { VerifyResult } from '../types/verify.js';
import { detectParser } from './detect.js';
import { type Candidate, type VerifyCandidateOptions, verifyCandidate } from './verify-candidate.js';

export interface VerifyManyOptions extends VerifyCandidateOptions {
  /** How many candidates are verified at once (default 4). */
  concurrency?: number;
  /** Called as each candidate's result is ready (for progress events). */
  onResult?: (result: VerifyResult, index: number) => void;
}

export const DEFAULT_VERIFY_CONCURRENCY = 4;

/** Results in the order of `candidates`. */
export async function verifyMany(
  provider: SandboxProvider,
  task: Task,
  candidates: readonly Candidate[],
  options: VerifyManyOptions = {},
): Promise<VerifyResult[]> {
  const { concurrency = DEFAULT_VERIFY_CONCURRENCY, onResult, signal, ...candidateOptions } = options;
  throwIfAborted(signal);
  const limit = pLimit(Math.max(1, Math.floor(concurrency)));
  const parser = parserNameOf(task, options.parser);

  const one = async (candidate: Candidate, index: number): Promise<VerifyResult> => {
    throwIfAborted(signal);
    const started = performance.now();
    let result: VerifyResult;
    try {
      const sandbox = await provider.create(
        { repo: task.repo, image: task.image, label: `verify:${task.instance_id}:${candidate.id}` },
        signal ? { signal } : {},
      );
      try {
        result = await verifyCandidate(sandbox, task, candidate, { ...candidateOptions, ...(signal ? { signal } : {}) });
      } finally {
        await sandbox.close().catch(() => undefined);
      }
    } catch (error) {
      throwIfAborted(signal);
      const failure = toWinnowerError(error);
      if (failure.code === 'WNW_ERR_OP_ABORTED') throw failure;
      result = errorResult(task, candidate, `${failure.code}: ${failure.message}`, performance.now() - started, parser);
    }
    onResult?.(result, index);
    return result;
  };

  const settled = await Promise.allSettled(candidates.map((candidate, index) => limit(() => one(candidate, index))));
  throwIfAborted(signal);
  return settled.map((outcome, index) => {
    if (outcome.status === 'fulfilled') return outcome.value;
    // Not reachable unless a callback threw; keep the batch whole all the same.
    const failure = toWinnowerError(outcome.reason);
    return errorResult(task, candidates[index]!, `${failure.code}: ${failure.message}`, 0, parser);
  });
}

function parserNameOf(task: Task, override: string | undefined): string {
  try {
    return detectParser(task, override);
  } catch {
    return override ?? 'unknown';
  }
}

function errorResult(task: Task, candidate: Candidate, message: string, durationMs: number, parser: string): VerifyResult {
  return {
    trajectory_id: candidate.id,
    instance_id: task.instance_id,
    status: 'error',
    applied: false,
    tests: {},
    fail_to_pass: { passed: 0, failed: 0, missing: 0 },
    pass_to_pass: { passed: 0, failed: 0, missing: 0 },
    resolved: false,
    parser,
    exit_code: null,
    timed_out: false,
    duration_ms: Math.max(0, Math.round(durationMs)),
    log_tail: '',
    error: message,
  };
}
