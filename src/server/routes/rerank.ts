/** `POST /score` (raw value scores) and `POST /rerank` (score, optionally verify, and select) for one task. */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { WinnowerError, wnwError } from '../../errors.js';
import { atifUnknownWarning } from '../../formats/atif/atif-warnings.js';
import { fromAtif } from '../../formats/atif/from-atif.js';
import { isAtifDocument } from '../../formats/atif/import-atif.js';
import { scoreCandidates, type CandidateScore } from '../../scoring/score-candidates.js';
import { judgeCandidates } from '../../judge/judge-pass.js';
import { JudgeOptions, resolveJudge } from '../../judge/judge-options.js';
import { defaultStrategy, select, unusableOf, type Candidate } from '../../select/index.js';
import { checkPolicyHost } from '../guards/outbound-hosts.js';
import { checkPool } from '../../solve/pool-checks.js';
import { MAX_TIMEOUT_S, PoolTestOptions, ReproductionOptions } from '../../solve/solve-request.js';
import { checkImageAccess, checkRepoAccess } from '../guards/repo-access.js';
import { checkLocalRepo } from '../guards/repo-check.js';
import { checkRepoUrl } from '../guards/repo-url.js';
import { COMMON_ERRORS, errorResponses, RerankResponse, ScoreResponse } from '../api-schemas.js';
import { MAX_CANDIDATES_CAP } from '../limits-config.js';
import { checkPatchPaths } from '../guards/patch-paths.js';
import { redactRerankRequest } from '../plugins/redact-request.js';
import { rerankRecorder } from '../rerank-job.js';
import { bodyBytes, checkCandidateCaps, checkIdentifier } from '../guards/request-caps.js';
import { checkScoring } from '../guards/scoring-check.js';
import { pinValueModel } from '../../scoring/reloadable.js';
import { scoredBy } from '../../scoring/scorer-identity.js';
import type { ValueModel } from '../../scoring/value-model.js';
import { RepoSource, Strategy, Task, Trajectory } from '../../types/index.js';
import { PARSER_NAMES } from '../../verify/detect.js';
import { verifyMany } from '../../verify/verify-candidate.js';

// Strict objects: an unknown key (a typo) is a 400 naming it. Messages keep the OpenAI chat
// format's own extras (refusal, annotations, ...), and `meta` is free-form.
const CandidateInput = Trajectory.strict().extend({
  instance_id: z.string().min(1).optional(),
  source: z.string().min(1).default('request'),
});

/** `steps[2].tool_calls[0]` → `['steps', 2, 'tool_calls', 0]`. */
function pathSegments(path: string): Array<string | number> {
  return (path.match(/[^.[\]]+/g) ?? []).map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
}

/**
 * Candidates given as ATIF documents (docs/formats.md#atif-in) become trajectories before the body
 * is checked: the task's instance id when the document names none, and an id from the document
 * (winnower's own, else its `trajectory_id` or `session_id`, else its position), since several runs
 * of one agent share a source. An invalid document is a 400 naming its field.
 */
function atifCandidates(body: unknown, context: z.RefinementCtx): unknown {
  if (typeof body !== 'object' || body === null || !Array.isArray((body as { candidates?: unknown }).candidates)) return body;
  const { candidates, task } = body as { candidates: unknown[]; task?: { instance_id?: unknown } };
  if (!candidates.some(isAtifDocument)) return body;
  const instanceId = typeof task?.instance_id === 'string' && task.instance_id !== '' ? task.instance_id : 'unknown';
  const converted = candidates.map((candidate, index) => {
    if (!isAtifDocument(candidate)) return candidate;
    try {
      const { trajectory } = fromAtif(candidate, { instanceId });
      const document = candidate as { extra?: { winnower?: unknown }; trajectory_id?: unknown; session_id?: unknown };
      const ownId = typeof document.extra?.winnower === 'object' && document.extra.winnower !== null;
      const named = [document.trajectory_id, document.session_id].find((id) => typeof id === 'string' && id !== '') as string | undefined;
      return { ...trajectory, id: ownId ? trajectory.id : (named ?? `atif-${index}`) };
    } catch (error) {
      if (!WinnowerError.isInstance(error)) throw error;
      const field = typeof error.details.field === 'string' ? error.details.field : '';
      context.addIssue({ code: 'custom', path: ['candidates', index, ...pathSegments(field)], message: error.message });
      return candidate;
    }
  });
  return { ...body, candidates: converted };
}

