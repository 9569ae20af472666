/** `POST /solve`: start a best-of-N job; `?wait=true` answers with the finished job. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { loadAgentConfig } from '../../rollout/agent/agent-config.js';
import { checkRollouts } from '../../rollout/prepare-rollout.js';
import { servingNow } from '../../scoring/reloadable.js';
import { SolveRequest } from '../../solve/solve-request.js';
import { checkSetupFork } from '../../solve/shared-setup.js';
import { COMMON_ERRORS, errorResponses, JobAccepted, JobView } from '../api-schemas.js';
import { withReadiness } from '../scorer-readiness.js';
import { jobView } from '../views/job-view.js';
import { checkPatchPaths } from '../guards/patch-paths.js';
import { expandHarborTask } from '../guards/harbor-task.js';
import { checkImageAccess, checkRepoAccess } from '../guards/repo-access.js';
import { checkLocalRepo } from '../guards/repo-check.js';
import { retryCandidates } from '../guards/retry-of.js';
import { checkPolicyHost } from '../guards/outbound-hosts.js';
import { resolveJudge } from '../../judge/judge-options.js';
import { checkRepoUrl } from '../guards/repo-url.js';
import { wnwError } from '../../errors.js';
import { firstSecretField, redactRequest } from '../plugins/redact-request.js';
import { checkIdentifier } from '../guards/request-caps.js';
import { inBody } from '../guards/request-field.js';
import { checkScoring } from '../guards/scoring-check.js';
import { solveJob } from '../solve-job.js';

export const solveRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/solve',
    {
      schema: {
        body: SolveRequest,
        querystring: z.object({ wait: z.stringbool().default(false) }),
        response: {
          202: JobAccepted,
          200: JobView.describe('With ?wait=true: the finished job'),
          ...errorResponses(400, 413, 415, 503, ...COMMON_ERRORS),
        },
      },
      // Before validation: the task's fields are the request's defaults (guards/harbor-task.ts).
      preValidation: async (request) => {
        // Still the raw body here: the schema's type applies only once validation has run.
        const { repoRoots, solveDeps } = app.winnower;
        request.body = (await expandHarborTask(request.body, repoRoots, solveDeps.harborEnv ?? {})) as typeof request.body;
      },
    },
    async (request, reply) => {
      const { jobs, solveDeps, store, repoRoots, policyHosts, repoHosts } = app.winnower;
      const body = request.body;
      checkIdentifier(body.instance_id, 'body.instance_id');
      checkRepoUrl(body.repo?.url, 'body.repo.url', repoHosts);
      checkPolicyHost(body.policy?.kind === 'replay' ? undefined : body.policy?.url, policyHosts, 'body.policy.url');
      body.policies?.forEach(({ policy }, index) =>
        checkPolicyHost(policy?.kind === 'replay' ? undefined : policy?.url, policyHosts, `body.policies.${index}.policy.url`),
      );
      const writers = body.verify.reproduction?.policy;
      checkPolicyHost(writers?.kind === 'replay' ? undefined : writers?.url, policyHosts, 'body.verify.reproduction.policy.url');
      checkPolicyHost(body.judge?.url, policyHosts, 'body.judge.url');
      // A judge nothing reads, or strategy judge with no judge anywhere: a 400 now, not a job that falls back.
      resolveJudge(
        { strategy: body.strategy, judge: body.judge },
        solveDeps.judge,
        { strategy: 'body.strategy', judge: 'body.judge', defaults: "the server's judge.url and judge.model" },
        () => 'value',
        body.verify.enabled,
      );
      if (body.verify.test_patch) checkPatchPaths(body.verify.test_patch, 'body.verify.test_patch');
      await checkRepoAccess(body.repo, repoRoots, 'body.repo');
      await checkImageAccess(body.image, repoRoots, 'body.image');
      // With an image the repository lives inside it, and repo.path names a folder there, not here.
      if (body.image === undefined) await checkLocalRepo(body.repo, { path: 'body.repo.path', commit: 'body.repo.commit' });
      // What the job would otherwise find only after creating its sandboxes: a 400 now, naming the field.
      await inBody(() => loadAgentConfig(body.agent.config));
      for (const [index, entry] of (body.policies ?? []).entries())
        if (entry.agent?.config) await inBody(() => loadAgentConfig(entry.agent!.config!), `body.policies.${index}`);
      if (body.scoring.enabled) {
        await checkScoring(
          servingNow(app.winnower.valueModel),
          { template: body.scoring.template, budgetTokens: body.scoring.budget_tokens, withMessages: true },
          { template: 'body.scoring.template', budget: 'body.scoring.budget_tokens' },
        );
      }
      // The harness is defined and installed here, and the policy fits it (or the built-in agent).
      await inBody(() => checkRollouts(solveDeps, body));
      // An explicit fork the provider cannot make is refused now, not run some other way.
      await inBody(() => checkSetupFork(body, solveDeps.sandboxes));
      // A retry: the earlier job's finished rollouts, taken as they are.
      const reuse = await retryCandidates(store, body);
      // The job store keeps the request without its secrets; the job gets them. With a shared
      // queue any replica may run it from the store: a per-request secret is refused, naming it.
      const stored = redactRequest(body);
      const secret = jobs.replica === undefined ? undefined : firstSecretField(body, stored);
      if (secret)
        throw wnwError(
          'WNW_ERR_INPUT_INVALID',
          `${secret}: with a shared job store (server.store) any replica runs the job from the stored request, which keeps no secrets; configure it on the servers instead (policy.api_key, judge.api_key, or credentials the replicas share)`,
          { details: { field: secret } },
        );
      const job = await jobs.start(
        'solve',
        stored,
        solveJob(withReadiness(solveDeps, app.winnower.scorerReadiness), app.winnower.valueModel, body, reuse ? { reuse } : {}),
      );
      if (!request.query.wait) {
        return reply.status(202).header('location', `/jobs/${job.id}`).send({ job_id: job.id, status: job.status });
      }
      // A client that disconnects while waiting cancels nothing: the job is there to fetch later.
      const finished = await jobs.wait(job.id);
      return reply.status(200).send(await jobView(store, finished));
    },
  );
};
