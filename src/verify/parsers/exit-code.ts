/**
 * Plain exit-code mode, for test commands whose output no parser reads: exit 0 means every listed
 * test passed, anything else that every listed test failed. With no listed tests the map is empty
 * and grading decides on the exit code alone.
 */
import type { TestStatus } from '../../types/verify.js';
import type { ParseContext } from './common.js';

export function parseExitCode(_log: string, context: ParseContext = {}): Map<string, TestStatus> {
  const tests = new Map<string, TestStatus>();
  if (context.exitCode === undefined || context.exitCode === null) return tests;
  const status: TestStatus = context.exitCode === 0 ? 'passed' : 'failed';
  for (const id of context.testIds ?? []) tests.set(id, status);
  return tests;
}