const TaskInput = Task.strict().extend({ repo: RepoSource.strict().optional() });

export const ScoreBody = z.strictObject({
  task: TaskInput,
  // The hard bound of the schema; the server's own cap (server.limits.max_candidates) is checked after, with a 413.
  candidates: z.array(CandidateInput).min(1).max(MAX_CANDIDATES_CAP),
  template: z.string().optional(),
  budget_tokens: z.number().int().positive().optional(),
});

const RerankBody = ScoreBody.extend({
  strategy: Strategy.optional(),
  verify: z.boolean().default(false),
  verify_concurrency: z.number().int().min(1).max(32).default(4),
  verify_timeout_s: z.number().positive().max(MAX_TIMEOUT_S).default(300),
  /** The log parser of task.test_command for verify and the checks' regression run (docs/verify.md "Choosing a parser"); detected when absent. */
  verify_parser: z.enum(PARSER_NAMES).optional(),
  /** Put the tests in place as the SWE-bench harness does (docs/verify.md "Two procedures for the test files"). */
  verify_harness_compat: z.boolean().optional(),
  /**
   * Execution checks without a test list, as a solve job runs them (docs/checks.md): the
   * regression check (the repository's own suite, base vs each candidate) and, with
   * `reproduction`, test writers by `reproduction.policy` (or the server's default policy) and the
   * pass matrix, and the tests from the pool (`pool_tests`). Needs task.repo or task.image.
   */
  /**
   * The pairwise judge (docs/selection.md#judge): breaks `hybrid`'s ties, ranks under `judge`;
   * without a strategy the request selects with `judge` (`hybrid` with verify or checks).
   */
  judge: JudgeOptions.optional(),
  checks: z
    .strictObject({
      regression: z.boolean().default(true),
      regression_budget_s: z.number().positive().max(MAX_TIMEOUT_S).default(600),
      reproduction: ReproductionOptions.optional(),
      /** Tests from the pool (docs/checks.md#tests-from-the-pool); on unless `enabled: false`. */
      pool_tests: PoolTestOptions.optional(),
    })
    .optional(),
}).superRefine((body, context) => {
  if (body.checks && body.task.repo?.url === undefined && body.task.repo?.path === undefined && body.task.image === undefined) {
    context.addIssue({ code: 'custom', path: ['checks'], message: 'checks need task.repo (url or path) or task.image' });
  }
  if (body.checks && !body.checks.regression && !body.checks.reproduction && body.checks.pool_tests?.enabled === false) {
    context.addIssue({
      code: 'custom',
      path: ['checks'],
      message: 'every check is off: turn one on (regression, reproduction, pool_tests) or leave checks out',
    });
  }
  if (!body.verify) {
    // Options of verification without it would be ignored: refused instead, naming them.
    // verify_parser also reads the regression check's log of task.test_command, so checks honour it.
    if (body.verify_parser !== undefined && !body.checks) {
      context.addIssue({ code: 'custom', path: ['verify_parser'], message: 'verify_parser needs verify: true or checks' });
    }
    if (body.verify_harness_compat !== undefined) {
      context.addIssue({ code: 'custom', path: ['verify_harness_compat'], message: 'verify_harness_compat needs verify: true' });
    }
    return;
  }
  // Verification without tests or without a repository could only answer "error" for every candidate.
  if (body.task.test_command === undefined && body.task.fail_to_pass.length + body.task.pass_to_pass.length === 0) {
    context.addIssue({
      code: 'custom',
      path: ['task', 'test_command'],
      message: 'verify: true needs task.test_command or task.fail_to_pass/pass_to_pass',
    });
  }
  if (body.task.repo?.url === undefined && body.task.repo?.path === undefined && body.task.image === undefined) {
    context.addIssue({ code: 'custom', path: ['task', 'repo'], message: 'verify: true needs task.repo (url or path) or task.image' });
  }
});

