/**
 * The regression check's comparison: tests that passed in both runs on the base commit and do not
 * pass with a candidate are its regressions; tests whose two base runs disagree are flaky and
 * ignored. A test absent from a candidate run that finished (an import broken by the patch) is a
 * regression too; one absent from a run that timed out is not (it may simply not have been reached),
 * and one the candidate's own patch deleted or renamed is listed as removed, not as a regression.
 */
import type { Regression, RemovedTest } from '../types/checks.js';
import type { TestStatus } from '../types/verify.js';
import { type PatchRemovals, removedByPatch } from './removed-tests.js';

const PASSING: ReadonlySet<TestStatus> = new Set(['passed', 'xfail']);

export interface BaseOutcomes {
  /** Passed in both base runs (and not flaky). */
  passed: Set<string>;
  flaky: string[];
}

/** Flaky tests and stable passes from two base runs of the same command. */
export function compareBaseRuns(first: Map<string, TestStatus>, second: Map<string, TestStatus>): BaseOutcomes {
  const flaky: string[] = [];
  const passed = new Set<string>();
  for (const id of new Set([...first.keys(), ...second.keys()])) {
    const a = first.get(id) ?? 'missing';
    const b = second.get(id) ?? 'missing';
    if (PASSING.has(a) !== PASSING.has(b)) flaky.push(id);
    else if (PASSING.has(a)) passed.add(id);
  }
  return { passed, flaky: flaky.sort() };
}

/**
 * The candidate's regressions against `base`; `timedOut`: the candidate's run did not finish;
 * `removals`: what the candidate's patch deleted (tests missing for that reason are `removed`,
 * and not compared).
 */
export function findRegressions(
  base: BaseOutcomes,
  candidate: Map<string, TestStatus>,
  timedOut: boolean,
  removals: PatchRemovals = { files: new Set(), names: new Map() },
): { regressions: Regression[]; removed: RemovedTest[]; compared: number } {
  const regressions: Regression[] = [];
  const missing = [...base.passed].filter((id) => !candidate.has(id));
  const removed = timedOut ? [] : removedByPatch(missing, removals);
  const removedIds = new Set(removed.map((entry) => entry.test));
  let compared = 0;
  for (const id of base.passed) {
    const outcome = candidate.get(id);
    if (outcome === undefined && (timedOut || removedIds.has(id))) continue;
    compared += 1;
    if (outcome === undefined) regressions.push({ test: id, base: 'passed', candidate: 'missing' });
    else if (!PASSING.has(outcome) && outcome !== 'skipped') regressions.push({ test: id, base: 'passed', candidate: outcome });
  }
  return { regressions: regressions.sort((a, b) => a.test.localeCompare(b.test)), removed, compared };
}
