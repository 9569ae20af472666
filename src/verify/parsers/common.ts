/**
 * What every log parser shares: the parser contract, ANSI stripping, and merging two outcomes of
 * the same test id (the worse one wins, so a pass followed by a teardown error reads as error).
 */
import type { TestStatus } from '../../types/verify.js';

/** What a parser may use besides the log text. */
export interface ParseContext {
  /** The test command's exit code (null when it was killed). */
  exitCode?: number | null;
  /** The test ids the task lists (FAIL_TO_PASS and PASS_TO_PASS). */
  testIds?: readonly string[];
}

/** Reads a test log into per-test outcomes keyed by the runner's test id. */
export type LogParser = (log: string, context?: ParseContext) => Map<string, TestStatus>;

/** Higher is worse; `missing` is never produced by a parser, only by grading. */
const SEVERITY: Record<TestStatus, number> = {
  passed: 0,
  xfail: 1,
  skipped: 2,
  missing: 3,
  xpass: 4,
  failed: 5,
  error: 6,
};

/** The worse of two outcomes for the same test. */
export function worseStatus(a: TestStatus, b: TestStatus): TestStatus {
  return SEVERITY[b] > SEVERITY[a] ? b : a;
}

/** Records `status` for `id`, keeping the worse outcome if the id was already seen. */
export function record(tests: Map<string, TestStatus>, id: string, status: TestStatus): void {
  const previous = tests.get(id);
  tests.set(id, previous === undefined ? status : worseStatus(previous, status));
}

// CSI sequences (colours, cursor moves) and OSC sequences (titles, links).
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** Splits a log into lines without ANSI escapes or carriage returns. */
export function logLines(log: string): string[] {
  return stripAnsi(log).replace(/\r\n?/g, '\n').split('\n');
}
