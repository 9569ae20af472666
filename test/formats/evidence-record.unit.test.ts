/**
 * The candidate-with-evidence record: one entry per check with its outcome, "could not run" kept
 * apart from "failed"; its JSON Schema file is generated from the zod schema and kept in sync here
 * (`WINNOWER_UPDATE_SCHEMAS=1 npx vitest run test/formats/evidence-record.unit.test.ts` rewrites it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { validateAtif } from '../../src/formats/atif/index.js';
import { evidenceRecord } from '../../src/formats/evidence-record.js';
import type { CandidateRecord, JobRecord } from '../../src/store/types.js';
import { CandidateEvidence, type ChecksEvidence, VerifyResult } from '../../src/types/index.js';
import { REPO_ROOT } from '../support/shared-data.js';
import { toolsModeRollout } from './atif/trajectories.js';

const SCHEMA_FILE = join(REPO_ROOT, 'docs/schemas/candidate-evidence.schema.json');

const verify = (status: VerifyResult['status'], extra: Partial<VerifyResult> = {}) =>
  VerifyResult.parse({
    trajectory_id: 'job1/0',
    instance_id: 'fix-median',
    status,
    applied: status !== 'apply_failed',
    fail_to_pass: { passed: status === 'resolved' ? 2 : 0, failed: status === 'resolved' ? 0 : 2, missing: 0 },
    pass_to_pass: { passed: 3, failed: 0, missing: 0 },
    resolved: status === 'resolved',
    parser: 'pytest',
    exit_code: status === 'timeout' ? null : 1,
    duration_ms: 1200,
    ...extra,
  });

const checks: ChecksEvidence = {
  regression: {
    base: { runner: 'pytest', command: 'python -m pytest -q', scope: 'full', passed: 5, flaky: [], duration_ms: 900 },
    candidates: [
      {
        index: 0,
        trajectory_id: 'job1/0',
        status: 'checked',
        regressions: [{ test: 't::a', base: 'passed', candidate: 'failed' }],
        compared: 5,
        scope: 'full',
        timed_out: false,
        duration_ms: 400,
      },
      {
        index: 1,
        trajectory_id: 'job1/1',
        status: 'not_compared',
        regressions: [],
        compared: 0,
        scope: 'related',
        timed_out: false,
        duration_ms: 10,
        error: 'no related tests',
      },
      {
        index: 2,
        trajectory_id: 'job1/2',
        status: 'checked',
        regressions: [],
        compared: 5,
        scope: 'full',
        timed_out: false,
        duration_ms: 300,
      },
    ],
  },
  reproduction: {
    tests: [
      {
        writer: 0,
        trajectory_id: 'w0',
        file: 'test_repro.py',
        content: '',
        base_outcome: 'failed',
        valid: true,
        discard_reason: null,
        base_log_tail: '',
        tokens: 1,
        policy_calls: 1,
        sandbox_ms: 1,
      },
      {
        writer: 1,
        trajectory_id: 'w1',
        file: null,
        content: null,
        base_outcome: null,
        valid: false,
        discard_reason: 'no test file',
        base_log_tail: '',
        tokens: 1,
        policy_calls: 1,
        sandbox_ms: 1,
      },
    ],
    matrix: [
      { index: 0, writer: 0, outcome: 'failed', duration_ms: 50 },
      { index: 2, writer: 0, outcome: 'passed', duration_ms: 40 },
    ],
  },
  pool_tests: {
    runner: 'pytest',
    tests: [
      {
        writer: 0,
        trajectory_id: 'job1/0',
        files: [],
        command: 'pytest t.py',
        ids: ['t.py::x'],
        base_outcome: 'failed',
        valid: true,
        discard_reason: null,
        base_log_tail: '',
        sandbox_ms: 1,
      },
    ],
    matrix: [
      { index: 0, writer: 0, outcome: 'passed', own: true, duration_ms: 5 },
      { index: 2, writer: 0, outcome: 'passed', own: false, duration_ms: 6 },
    ],
    clusters: [],
    scores: [{ index: 2, score: 1, passed: 1, total: 1, own_passed: 0, own_total: 0 }],
    sandbox_ms: [],
  },
  cost: { sandbox_ms: 0, policy_tokens: 0, policy_calls: 0 },
};

const job: JobRecord = {
  id: 'job1',
  kind: 'solve',
  status: 'succeeded',
  request: { issue: 'median', verify: { enabled: true, test_command: 'python -m pytest tests' } },
  progress: {},
  result: { chosen: { index: 2 }, checks },
  error: null,
  created_at: '2026-12-02T10:00:00.000Z',
  updated_at: '2026-12-02T10:01:00.000Z',
};

function record(index: number, status: VerifyResult['status'] | null, extra: Partial<VerifyResult> = {}) {
  const trajectory = { ...toolsModeRollout(), id: `job1/${index}`, meta: { ...toolsModeRollout().meta, seed: index } };
  const candidate: CandidateRecord = {
    job_id: 'job1',
    index,
    status: 'finished',
    reused_from: null,
    trajectory,
    score: null,
    verify: status ? verify(status, extra) : null,
    error: null,
    updated_at: job.updated_at,
  };
  return evidenceRecord(job, candidate, trajectory);
}

const outcomes = (evidence: CandidateEvidence) => Object.fromEntries(evidence.checks.map((check) => [check.kind, check.outcome]));

describe('evidenceRecord', () => {
  it('holds the prediction row, a valid ATIF trajectory and the candidate identity', () => {
    const evidence = record(2, 'resolved');
    expect(evidence.candidate).toEqual({
      id: 'job1/2',
      job_id: 'job1',
      index: 2,
      seed: 2,
      status: 'finished',
      instance_id: 'fix-median',
      source: 'openai:qwen3-coder',
      chosen: true,
      value: null,
    });
    expect(evidence.prediction).toEqual({
      instance_id: 'fix-median',
      model_name_or_path: 'openai:qwen3-coder',
      model_patch: toolsModeRollout().patch,
    });
    expect(validateAtif(evidence.trajectory).valid).toBe(true);
    expect(outcomes(evidence)).toEqual({ given_tests: 'passed', regression: 'passed', reproduction: 'passed', pool_tests: 'passed' });
    expect(evidence.checks[0]).toMatchObject({
      command: 'python -m pytest tests',
      where: 'fresh-sandbox',
      duration_ms: 1200,
      reason: null,
    });
    expect(evidence.checks[1]).toMatchObject({ command: 'python -m pytest -q' });
  });

  it('says failed for what the patch did, and could_not_run for what never ran', () => {
    // Its own pool test is not evidence for it: with no other candidate's valid test, the check could not run.
    expect(outcomes(record(0, 'unresolved'))).toEqual({
      given_tests: 'failed',
      regression: 'failed',
      reproduction: 'failed',
      pool_tests: 'could_not_run',
    });
    expect(record(0, 'apply_failed', { apply_error: 'hunk 1 rejected' }).checks[0]).toMatchObject({
      outcome: 'failed',
      reason: 'the patch did not apply: hunk 1 rejected',
    });
    expect(record(1, 'timeout').checks.map((check) => [check.kind, check.outcome, check.reason])).toEqual([
      ['given_tests', 'could_not_run', 'the tests timed out'],
      ['regression', 'could_not_run', 'no related tests'],
      ['reproduction', 'could_not_run', '1 of 1 valid reproduction test(s) were not run against the patch'],
      ['pool_tests', 'could_not_run', '1 of 1 valid test(s) of other candidates were not run against the patch'],
    ]);
    expect(record(1, 'error', { error: 'sandbox create failed' }).checks[0]).toMatchObject({
      outcome: 'could_not_run',
      reason: 'sandbox create failed',
    });
    // No check ran at all: no entries, not failures.
    const trajectory = toolsModeRollout();
    const unchecked: CandidateRecord = {
      job_id: 'job1',
      index: 0,
      status: 'finished',
      reused_from: null,
      trajectory,
      score: null,
      verify: null,
      error: null,
      updated_at: job.updated_at,
    };
    expect(evidenceRecord({ ...job, result: null }, unchecked, trajectory).checks).toEqual([]);
  });

  it("a Harbor task's verifier is the harbor_reward check, with the reward, its file and threshold", () => {
    const harbor = (status: VerifyResult['status'], extra: Partial<VerifyResult>) =>
      record(2, status, { parser: 'harbor-reward', exit_code: 0, ...extra }).checks[0]!;
    const partial = harbor('unresolved', {
      reward: { file: 'reward.json', rewards: { reward: 0.5, style: 1 }, value: 0.5, threshold: 1 },
    });
    expect(partial).toMatchObject({
      kind: 'harbor_reward',
      outcome: 'failed',
      reason: 'reward 0.5 is below the threshold 1',
      command: '/tests/test.sh',
      reward: { value: 0.5, file: 'reward.json', threshold: 1, rewards: { reward: 0.5, style: 1 } },
    });
    const solved = harbor('resolved', { reward: { file: 'reward.txt', rewards: { reward: 1 }, value: 1, threshold: 1 } });
    expect([solved.outcome, solved.reward]).toEqual(['passed', { value: 1, file: 'reward.txt', threshold: 1, rewards: { reward: 1 } }]);
    // A malformed reward file: the check could not run, no value, the file that was wrong named.
    const malformed = harbor('error', {
      error: 'the verifier could not be graded: reward.txt does not hold one number ("x")',
      reward_unread: { file: 'reward.txt', threshold: 0.8 },
    });
    expect(malformed).toMatchObject({
      kind: 'harbor_reward',
      outcome: 'could_not_run',
      reason: 'the verifier could not be graded: reward.txt does not hold one number ("x")',
      reward: { value: null, file: 'reward.txt', threshold: 0.8, rewards: {} },
    });
    // A result stored before reward_unread: the request's threshold (else 1).
    expect(harbor('timeout', {}).reward).toEqual({ value: null, file: null, threshold: 1, rewards: {} });
    expect(CandidateEvidence.safeParse(record(2, 'error', { parser: 'harbor-reward' })).success).toBe(true);
  });

  it('is described by docs/schemas/candidate-evidence.schema.json, generated from the zod schema', () => {
    const generated = `${JSON.stringify(z.toJSONSchema(CandidateEvidence, { target: 'draft-2020-12' }), null, 2)}\n`;
    if (process.env.WINNOWER_UPDATE_SCHEMAS === '1') writeFileSync(SCHEMA_FILE, generated);
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(generated);
    const schema = JSON.parse(generated);
    expect(schema.properties.checks.items.properties.outcome.enum).toEqual(['passed', 'failed', 'could_not_run']);
    expect(Object.keys(schema.properties.checks.items.properties.reward.properties)).toEqual(['value', 'file', 'threshold', 'rewards']);
  });
});
