/**
 * Group signals for the learned selector: per candidate, facts a per-candidate value model cannot
 * see because they need the other candidates of the instance (agreement, relative size) or sit
 * outside the model's input (issue mentions, trajectory facts, test outcomes). Every signal is a
 * plain number; `learned.ts` standardises and weighs them.
 */
import type { Task } from '../types/index.js';
import type { FileDiff } from './patch-shape.js';
import type { Prepared, PreparedInstance } from './prepare.js';
import { logit } from '../util/logistic.js';
import { isTestPath } from './test-path.js';
import { couldNotRun } from '../verify/outcome.js';
import type { SignalName } from '../types/selector.js';

export { SIGNALS, type SignalName } from '../types/selector.js';
export type Signals = Record<SignalName, number>;

/** Signals that only trajectories or verification provide (absent from patch-only training data). */
export const TRAJECTORY_SIGNALS: readonly SignalName[] = ['traj_steps', 'traj_ran_tests', 'traj_last_test_passed', 'traj_submitted'];
export const VERIFY_SIGNALS: readonly SignalName[] = ['verify_ran', 'verify_resolved', 'verify_f2p', 'verify_p2p', 'verify_broken'];
/** Signals only a solve job's execution checks provide (regression check, reproduction tests). */
export const CHECK_SIGNALS: readonly SignalName[] = ['check_regressed', 'check_repro_share'];

