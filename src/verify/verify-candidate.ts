/**
 * Verifies one candidate patch in a sandbox the caller provides. The sandbox must be FRESH (the
 * task's repository at its base commit, nothing else applied) and the caller owns it: it creates
 * it before and closes it after (`verifyMany` does both). Every outcome is recorded in the
 * returned VerifyResult; only cancellation throws (WNW_ERR_OP_ABORTED).
 *
 * Steps: apply the candidate patch (not applying, empty, or refused by the patch rules of
 * src/sandbox/patch-rules.ts ⇒ `apply_failed`); put the tests in place (test-setup.ts: by
 * default restore the files the task's test patch touches and the files defining the listed tests
 * to the base commit and apply the test patch, failure ⇒ `error`; with `harnessCompat`, as the
 * SWE-bench harness does); run the task's test command or one built from its test ids,
 * with stderr merged into stdout and a timeout (⇒ `timeout`); parse the log; grade against
 * FAIL_TO_PASS / PASS_TO_PASS.
 *
 * verifyMany verifies many candidates of one task, each in its own fresh sandbox, with bounded
 * concurrency. It owns those sandboxes: it creates each from `{ repo: task.repo, image: task.image }`
 * and closes it whatever happens. A candidate whose sandbox cannot be created, or whose
 * verification fails unexpectedly, gets its own VerifyResult with status `error`; the batch only
 * rejects (WNW_ERR_OP_ABORTED) when the signal fires, and then only after every sandbox it opened
 * is closed.
 */
import pLimit from 'p-limit';
import { throwIfAborted, toWinnowerError } from '../errors.js';
import type { Sandbox, SandboxProvider } from '../sandbox/types.js';
import type { Task } from '../types/task.js';
import { OTHER_FAILED_SHOWN, type TestStatus, VerifyResult } from '../types/verify.js';
import { applyCandidatePatch, rethrowIfAborted } from './apply-candidate.js';
import { type ParserName, detectParser } from './detect.js';
import { gradeTests } from './grade.js';
import { parseTestLog } from './parse-log.js';
import { parseExitCode } from './parsers/exit-code.js';
import { buildTestCommand } from './test-command.js';
import { procedureNote, setUpTests } from './test-setup.js';

export interface VerifyCandidateOptions {
  /** Limit for the test command (default 30 minutes, the SWE-bench harness's). */
  testTimeoutMs?: number;
  signal?: AbortSignal;
  /** Log parser name (pytest, django, sympy, unittest, exit-code); detected from the task when absent. */
  parser?: string;
  /** Bytes of the log kept in `log_tail` (default 8 KiB). */
  logTailBytes?: number;
  /** Cap on the test command's output held in memory (default 32 MiB). */
  maxLogBytes?: number;
  /**
   * The base run: no candidate patch (the candidate's is ignored), only the test patch, so the
   * listed tests' outcomes on the unfixed code show what the environment can run (a base that
   * collects nothing cannot grade anyone; docs/verify.md#the-base-run).
   */
  baseline?: boolean;
  /**
   * Put the tests in place as the SWE-bench harness does (one `git checkout` of the test patch's
   * existing files, a test patch that fails to apply does not stop the run) instead of winnower's
   * stricter procedure (docs/verify.md#two-procedures-for-the-test-files).
   */
  harnessCompat?: boolean;
}

export interface Candidate {
  id: string;
  patch: string;
}

export const DEFAULT_TEST_TIMEOUT_MS = 30 * 60_000;
export const DEFAULT_LOG_TAIL_BYTES = 8 * 1024;
export const DEFAULT_MAX_LOG_BYTES = 32 * 1024 * 1024;

