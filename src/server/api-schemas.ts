/**
 * The response schemas of the API, for the OpenAPI description and for serialization. Objects are
 * loose (`z.looseObject`): the zod serializer outputs what the schema parsed, so a field the
 * schema does not list must be kept, not dropped; the listed ones are checked.
 */
import { z } from 'zod';
import { JudgeReport, RankedCandidate, RewardEvidence, Score, Selection, VerifyResult } from '../types/index.js';

/** An error as the API gives it, alone or inside a result (`WinnowerError.toJSON()`). */
const ErrorRecord = z.object({
  /** Stable code, `WNW_ERR_<AREA>_<WHAT>` (docs/errors.md); branch on it, not on the message. */
  code: z.string(),
  message: z.string(),
  /** Context: `field` (the request field at fault, e.g. `body.verify.timeout_s`), `allow`, `status`, ... */
  details: z.record(z.string(), z.unknown()).optional(),
});

export const ErrorBody = z.object({ error: ErrorRecord.loose() }).describe('An error: {error: {code, message, details}}');

const ERROR_MEANINGS: Record<number, string> = {
  400: 'invalid input: error.details.field names the field (body.<path>)',
  401: 'API key required (the server has server.api_keys)',
  403: 'API key not accepted',
  404: 'no such job',
  409: 'the job has already ended (cancel), or has not (purge)',
  429: 'rate limit of this API key reached: retry after the Retry-After seconds',
  413: 'body larger than server.body_limit_bytes, or more candidates or a larger candidate than server.limits allows (error.details.field)',
  414: 'a path segment longer than 100 characters',
  415: 'not application/json',
  503: 'too many jobs queued: retry after the Retry-After seconds',
  500: 'internal error',
};

/** The error responses a route can give, by status, each with what it means. */
export function errorResponses(...statuses: number[]): Record<number, typeof ErrorBody> {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      ErrorBody.describe(`${ERROR_MEANINGS[status] ?? 'error'}; the body is {error: {code, message, details}}`),
    ]),
  );
}

/** Every route answers these when API keys are configured (401 none given, 403 not accepted), 429 past the rate limit (server.limits), and 500 on a bug. */
export const COMMON_ERRORS = [401, 403, 429, 500] as const;

const LooseSelection = Selection.extend({ ranking: z.array(RankedCandidate.loose()) }).loose();
const ScoreOrError = z.union([Score.loose(), z.looseObject({ trajectory_id: z.string(), error: ErrorRecord.nullable() })]);

/** Which model and selector scored a job (src/scoring/scorer-identity.ts); null without a value model. */
const IdentityView = z.looseObject({
  model: z
    .looseObject({ name: z.string(), path: z.string().nullable(), hash: z.string().nullable() })
    .describe('The model: its name, folder (onnx) and sha256 over model.onnx, tokenizer.json and config.json (null for a served model)'),
  selector: z
    .looseObject({ path: z.string().nullable(), hash: z.string().nullable(), default_strategy: z.string().nullable() })
    .describe("The model folder's selector.json: path, sha256 of its bytes, the default strategy it sets (null without one)"),
  scorer: z
    .looseObject({ backend: z.string(), urls: z.array(z.string()) })
    .describe('The backend and the server base URLs (empty for onnx)'),
});
const ScoredByView = IdentityView.extend({
  selector: IdentityView.shape.selector.extend({
    strategy: z.string().nullable().describe('The strategy that selected (null on /score, which selects nothing)'),
  }),
})
  .nullable()
  .describe('Which value model and selector scored this (content hashes), and the strategy that selected; null without a value model');

export const JobAccepted = z
  .object({ job_id: z.string(), status: z.string() })
  .describe('The job was created; follow it at /jobs/{job_id} (also in the Location header) or /jobs/{job_id}/events');

