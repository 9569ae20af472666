/**
 * Runs a test command in a sandbox and reads per-test outcomes from its log (the regression check
 * and the reproduction tests): stderr merged into stdout, a time limit, a capped log. A runner
 * read by exit code only reports one test named by its command.
 */
import { throwIfAborted } from '../errors.js';
import type { Sandbox } from '../sandbox/types.js';
import type { TestStatus } from '../types/verify.js';
import type { ParserName } from './detect.js';
import { parseTestLog } from './parse-log.js';
import { DEFAULT_LOG_TAIL_BYTES, DEFAULT_MAX_LOG_BYTES, tailOf } from './verify-candidate.js';

export interface SuiteRun {
  tests: Map<string, TestStatus>;
  exit_code: number | null;
  timed_out: boolean;
  duration_ms: number;
  log: string;
  log_tail: string;
}

/** The outcome of a run graded by exit code: one test named by the command; none when it was killed. */
export function exitCodeTests(command: string, exitCode: number | null): Map<string, TestStatus> {
  return new Map<string, TestStatus>(exitCode === null ? [] : [[command, exitCode === 0 ? 'passed' : 'failed']]);
}

export async function runSuite(
  sandbox: Sandbox,
  command: string,
  parser: ParserName,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<SuiteRun> {
  throwIfAborted(options.signal);
  const run = await sandbox.exec(`exec 2>&1\n${command}`, {
    timeoutMs: options.timeoutMs,
    maxOutputBytes: DEFAULT_MAX_LOG_BYTES,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  throwIfAborted(options.signal);
  const log = run.stderr === '' ? run.stdout : `${run.stdout}\n${run.stderr}`;
  const tests =
    parser === 'exit-code'
      ? exitCodeTests(command, run.exitCode)
      : parseTestLog(log, parser, { exitCode: run.exitCode, testIds: [] }, { markers: false }).tests;
  return {
    tests,
    exit_code: run.exitCode,
    timed_out: run.timedOut,
    duration_ms: run.durationMs,
    log,
    log_tail: tailOf(log, DEFAULT_LOG_TAIL_BYTES),
  };
}
