/**
 * One stored candidate as a candidate-with-evidence record (docs/formats.md#the-candidate-with-evidence-record):
 * its SWE-bench prediction row, its ATIF trajectory and one entry per check the job ran on it
 * (a Harbor task's verifier is the `harbor_reward` check, with its reward, file and threshold).
 * A check that could not run (timeout, sandbox or runner failure, nothing compared) is
 * `could_not_run`, never `failed`: it says nothing about the patch.
 */
import type { CandidateRecord, JobRecord } from '../store/types.js';
import {
  CandidateEvidence,
  type ChecksEvidence,
  EVIDENCE_FORMAT,
  type EvidenceCheck,
  type Trajectory,
  type VerifyResult,
} from '../types/index.js';
import { checkedAtif } from './atif/checked-atif.js';
import { DEFAULT_REWARD_THRESHOLD } from '../verify/harbor-verifier.js';
import { runOutcome } from '../verify/outcome.js';
import { HARBOR_PARSER, rewardEvidence } from '../verify/reward-evidence.js';

/** Regressions listed in a record at most; `details.regressions_total` says how many there were. */
const MAX_LISTED = 50;

function stringAt(value: unknown, ...keys: string[]): string | null {
  let at: unknown = value;
  for (const key of keys) at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined;
  return typeof at === 'string' && at !== '' ? at : null;
}

function numberAt(value: unknown, ...keys: string[]): number | null {
  let at: unknown = value;
  for (const key of keys) at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined;
  return typeof at === 'number' && Number.isFinite(at) ? at : null;
}

/** Why a test run did not pass, in the words of its check; `error` is the fallback when the run gives none. */
function runReason(verify: VerifyResult, words: { unresolved: string; timeout: string; error: string }): string | null {
  switch (verify.status) {
    case 'resolved':
      return null;
    case 'unresolved':
      return words.unresolved;
    case 'apply_failed':
      return `the patch did not apply${verify.apply_error ? `: ${verify.apply_error}` : ''}`;
    case 'timeout':
      return words.timeout;
    default:
      return verify.error ?? words.error;
  }
}

function givenTests(verify: VerifyResult, command: string | null): EvidenceCheck {
  const { status } = verify;
  const failing = verify.fail_to_pass.failed + verify.fail_to_pass.missing + verify.pass_to_pass.failed + verify.pass_to_pass.missing;
  const outcome = runOutcome(status);
  const reason = runReason(verify, {
    unresolved: `${failing} listed test(s) did not pass`,
    timeout: 'the tests timed out',
    error: 'the test run failed',
  });
  return {
    kind: 'given_tests',
    outcome,
    reason,
    command,
    where: 'fresh-sandbox',
    duration_ms: verify.duration_ms,
    details: {
      status,
      fail_to_pass: verify.fail_to_pass,
      pass_to_pass: verify.pass_to_pass,
      other_failed_count: verify.other_failed_count,
      exit_code: verify.exit_code,
      parser: verify.parser,
      timed_out: verify.timed_out,
    },
  };
}

/** A Harbor task's verifier (docs/harbor.md#verification): its reward decides, its exit code is only recorded. */
function harborReward(verify: VerifyResult, threshold: number): EvidenceCheck {
  const reward = rewardEvidence(verify, threshold)!;
  const { status } = verify;
  const reason = runReason(verify, {
    unresolved: `reward ${reward.value} is below the threshold ${reward.threshold}`,
    timeout: 'the verifier ran past its time limit',
    error: 'the verifier could not run',
  });
  return {
    kind: 'harbor_reward',
    outcome: runOutcome(status),
    reason,
    command: '/tests/test.sh',
    where: 'fresh-sandbox',
    duration_ms: verify.duration_ms,
    details: { status, exit_code: verify.exit_code, timed_out: verify.timed_out },
    reward,
  };
}

function regression(checks: ChecksEvidence, index: number): EvidenceCheck | undefined {
  const own = checks.regression?.candidates.find((candidate) => candidate.index === index);
  if (!own) return undefined;
  const found = own.regressions.length;
  const outcome = own.status === 'checked' ? (found > 0 ? 'failed' : 'passed') : own.status === 'apply_failed' ? 'failed' : 'could_not_run';
  const reason =
    own.status === 'checked'
      ? found > 0
        ? `${found} test(s) that passed on base do not with the patch`
        : null
      : own.status === 'apply_failed'
        ? 'the patch did not apply'
        : (own.error ?? (own.status === 'not_compared' ? 'no base-passing test was compared' : 'the suite did not run'));
  return {
    kind: 'regression',
    outcome,
    reason,
    command: checks.regression?.base?.command ?? null,
    where: 'fresh-sandbox',
    duration_ms: own.duration_ms,
    details: {
      status: own.status,
      compared: own.compared,
      scope: own.scope,
      timed_out: own.timed_out,
      regressions: own.regressions.slice(0, MAX_LISTED),
      regressions_total: found,
    },
  };
}