/** The scoring options of a /score or /rerank body, checked before anything is scored. */
function checkBodyScoring(valueModel: ValueModel | undefined, body: z.infer<typeof ScoreBody>): Promise<void> {
  const withMessages = body.candidates.some((candidate) => candidate.messages.length > 0);
  return checkScoring(
    valueModel,
    { template: body.template, budgetTokens: body.budget_tokens, withMessages },
    { template: 'body.template', budget: 'body.budget_tokens' },
  );
}

/** The candidates as trajectories; ids checked, duplicates refused, patches kept inside the repository (src/server/guards/patch-paths.ts). */
function asTrajectories(body: z.infer<typeof ScoreBody>): Trajectory[] {
  const ids = new Set<string>();
  checkIdentifier(body.task.instance_id, 'body.task.instance_id');
  if (body.task.test_patch) checkPatchPaths(body.task.test_patch, 'body.task.test_patch');
  return body.candidates.map((candidate, index) => {
    checkIdentifier(candidate.id, `body.candidates.${index}.id`);
    checkIdentifier(candidate.instance_id, `body.candidates.${index}.instance_id`);
    checkIdentifier(candidate.source, `body.candidates.${index}.source`);
    checkPatchPaths(candidate.patch, `body.candidates.${index}.patch`);
    if (ids.has(candidate.id))
      throw wnwError('WNW_ERR_INPUT_INVALID', `body.candidates.${index}.id: duplicate id ${candidate.id}`, {
        details: { field: `body.candidates.${index}.id` },
      });
    ids.add(candidate.id);
    return { ...candidate, instance_id: candidate.instance_id ?? body.task.instance_id };
  });
}

/** Why selection would set a candidate aside before ranking it, or null (src/select/usable-gate.ts). */
function unusableEntry(trajectory: Trajectory): { kind: string; reason: string; code?: string } | null {
  try {
    return unusableOf({ trajectory });
  } catch (error) {
    return { kind: 'unprepared', reason: error instanceof Error ? error.message : String(error) };
  }
}

/** A candidate's score, or why it has none. */
function scoreEntry(result: CandidateScore) {
  if (result.score) return result.score;
  return { trajectory_id: result.trajectory_id, error: result.error ? result.error.toJSON() : null };
}

/**
 * A signal that fires when the client goes away. The request stream closes as soon as its body is
 * read, so it is the response closing before it finished that says so.
 */
function abortOnDisconnect(response: ServerResponse): AbortSignal {
  const controller = new AbortController();
  const gone = () => {
    if (!response.writableFinished) controller.abort(wnwError('WNW_ERR_OP_ABORTED', 'the client disconnected'));
  };
  // Gone already (while the body was checked): its 'close' has been emitted and will not come again.
  if (response.destroyed) gone();
  else response.on('close', gone);
  return controller.signal;
}