const DEBUG_LINE =
  /\bprint\(|console\.(log|debug)\(|System\.out\.print|\bpdb\.set_trace|\bbreakpoint\(\)|\bdebugger;|fmt\.Print(ln|f)?\(|\bdbg!\(/;
const TEST_COMMAND =
  /\b(pytest|py\.test|unittest|tox|nox|runtests\.py|bin\/test|npm (run )?test|yarn test|jest|vitest|mocha|go test|cargo test|mvn( -\S+)* test|gradle(w)? test|rspec|phpunit)\b/;
const TEST_FAILED = /\b(FAILED|FAIL:|ERROR:|\d+ failed|Traceback \(most recent call last\)|AssertionError|BUILD FAILURE|Tests? failed)\b/;
const TEST_PASSED = /\b(\d+ passed|OK\b|PASSED|Tests? passed|BUILD SUCCESS|ok\s+\S+\s+[\d.]+s)\b/;
const IDENTIFIER = /[A-Za-z_][A-Za-z0-9_]{3,}/g;

export { isTestPath };

function pathOf(file: FileDiff): string {
  return file.newPath ?? file.oldPath ?? '';
}

/** Changed lines as `path\0op\0text`, for agreement between candidates. */
function changedLineSet(p: Prepared): Set<string> {
  const lines = new Set<string>();
  if (p.shape.kind !== 'ok') return lines;
  for (const file of p.shape.files) {
    for (const hunk of file.hunks) {
      for (const line of hunk)
        if (line.op !== ' ' && line.text.trim() !== '') lines.add(`${pathOf(file)}\0${line.op}\0${line.text.trim()}`);
    }
  }
  return lines;
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let shared = 0;
  for (const item of a) if (b.has(item)) shared++;
  return shared / (a.size + b.size - shared);
}

function mean(values: number[]): number {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0;
}

function trajectorySignals(p: Prepared): Pick<Signals, 'traj_steps' | 'traj_ran_tests' | 'traj_last_test_passed' | 'traj_submitted'> {
  const { messages, exit } = p.candidate.trajectory;
  if (messages.length === 0) return { traj_steps: 0, traj_ran_tests: 0, traj_last_test_passed: 0, traj_submitted: 0 };
  let ranTests = 0;
  let lastPassed = 0;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== 'assistant') continue;
    const action = [message.content, ...(message.tool_calls ?? []).map((call) => call.function.arguments)].join('\n');
    if (!TEST_COMMAND.test(action)) continue;
    ranTests = 1;
    const output = messages.slice(i + 1).find((next) => next.role === 'tool' || next.role === 'user')?.content ?? '';
    lastPassed = TEST_FAILED.test(output) ? -1 : TEST_PASSED.test(output) ? 1 : 0;
  }
  const steps = messages.filter((message) => message.role === 'assistant').length;
  return {
    traj_steps: Math.log1p(steps),
    traj_ran_tests: ranTests,
    traj_last_test_passed: lastPassed,
    traj_submitted: exit === 'submitted' ? 1 : 0,
  };
}

function verifySignals(p: Prepared): Pick<Signals, 'verify_ran' | 'verify_resolved' | 'verify_f2p' | 'verify_p2p' | 'verify_broken'> {
  const result = p.candidate.verify;
  // A run that could not run (timeout, error) is no evidence about the patch: it reads as no run.
  if (!result || couldNotRun(result.status)) return { verify_ran: 0, verify_resolved: 0, verify_f2p: 0, verify_p2p: 0, verify_broken: 0 };
  const share = (tally: { passed: number; failed: number; missing: number }) => {
    const total = tally.passed + tally.failed + tally.missing;
    return total ? tally.passed / total : result.resolved ? 1 : 0;
  };
  return {
    verify_ran: 1,
    verify_resolved: result.status === 'resolved' ? 1 : 0,
    verify_f2p: share(result.fail_to_pass),
    verify_p2p: share(result.pass_to_pass),
    verify_broken: result.status === 'apply_failed' ? 1 : 0,
  };
}

/** 1 when the regression check found a test the candidate broke; the share of valid reproduction tests it passes (0 without them). */
function checkSignals(p: Prepared): Pick<Signals, 'check_regressed' | 'check_repro_share'> {
  const checks = p.checks;
  if (!checks) return { check_regressed: 0, check_repro_share: 0 };
  return {
    check_regressed: checks.regressions !== null && checks.regressions > 0 ? 1 : 0,
    check_repro_share: checks.repro_total > 0 ? checks.repro_passed / checks.repro_total : 0,
  };
}

/** Signals of every candidate of `instance`, in its order. */
export function computeSignals(instance: PreparedInstance, task?: Pick<Task, 'problem_statement'>): Signals[] {
  const issue = task?.problem_statement ?? '';
  const issueLower = issue.toLowerCase();
  const issueWords = new Set((issue.match(IDENTIFIER) ?? []).map((word) => word.toLowerCase()));
  const usable = instance.candidates.filter((p) => p.usable);
  const lineSets = new Map(usable.map((p) => [p.id, changedLineSet(p)]));
  const fileSets = new Map(usable.map((p) => [p.id, new Set(p.normalized?.files ?? [])]));
  const sizes = new Map(usable.map((p) => [p.id, Math.log1p(p.changedLines)]));
  const meanSize = mean([...sizes.values()]);
  const meanFiles = mean(usable.map((p) => p.normalized?.files.length ?? 0));
  const logits = new Map(usable.filter((p) => p.value !== null).map((p) => [p.id, logit(p.value!)]));
  const meanLogit = mean([...logits.values()]);

  return instance.candidates.map((p): Signals => {
    const others = usable.filter((other) => other.id !== p.id);
    const lines = lineSets.get(p.id);
    const files = p.shape.kind === 'ok' ? p.shape.files : [];
    const paths = files.map(pathOf);
    const sourcePaths = paths.filter((path) => !isTestPath(path));
    const mentioned = sourcePaths.filter((path) => {
      const lower = path.toLowerCase();
      const base = lower.split('/').pop() ?? lower;
      return issueLower.includes(lower) || (base.includes('.') && issueLower.includes(base));
    }).length;
    const identifiers = new Set<string>();
    let debug = 0;
    for (const file of files) {
      if (isTestPath(pathOf(file))) continue;
      for (const hunk of file.hunks) {
        for (const line of hunk) {
          if (line.op === ' ') continue;
          for (const word of line.text.match(IDENTIFIER) ?? []) identifiers.add(word.toLowerCase());
          if (line.op === '+' && DEBUG_LINE.test(line.text)) debug = 1;
        }
      }
    }
    const named = [...identifiers].filter((word) => issueWords.has(word)).length;
    const size = sizes.get(p.id);
    const ownLogit = logits.get(p.id);
    return {
      value_rel: ownLogit === undefined ? 0 : ownLogit - meanLogit,
      has_value: ownLogit === undefined ? 0 : 1,
      cluster_share: p.usable && others.length ? ((p.clusterSize ?? 1) - 1) / others.length : 0,
      line_agreement: lines && others.length ? mean(others.map((other) => jaccard(lines, lineSets.get(other.id)!))) : 0,
      file_agreement: p.usable && others.length ? mean(others.map((other) => jaccard(fileSets.get(p.id)!, fileSets.get(other.id)!))) : 0,
      size_rel: size === undefined ? 0 : size - meanSize,
      size_rank:
        size === undefined || others.length === 0 ? 0 : others.filter((other) => sizes.get(other.id)! < size).length / others.length,
      files_rel: p.usable ? paths.length - meanFiles : 0,
      issue_files: sourcePaths.length ? mentioned / sourcePaths.length : 0,
      issue_identifiers: identifiers.size ? named / identifiers.size : 0,
      tests_only: paths.length > 0 && sourcePaths.length === 0 ? 1 : 0,
      touches_tests: sourcePaths.length < paths.length ? 1 : 0,
      new_files: Math.log1p(files.filter((file) => file.oldPath === null && !isTestPath(pathOf(file))).length),
      debug_output: debug,
      ...trajectorySignals(p),
      ...verifySignals(p),
      ...checkSignals(p),
    };
  });
}