/** Runs the candidate's tests in `sandbox` (fresh, owned by the caller) and grades them. */
export async function verifyCandidate(
  sandbox: Sandbox,
  task: Task,
  candidate: Candidate,
  options: VerifyCandidateOptions = {},
): Promise<VerifyResult> {
  const started = performance.now();
  const { signal } = options;
  throwIfAborted(signal);
  let parser: ParserName | string = options.parser ?? 'pytest';
  const base = {
    trajectory_id: candidate.id,
    instance_id: task.instance_id,
    applied: false,
    tests: {} as Record<string, TestStatus>,
    fail_to_pass: { passed: 0, failed: 0, missing: 0 },
    pass_to_pass: { passed: 0, failed: 0, missing: 0 },
    resolved: false,
    exit_code: null as number | null,
    timed_out: false,
    log_tail: '',
  };
  const finish = (fields: Partial<VerifyResult> & Pick<VerifyResult, 'status'>): VerifyResult =>
    VerifyResult.parse({ ...base, parser, ...fields, duration_ms: Math.round(performance.now() - started) });

  try {
    parser = detectParser(task, options.parser);

    // 1. the candidate patch (the base run applies none)
    if (!options.baseline) {
      const applied = await applyCandidatePatch(sandbox, candidate.patch, signal);
      if (applied.status !== 'applied') return finish(applied);
      if (applied.note) Object.assign(base, { submodules_left_out: applied.dropped, apply_note: applied.note });
    }
    base.applied = true;

    // 2. the test files and the test patch, by winnower's procedure or the harness's (test-setup.ts)
    const procedure = options.harnessCompat ? 'harness' : 'winnower';
    const differs = options.baseline ? undefined : procedureNote(task, candidate.patch, parser, procedure);
    const setup = await setUpTests(sandbox, task, parser, procedure, signal);
    const notes = [...setup.notes, ...(differs ? [differs] : [])];
    Object.assign(base, {
      ...(options.harnessCompat ? { procedure } : {}),
      ...(notes.length > 0 ? { procedure_note: notes.join('; ') } : {}),
      ...(setup.testPatchError ? { apply_error: setup.testPatchError } : {}),
    });
    if (setup.error) return finish({ status: 'error', error: setup.error });

    // 3. the tests
    const command = task.test_command ?? buildTestCommand(task, parser as ParserName);
    throwIfAborted(signal);
    const run = await sandbox.exec(`exec 2>&1\n${command}`, {
      timeoutMs: options.testTimeoutMs ?? DEFAULT_TEST_TIMEOUT_MS,
      maxOutputBytes: options.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES,
      ...(signal ? { signal } : {}),
    });
    throwIfAborted(signal);
    const log = run.stderr === '' ? run.stdout : `${run.stdout}\n${run.stderr}`;
    base.exit_code = run.exitCode;
    base.log_tail = tailOf(log, options.logTailBytes ?? DEFAULT_LOG_TAIL_BYTES);

    // 4. parse and grade
    // Harness markers count only when the test command prints them; otherwise the code under test
    // could print a section of its own and hide the runner's real results outside it.
    const markers = command.includes('>>>>> Start Test Output');
    const parsed = parseTestLog(
      log,
      parser,
      { exitCode: run.exitCode, testIds: [...task.fail_to_pass, ...task.pass_to_pass] },
      { markers },
    );
    const timedOut = run.timedOut || parsed.section.timedOut;
    // 126/127: the shell could not run the command; with nothing named by a runner, that is not a test verdict.
    const named = parser === 'exit-code' ? 0 : parsed.tests.size;
    const notStarted = named === 0 && (run.exitCode === 126 || run.exitCode === 127);
    // A log in which the parser finds no test at all is not this parser's runner (a Go, C, JS or
    // shell suite read as pytest): every listed test would be `missing` and a correct patch
    // unresolved, so the exit status decides instead, and the result says so (docs/verify.md).
    const listedIds = [...task.fail_to_pass, ...task.pass_to_pass];
    const byExitCode = parser !== 'exit-code' && named === 0 && listedIds.length > 0 && run.exitCode !== null && !timedOut && !notStarted;
    const graded = byExitCode ? parseExitCode(log, { exitCode: run.exitCode, testIds: listedIds }) : parsed.tests;
    const grading =
      parser === 'exit-code'
        ? { grading: 'exit-code' as const, grading_reason: 'the exit-code parser was asked for' }
        : byExitCode
          ? {
              grading: 'exit-code' as const,
              grading_reason: `the ${parser} parser found no test in the log; every listed test took exit code ${run.exitCode}`,
            }
          : {};
    const grade = gradeTests({
      tests: graded,
      failToPass: task.fail_to_pass,
      passToPass: task.pass_to_pass,
      exitCode: run.exitCode,
      timedOut,
    });
    const tests = Object.fromEntries([...graded, ...grade.listed]);
    const fields = {
      ...grading,
      tests,
      fail_to_pass: grade.fail_to_pass,
      pass_to_pass: grade.pass_to_pass,
      timed_out: timedOut,
      other_failed: grade.other_failed.slice(0, OTHER_FAILED_SHOWN),
      other_failed_count: grade.other_failed.length,
    };
    if (notStarted) return finish({ ...fields, status: 'error', error: `the test command could not be started (exit ${run.exitCode})` });
    return finish({
      ...fields,
      status: grade.status,
      resolved: grade.resolved,
      ...(run.truncated ? { error: 'test output exceeded the cap and was cut; later results are missing' } : {}),
    });
  } catch (error) {
    const failure = rethrowIfAborted(error, signal);
    return finish({ status: 'error', error: `${failure.code}: ${failure.message}` });
  }
}

/** The last `bytes` bytes of `text`, cut at a character boundary. */
export function tailOf(text: string, bytes: number): string {
  const buffer = Buffer.from(text, 'utf8');
  if (buffer.length <= bytes) return text;
  let start = buffer.length - bytes;
  // Skip UTF-8 continuation bytes so the tail starts on a whole character.
  while (start < buffer.length && (buffer[start]! & 0xc0) === 0x80) start += 1;
  return buffer.subarray(start).toString('utf8');
}

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
      let closeError: string | undefined;
      try {
        result = await verifyCandidate(sandbox, task, candidate, { ...candidateOptions, ...(signal ? { signal } : {}) });
      } finally {
        // A failed close must not lose the verdict; it is noted on the result instead.
        await sandbox.close().catch((error: unknown) => {
          const failure = toWinnowerError(error);
          closeError = `sandbox close failed: ${failure.code}: ${failure.message}`;
        });
      }
      if (closeError) result = { ...result, error: result.error ? `${result.error}; ${closeError}` : closeError };
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
    other_failed: [],
    other_failed_count: 0,
    timed_out: false,
    duration_ms: Math.max(0, Math.round(durationMs)),
    log_tail: '',
    error: message,
  };
}