export const rerankRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/score',
    {
      schema: {
        body: z.preprocess(atifCandidates, ScoreBody),
        response: { 200: ScoreResponse, ...errorResponses(400, 413, 415, 503, ...COMMON_ERRORS) },
      },
    },
    async (request, reply) => {
      // One model from the checks to the answer, even when POST /admin/model swaps it meanwhile.
      // From the start: a client that leaves during the checks below stops the work as well.
      const signal = abortOnDisconnect(reply.raw);
      const pinned = pinValueModel(app.winnower.valueModel);
      try {
        const { valueModel } = pinned;
        if (!valueModel) throw wnwError('WNW_ERR_SCORE_BACKEND', 'no value model is configured on this server');
        checkCandidateCaps(request.body.candidates, app.winnower.limits, bodyBytes(request.headers));
        const trajectories = asTrajectories(request.body);
        await checkBodyScoring(valueModel, request.body);
        // A scorer the readiness probe found hung or failing: 503 now, not every candidate's own timeout.
        await app.winnower.scorerReadiness?.throwIfDown();
        const results = await scoreCandidates(valueModel, request.body.task, trajectories, {
          template: request.body.template,
          budgetTokens: request.body.budget_tokens,
          signal,
        });
        return {
          backend: valueModel.scorer.backend,
          model: valueModel.scorer.model,
          scored_by: scoredBy(valueModel.identity, null),
          // A value for a candidate /rerank would never choose (an empty or junk patch) is flagged with the same reason.
          scores: results.map((result, index) => ({ ...scoreEntry(result), unusable: unusableEntry(trajectories[index]!) })),
        };
      } finally {
        pinned.release();
      }
    },
  );

  /** Scores, checks and selects with `valueModel`, the model pinned for this request. */
  const rerank = async (
    valueModel: ValueModel | undefined,
    body: z.infer<typeof RerankBody>,
    request: { headers: IncomingHttpHeaders; log: FastifyBaseLogger },
    signal: AbortSignal,
  ) => {
    const task = body.task;
    checkCandidateCaps(body.candidates, app.winnower.limits, bodyBytes(request.headers));
    const trajectories = asTrajectories(body);
    await checkBodyScoring(valueModel, body);
    checkPolicyHost(body.judge?.url, app.winnower.policyHosts, 'body.judge.url');
    const verifying = Boolean(body.verify || body.checks);
    const { strategy, judge: judgeOptions } = resolveJudge(
      { strategy: body.strategy, judge: body.judge },
      app.winnower.solveDeps.judge,
      { strategy: 'body.strategy', judge: 'body.judge', defaults: "the server's judge.url and judge.model" },
      () => defaultStrategy(verifying, valueModel),
      verifying,
    );
    if (body.verify || body.checks) {
      checkRepoUrl(task.repo?.url, 'body.task.repo.url', app.winnower.repoHosts);
      await checkRepoAccess(task.repo, app.winnower.repoRoots, 'body.task.repo');
      await checkImageAccess(task.image, app.winnower.repoRoots, 'body.task.image');
      if (task.image === undefined)
        await checkLocalRepo(
          { path: task.repo?.path, commit: task.repo?.base_commit },
          { path: 'body.task.repo.path', commit: 'body.task.repo.base_commit' },
        );
    }
    // From here the request does its work: one that verifies or runs checks is kept as a rerank
    // job, a score-only one is not (the hot path, and cheap to recompute: docs/api.md).
    const recorder = verifying
      ? rerankRecorder(app.winnower.store, { instanceId: task.instance_id, stored: redactRerankRequest(body), trajectories }, request.log)
      : undefined;
    try {
      const outcome = await rerankWork(valueModel, body, trajectories, { strategy, judge: judgeOptions }, signal);
      const jobId = await recorder?.succeeded(outcome);
      return { ...outcome.answer, ...(jobId ? { job_id: jobId } : {}) };
    } catch (error) {
      await recorder?.failed(error, signal.aborted);
      throw error;
    }
  };

  /** Scores, verifies and checks `trajectories`, then selects; what the answer and the job record need. */
  const rerankWork = async (
    valueModel: ValueModel | undefined,
    body: z.infer<typeof RerankBody>,
    trajectories: Trajectory[],
    { strategy, judge: judgeOptions }: ReturnType<typeof resolveJudge>,
    signal: AbortSignal,
  ) => {
    const { sandboxes } = app.winnower.solveDeps;
    const task = body.task;
    const atif = atifUnknownWarning(trajectories);
    const pool = body.checks
      ? checkPool(app.winnower.solveDeps, task, trajectories, {
          regression: { enabled: body.checks.regression, budget_s: body.checks.regression_budget_s },
          ...(body.checks.reproduction ? { reproduction: body.checks.reproduction } : {}),
          ...(body.checks.pool_tests ? { poolTests: body.checks.pool_tests } : {}),
          ...(body.verify_parser ? { parser: body.verify_parser } : {}),
          concurrency: body.verify_concurrency,
          signal,
        })
      : undefined;
    // A scorer the readiness probe found hung or failing: no candidate waits out its deadline;
    // each gets the probe's error, and selection degrades as it does on a scorer outage.
    const down = valueModel ? await app.winnower.scorerReadiness?.downError() : undefined;
    const [scores, verified, checked] = await Promise.all([
      down
        ? Promise.resolve(trajectories.map((t): CandidateScore => ({ trajectory_id: t.id, error: down })))
        : valueModel
          ? scoreCandidates(valueModel, task, trajectories, { template: body.template, budgetTokens: body.budget_tokens, signal })
          : Promise.resolve([]),
      body.verify
        ? verifyMany(
            sandboxes,
            task,
            trajectories.map((t) => ({ id: t.id, patch: t.patch })),
            {
              concurrency: body.verify_concurrency,
              testTimeoutMs: body.verify_timeout_s * 1000,
              signal,
              ...(body.verify_parser ? { parser: body.verify_parser } : {}),
              ...(body.verify_harness_compat ? { harnessCompat: true } : {}),
            },
          )
        : Promise.resolve([]),
      pool,
    ]);
    for (const result of verified) app.winnower.metrics.observeVerify(result.status);
    const scoreOf = new Map(scores.flatMap((result) => (result.score ? [[result.trajectory_id, result.score] as const] : [])));
    const verifyOf = new Map(verified.map((result) => [result.trajectory_id, result] as const));
    const candidates: Candidate[] = trajectories.map((trajectory) => ({
      trajectory,
      score: scoreOf.get(trajectory.id),
      verify: verifyOf.get(trajectory.id),
      checks: checked?.checks.get(trajectory.id),
    }));
    const selectOptions = { instanceId: task.instance_id, selector: valueModel?.selector, task };
    const judged = judgeOptions
      ? await judgeCandidates(judgeOptions, strategy, candidates, task.problem_statement, selectOptions, signal)
      : undefined;
    const selection = select(strategy, candidates, {
      ...selectOptions,
      ...(judged?.scores ? { judge: judged.scores } : {}),
      ...(judged?.unavailable ? { judgeUnavailable: judged.unavailable } : {}),
    });
    return {
      scores: scoreOf,
      verify: verifyOf,
      ...(checked ? { checks: checked.checks } : {}),
      answer: {
        selection,
        chosen_patch: trajectories.find((t) => t.id === selection.chosen)?.patch ?? null,
        scores: scores.map(scoreEntry),
        verify: verified,
        ...(checked ? { checks: checked.evidence } : {}),
        ...(judged ? { judge: judged.report } : {}),
        scored_by: scoredBy(valueModel?.identity, selection.strategy),
        ...(atif ? { warnings: [atif.message] } : {}),
      },
    };
  };

  app.post(
    '/rerank',
    {
      schema: {
        body: z.preprocess(atifCandidates, RerankBody),
        response: { 200: RerankResponse, ...errorResponses(400, 413, 415, ...COMMON_ERRORS) },
      },
    },
    async (request, reply) => {
      const signal = abortOnDisconnect(reply.raw);
      const pinned = pinValueModel(app.winnower.valueModel);
      try {
        return await rerank(pinned.valueModel, request.body, request, signal);
      } finally {
        pinned.release();
      }
    },
  );
};