const CandidateView = z.looseObject({
  index: z.number().int(),
  status: z.string(),
  trajectory_id: z.string().nullable(),
  exit: z.string().nullable(),
  steps: z.number().nullable(),
  /** Policy calls and tokens so far. */
  usage: z.looseObject({ prompt_tokens: z.number(), completion_tokens: z.number(), calls: z.number() }).nullable().optional(),
  patch: z.string().nullable(),
  /** Set when the patch's bytes are not valid UTF-8: `patch` is then their base64. */
  patch_encoding: z.literal('base64').optional(),
  value: z.number().nullable(),
  score: Score.loose().nullable(),
  verify: VerifyResult.loose().nullable(),
  error: ErrorRecord.nullable(),
  /** A retry's candidate taken from the earlier job (`retry_of`): that job and the candidate's index there. */
  reused_from: z.object({ job_id: z.string(), index: z.number().int() }).nullable().optional(),
  /** With `?trajectories=true`. */
  trajectory: z.unknown().optional(),
});

/** Execution checks without a test list (src/types/checks.ts; every field in docs/checks.md). */
const ChecksView = z
  .looseObject({
    regression: z
      .looseObject({ base: z.looseObject({}).nullable(), candidates: z.array(z.looseObject({ index: z.number().int() })) })
      .nullable(),
    reproduction: z
      .looseObject({
        tests: z.array(z.looseObject({ writer: z.number().int() })),
        matrix: z.array(z.looseObject({ index: z.number().int(), writer: z.number().int() })),
      })
      .nullable(),
    cost: z.looseObject({ sandbox_ms: z.number(), policy_tokens: z.number(), policy_calls: z.number() }),
  })
  .describe(
    'The regression check (base runs, regressions per candidate), every generated reproduction test, the pass matrix and their cost; docs/checks.md',
  );

/** The chosen candidate of a job's result (src/solve/result-view.ts), null when nothing usable was chosen. */
const ChosenView = z
  .looseObject({
    index: z.number().int(),
    trajectory_id: z.string(),
    patch: z.string(),
    patch_encoding: z.literal('base64').optional(),
    value: z.number().nullable(),
    verify_status: z.string().nullable(),
    harbor_reward: RewardEvidence.optional().describe(
      "harbor_task jobs: the chosen candidate's reward (null when none could be read), its file and threshold; docs/harbor.md",
    ),
  })
  .nullable();
const CandidateSummaryView = z.looseObject({ index: z.number().int(), status: z.string() });

const SolveResultView = z
  .looseObject({
    instance_id: z.string(),
    /** Absent from results stored before it was recorded; there a null `chosen` says the same. */
    outcome: z
      .enum(['chosen', 'none-usable'])
      .optional()
      .describe('none-usable: the job ran to its end but no candidate had a usable patch, so chosen is null (the status stays succeeded)'),
    chosen: ChosenView,
    selection: LooseSelection,
    candidates: z.array(CandidateSummaryView),
    rollouts: z.record(z.string(), z.number()),
    compute: z.record(z.string(), z.number()),
    /** Regression check, reproduction tests and pass matrix (docs/checks.md). */
    checks: ChecksView.optional(),
    /** With a judge (strategy judge or hybrid): tie rates before and after it, comparisons, tokens, why it failed (docs/selection.md#judge). */
    judge: JudgeReport.loose().nullable().optional(),
    /** Set when the job was interrupted: `chosen` is the best of the candidates that had finished. */
    partial: z.boolean().optional(),
    reason: z.string().optional(),
    scored_by: ScoredByView.optional(),
  })
  .describe('The outcome: the chosen patch, the selection with every candidate ranked, rollout counts and compute');

export const RerankResponse = z
  .looseObject({
    selection: LooseSelection,
    chosen_patch: z.string().nullable(),
    scores: z.array(ScoreOrError),
    verify: z.array(VerifyResult.loose()),
    /** With `checks`: the regression check, reproduction tests and pass matrix (docs/checks.md). */
    checks: ChecksView.optional(),
    /** With a judge (strategy judge or hybrid): tie rates before and after it, comparisons, tokens, why it failed (docs/selection.md#judge). */
    judge: JudgeReport.loose().optional(),
    scored_by: ScoredByView,
    /** What the request's input held that winnower read around (ATIF-v1.8 keys it does not know, kept in the candidate's meta.atif_unknown). */
    warnings: z.array(z.string()).optional(),
    job_id: z
      .string()
      .optional()
      .describe(
        'With verify or checks: the rerank job this answer is kept as (GET /jobs/{job_id}); absent for a score-only request, or when the store failed',
      ),
  })
  .describe('The selection among the candidates, the chosen patch, the scores and (with verify) the test outcomes');