function reproduction(checks: ChecksEvidence, index: number): EvidenceCheck | undefined {
  const evidence = checks.reproduction;
  if (!evidence) return undefined;
  const valid = new Set(evidence.tests.filter((test) => test.valid).map((test) => test.writer));
  const cells = evidence.matrix.filter((cell) => cell.index === index && valid.has(cell.writer));
  const passed = cells.filter((cell) => cell.outcome === 'passed').length;
  const failed = cells.filter((cell) => cell.outcome === 'failed' || cell.outcome === 'error' || cell.outcome === 'apply_failed').length;
  const outcome = valid.size === 0 ? 'could_not_run' : failed > 0 ? 'failed' : passed === valid.size ? 'passed' : 'could_not_run';
  const reason =
    valid.size === 0
      ? 'no valid reproduction test was written'
      : failed > 0
        ? `${failed} of ${valid.size} valid reproduction test(s) fail with the patch`
        : outcome === 'passed'
          ? null
          : `${valid.size - passed} of ${valid.size} valid reproduction test(s) were not run against the patch`;
  return {
    kind: 'reproduction',
    outcome,
    reason,
    command: null,
    where: 'fresh-sandbox',
    duration_ms: cells.reduce((sum, cell) => sum + cell.duration_ms, 0),
    details: { valid_tests: valid.size, passed, failed, cells },
  };
}

/** The other candidates' valid tests from the pool (docs/checks.md#tests-from-the-pool), against this one; its own tests are not evidence for it. */
function poolTests(checks: ChecksEvidence, index: number): EvidenceCheck | undefined {
  const evidence = checks.pool_tests;
  if (!evidence) return undefined;
  const valid = new Set(evidence.tests.filter((test) => test.valid && test.writer !== index).map((test) => test.writer));
  const cells = evidence.matrix.filter((cell) => cell.index === index && !cell.own && valid.has(cell.writer));
  const passed = cells.filter((cell) => cell.outcome === 'passed').length;
  const failed = cells.filter((cell) => cell.outcome === 'failed' || cell.outcome === 'error' || cell.outcome === 'apply_failed').length;
  const outcome = valid.size === 0 ? 'could_not_run' : failed > 0 ? 'failed' : passed === valid.size ? 'passed' : 'could_not_run';
  const reason =
    valid.size === 0
      ? (evidence.error ?? 'no other candidate wrote a valid test')
      : failed > 0
        ? `${failed} of ${valid.size} valid test(s) of other candidates fail with the patch`
        : outcome === 'passed'
          ? null
          : `${valid.size - passed} of ${valid.size} valid test(s) of other candidates were not run against the patch`;
  return {
    kind: 'pool_tests',
    outcome,
    reason,
    command: null,
    where: 'fresh-sandbox',
    duration_ms: cells.reduce((sum, cell) => sum + cell.duration_ms, 0),
    details: { valid_tests: valid.size, passed, failed, cells, score: evidence.scores.find((score) => score.index === index) ?? null },
  };
}

/** The record of `candidate` of `job`; `trajectory` is the candidate's, with its export id. */
export function evidenceRecord(job: JobRecord, candidate: CandidateRecord, trajectory: Trajectory): CandidateEvidence {
  const result = (job.result ?? {}) as { chosen?: { index?: unknown } | null; checks?: ChecksEvidence | null };
  const command = stringAt(job.request, 'verify', 'test_command') ?? stringAt(job.request, 'task', 'test_command');
  const threshold = numberAt(job.request, 'verify', 'reward_threshold') ?? DEFAULT_REWARD_THRESHOLD;
  const verify = candidate.verify;
  const checks: EvidenceCheck[] = [
    ...(verify ? [verify.parser === HARBOR_PARSER ? harborReward(verify, threshold) : givenTests(verify, command)] : []),
    ...(result.checks
      ? [
          regression(result.checks, candidate.index),
          reproduction(result.checks, candidate.index),
          poolTests(result.checks, candidate.index),
        ]
      : []
    ).filter((check): check is EvidenceCheck => check !== undefined),
  ];
  const seed = trajectory.meta.seed;
  return CandidateEvidence.parse({
    format: EVIDENCE_FORMAT,
    candidate: {
      id: trajectory.id,
      job_id: job.id,
      index: candidate.index,
      seed: typeof seed === 'number' && Number.isInteger(seed) ? seed : null,
      status: candidate.status,
      instance_id: trajectory.instance_id,
      source: trajectory.source,
      chosen: result.chosen?.index === candidate.index,
      value: candidate.score?.value ?? null,
      ...(candidate.reused_from ? { reused_from: candidate.reused_from } : {}),
    },
    prediction: { instance_id: trajectory.instance_id, model_name_or_path: trajectory.source, model_patch: trajectory.patch },
    trajectory: checkedAtif(trajectory),
    checks,
  });
}
