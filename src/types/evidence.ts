import { z } from 'zod';

export const EVIDENCE_FORMAT = 'winnower-candidate-evidence-1';

/**
 * How one check came out. `could_not_run` (the sandbox or the runner failed, it timed out, its
 * output could not be read) says nothing about the patch, so it is never `failed`.
 */
export const CheckOutcome = z.enum(['passed', 'failed', 'could_not_run']);
export type CheckOutcome = z.infer<typeof CheckOutcome>;

/**
 * A Harbor task's reward as evidence (docs/harbor.md#verification): the deciding value (null when
 * none could be read: the check could not run), the file it came from (null: none was read),
 * the threshold at or above which it resolves, and every reward the file held.
 */
export const RewardEvidence = z.strictObject({
  value: z.number().nullable(),
  file: z.enum(['reward.json', 'reward.txt']).nullable(),
  threshold: z.number(),
  rewards: z.record(z.string(), z.number()),
});
export type RewardEvidence = z.infer<typeof RewardEvidence>;

/** One execution check of one candidate: what ran, where, how long, and what came of it. */
export const EvidenceCheck = z.strictObject({
  kind: z.enum(['given_tests', 'regression', 'reproduction', 'pool_tests', 'harbor_reward']),
  outcome: CheckOutcome,
  /** Why it failed or could not run, in words; null when it passed. */
  reason: z.string().nullable(),
  /** The command run, when the job names one (a test command, the regression suite's runner command). */
  command: z.string().nullable(),
  /** Every check runs in a fresh sandbox with the candidate's patch applied, apart from its rollout's. */
  where: z.literal('fresh-sandbox'),
  duration_ms: z.number().nonnegative().nullable(),
  /** The check's own figures (test tallies, regressions, matrix cells), as the job recorded them. */
  details: z.record(z.string(), z.unknown()),
  /** `harbor_reward` checks only: the reward, its file and its threshold. */
  reward: RewardEvidence.optional(),
});
export type EvidenceCheck = z.infer<typeof EvidenceCheck>;

/** One candidate with its evidence: the SWE-bench prediction row, the ATIF trajectory and one entry per check. */
export const CandidateEvidence = z.strictObject({
  format: z.literal(EVIDENCE_FORMAT),
  candidate: z.strictObject({
    /** Stable across restarts, re-grading and exports: `<job_id>/<index>` for a rollout. */
    id: z.string().min(1),
    job_id: z.string().min(1),
    /** The rollout index in the job, from 0; a rollout's seed is its index. */
    index: z.number().int().nonnegative(),
    seed: z.number().int().nullable(),
    status: z.string(),
    instance_id: z.string().min(1),
    source: z.string().min(1),
    /** Set when the job chose this candidate. */
    chosen: z.boolean(),
    value: z.number().nullable(),
    /** A retry's candidate taken as it was from the earlier job (`retry_of`): that job and its index there; absent for a run of this job. */
    reused_from: z.strictObject({ job_id: z.string().min(1), index: z.number().int().nonnegative() }).optional(),
  }),
  /** The SWE-bench prediction row (`model_patch` may be empty). */
  prediction: z.strictObject({ instance_id: z.string(), model_name_or_path: z.string(), model_patch: z.string() }),
  /** The trajectory as an ATIF-v1.7 document (docs/formats.md). */
  trajectory: z.record(z.string(), z.unknown()),
  checks: z.array(EvidenceCheck),
});
export type CandidateEvidence = z.infer<typeof CandidateEvidence>;
