/**
 * Commands in a sandbox: `POST /sandboxes/:id/exec` (waited on, or queued as a job), `GET /jobs/:id`
 * and its `/wait`, and `POST /sandboxes/:id/apply_patch`. A command's timeout may not run past the
 * sandbox's TTL.
 */
import type { FastifyPluginAsync } from 'fastify';
import { ApplyPatchRequest, ExecRequest, WaitQuery } from '../orchard-shapes.js';
import { MAX_WAIT_MS, parse, type RouteContext, readySandbox, sandboxNotFound, withinLifetime } from './common.js';

export const execRoutes: FastifyPluginAsync<RouteContext> = async (app, { table, jobs, agentWaitMs }) => {
  app.post<{ Params: { id: string } }>('/sandboxes/:id/exec', async (request, reply) => {
    const body = parse(ExecRequest, request.body, 'body', reply);
    if (!body) return reply;
    const entry = table.get(request.params.id);
    if (!entry) return sandboxNotFound(reply, request.params.id);
    if (!withinLifetime(table, entry, body.timeout_seconds, reply)) return reply;
    if (!(await table.waitSettled(entry, agentWaitMs)) || !entry.sandbox || entry.deleted) {
      return reply.code(404).send({ detail: `Sandbox ${entry.view.sandbox_id} agent not ready` });
    }
    const job = jobs.submit(entry, body);
    if (!body.wait) return { job_id: job.view.job_id, status: 'queued' };
    await jobs.wait(job, (body.timeout_seconds + 30) * 1000);
    return job.view;
  });

  app.get<{ Params: { id: string } }>('/jobs/:id', async (request, reply) => {
    const job = jobs.get(request.params.id);
    if (!job) return reply.code(404).send({ detail: 'Job not found' });
    return job.view;
  });

  app.get<{ Params: { id: string } }>('/jobs/:id/wait', async (request, reply) => {
    const query = parse(WaitQuery, request.query, 'query', reply);
    if (!query) return reply;
    const job = jobs.get(request.params.id);
    if (!job) return reply.code(404).send({ detail: 'Job not found' });
    await jobs.wait(job, Math.min(MAX_WAIT_MS, (query.timeout ?? 300) * 1000));
    return job.view;
  });

  app.post<{ Params: { id: string } }>('/sandboxes/:id/apply_patch', async (request, reply) => {
    const body = parse(ApplyPatchRequest, request.body, 'body', reply);
    if (!body) return reply;
    const entry = table.get(request.params.id);
    if (entry && !withinLifetime(table, entry, body.timeout_seconds, reply)) return reply;
    const sandbox = readySandbox(table, request, reply);
    if (!sandbox) return reply;
    // As Orchard: `git apply` in the working directory (/workspace with a repo); the patch goes in on stdin, so no line of it can end it early.
    const result = await sandbox.exec('git apply --verbose -', {
      cwd: sandbox.workdir,
      stdin: body.patch.endsWith('\n') ? body.patch : `${body.patch}\n`,
      timeoutMs: body.timeout_seconds * 1000,
    });
    const timedOut = result.timedOut ? `Patch application timed out after ${body.timeout_seconds}s` : null;
    return {
      success: result.exitCode === 0,
      stdout: result.stdout,
      stderr: result.stderr,
      exit_code: result.timedOut ? 124 : result.exitCode,
      error: timedOut ?? (result.exitCode === 0 ? null : 'git apply failed'),
    };
  });
};