/** What a /rerank job keeps as its result (src/server/rerank-job.ts): the answer, with the fields a solve job's result has. */
const RerankJobResultView = RerankResponse.omit({ job_id: true })
  .extend({
    instance_id: z.string(),
    outcome: z.enum(['chosen', 'none-usable']),
    chosen: ChosenView,
    candidates: z.array(CandidateSummaryView),
  })
  .describe('A /rerank job: its answer, the chosen candidate and one summary per candidate');

export const JobView = z
  .looseObject({
    job_id: z.string(),
    kind: z.string(),
    status: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled', 'interrupted']),
    progress: z.record(z.string(), z.number()),
    created_at: z.string(),
    updated_at: z.string(),
    error: ErrorRecord.nullable(),
    candidates: z.array(CandidateView),
    /** A /solve job's result, or a /rerank job's (its answer with `instance_id`, `outcome`, `chosen` and `candidates`). */
    result: z.union([SolveResultView, RerankJobResultView]).nullable(),
  })
  .describe('A job: status, progress counters, every candidate so far, and the result once it has one');

export const JobSummary = JobView.pick({
  job_id: true,
  kind: true,
  status: true,
  progress: true,
  created_at: true,
  updated_at: true,
  error: true,
}).extend({
  /** The headline a jobs list shows (src/server/views/job-overview.ts); a field is null when the job does not say. */
  overview: z
    .looseObject({
      instance_id: z.string().nullable(),
      n: z.number().int().nullable(),
      policy: z.string().nullable(),
      harness: z.string().nullable(),
      strategy: z.string().nullable(),
      chosen_index: z.number().int().nullable(),
      resolved: z.boolean().nullable(),
      /** The result's outcome: `none-usable` when the job chose nothing usable; null before it has a result. */
      outcome: z.enum(['chosen', 'none-usable']).nullable().optional(),
    })
    .optional(),
});

export const JobList = z
  .looseObject({ jobs: z.array(JobSummary), next_cursor: z.string().nullable() })
  .describe('A page of jobs, newest first; pass next_cursor as ?cursor= for the next page (null: this is the last)');

/** Why /rerank would never choose a candidate, whatever its value (src/select/usable-gate.ts); null when it could. */
const UnusableView = z
  .object({ kind: z.string(), reason: z.string(), code: z.string().optional() })
  .nullable()
  .describe(
    'Why /rerank would never choose this candidate (no patch, unparseable, refused by the patch rules), as its ranking says; null when it could',
  );

const ScoreEntry = z.union([
  Score.loose().extend({ unusable: UnusableView }),
  z.looseObject({ trajectory_id: z.string(), error: ErrorRecord.nullable(), unusable: UnusableView }),
]);

export const ScoreResponse = z
  .looseObject({ backend: z.string(), model: z.string(), scored_by: ScoredByView.optional(), scores: z.array(ScoreEntry) })
  .describe(
    'One value score per candidate, in request order; a candidate that could not be scored has an error instead; each says whether /rerank could ever choose it (`unusable`): a raw value is not a rank',
  );

export const ModelLoaded = z
  .looseObject({
    backend: z.string(),
    model: z.string(),
    default_strategy: z
      .string()
      .nullable()
      .describe("The strategy a request naming none now gets (the selector's), null without a selector"),
    identity: IdentityView.nullable(),
    previous: IdentityView.nullable().describe('The model that served before; jobs started on it finish on it'),
  })
  .describe('The model now serving: the next request scores and selects with it');
