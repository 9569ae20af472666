/**
 * `GET /jobs` (a page of jobs, newest first, with filters), `GET /jobs/:id`, `GET /jobs/:id/events`
 * (server-sent events), `GET /jobs/:id/candidates/:n/trajectory` (one candidate's trajectory,
 * winnower's own or ATIF), `DELETE /jobs/:id` (cancel a running job; with `?purge=true`, delete a
 * finished one with its candidates and events).
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { JobEvent } from '../../solve/events.js';
import { wnwError } from '../../errors.js';
import { checkedAtif } from '../../formats/atif/checked-atif.js';
import { patchForJson } from '../../sandbox/patch-bytes.js';
import { TERMINAL_JOB_STATUSES } from '../../store/types.js';
import { COMMON_ERRORS, errorResponses, JobList, JobView } from '../api-schemas.js';
import { decodeCursor, encodeCursor } from '../views/job-cursor.js';
import { jobSummary, jobView } from '../views/job-view.js';

const Params = z.object({ id: z.string().min(1) });

/**
 * The id a client last saw, -1 for none (no header, or an empty one: an empty id is no id in
 * server-sent events). Decimal digits of any length; one at or past 2^53 is past every event a
 * job can have, so nothing is replayed. Anything else would silently replay the whole stream, so
 * every event twice: a 400 naming the header (docs/api.md).
 */
function lastEventId(header: string | string[] | undefined): number {
  const value = (Array.isArray(header) ? header.join(', ') : header)?.trim();
  if (value === undefined || value === '') return -1;
  if (!/^\d+$/.test(value)) {
    throw wnwError(
      'WNW_ERR_INPUT_INVALID',
      'headers.last-event-id: not an event id (decimal digits, the `id:` of the last event received; leave the header out to start at the first event)',
      { details: { field: 'headers.last-event-id' } },
    );
  }
  // Past 2^53 the number loses precision (a very long one is Infinity) but not its order: it stays past every seq.
  return Number(value);
}

const ListQuery = z.strictObject({
  status: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled', 'interrupted']).optional(),
  kind: z.enum(['solve', 'rerank']).optional(),
  /** Jobs created after this time only (ISO 8601). */
  created_after: z.iso.datetime({ offset: true }).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  /** `next_cursor` of the previous page. */
  cursor: z.string().max(200).optional(),
});

export const jobRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/jobs',
    { schema: { querystring: ListQuery, response: { 200: JobList, ...errorResponses(400, ...COMMON_ERRORS) } } },
    async (request) => {
      const { status, kind, limit, cursor } = request.query;
      const createdAfter = request.query.created_after === undefined ? undefined : new Date(request.query.created_after).toISOString();
      // One more than asked: whether it exists says whether there is a next page.
      const rows = await app.winnower.store.listJobs({
        status,
        kind,
        createdAfter,
        limit: limit + 1,
        before: cursor === undefined ? undefined : decodeCursor(cursor, 'querystring.cursor'),
      });
      const page = rows.slice(0, limit);
      return { jobs: page.map(jobSummary), next_cursor: rows.length > limit ? encodeCursor(page.at(-1)!) : null };
    },
  );

  app.get(
    '/jobs/:id',
    {
      schema: {
        params: Params,
        querystring: z.object({ trajectories: z.stringbool().default(false) }),
        response: { 200: JobView, ...errorResponses(400, 404, 414, ...COMMON_ERRORS) },
      },
    },
    async (request) =>
      jobView(app.winnower.store, await app.winnower.jobs.get(request.params.id), { trajectories: request.query.trajectories }),
  );

  app.get(
    '/jobs/:id/candidates/:n/trajectory',
    {
      schema: {
        params: z.object({ id: z.string().min(1), n: z.coerce.number().int().min(0) }),
        querystring: z.strictObject({ format: z.enum(['winnower', 'atif']).default('winnower') }),
        response: {
          200: z
            .record(z.string(), z.unknown())
            .describe(
              "The candidate's trajectory: winnower-trajectory-1 (docs/trajectory.md), or with ?format=atif an ATIF-v1.7 document (docs/formats.md)",
            ),
          ...errorResponses(400, 404, 414, ...COMMON_ERRORS),
        },
      },
    },
    async (request) => {
      const { id, n } = request.params;
      const job = await app.winnower.jobs.get(id);
      const candidates = await app.winnower.store.listCandidates(job.id);
      const trajectory = candidates.find((candidate) => candidate.index === n)?.trajectory;
      if (!trajectory)
        throw wnwError(
          'WNW_ERR_CANDIDATE_NOT_FOUND',
          `job ${id} has no trajectory for candidate ${n} (it has ${candidates.length} candidates)`,
          {
            details: { field: 'params.n', job_id: id, index: n, candidates: candidates.length },
          },
        );
      const body = request.query.format === 'atif' ? checkedAtif(trajectory) : { ...trajectory, ...patchForJson(trajectory.patch) };
      return body as Record<string, unknown>;
    },
  );

  app.delete(
    '/jobs/:id',
    {
      schema: {
        params: Params,
        querystring: z.strictObject({ purge: z.stringbool().default(false) }),
        response: {
          200: JobView.describe('The job, stopped'),
          204: z.null().describe('With ?purge=true: the finished job was deleted with its candidates and events'),
          ...errorResponses(404, 409, 414, ...COMMON_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { jobs, store } = app.winnower;
      const id = request.params.id;
      // Cancelling and deleting are separate asks, so a repeated cancel can never delete a result.
      if (!request.query.purge) return jobView(store, await jobs.cancel(id));
      const job = await jobs.get(id);
      if (!TERMINAL_JOB_STATUSES.includes(job.status) || jobs.isRunning(id)) {
        throw wnwError('WNW_ERR_JOB_STATE', `job ${id} is ${job.status}: cancel it first (DELETE /jobs/${id}), then purge it`, {
          details: { job_id: id, status: job.status },
        });
      }
      await store.deleteJob(id);
      return reply.status(204).send(null);
    },
  );

  // The stream is written to the socket (hijacked), so only its errors go through a schema; openapi.ts describes the 200.
  app.get(
    '/jobs/:id/events',
    { schema: { params: Params, response: errorResponses(400, 404, 414, ...COMMON_ERRORS) } },
    async (request, reply) => {
      const { jobs } = app.winnower;
      // A client reconnecting with Last-Event-ID gets only the events after the last one it saw.
      const after = lastEventId(request.headers['last-event-id']);
      const job = await jobs.get(request.params.id);
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      const send = (event: Pick<JobEvent, 'type'> & Record<string, unknown>) => {
        raw.write(`event: ${event.type}\n${typeof event.seq === 'number' ? `id: ${event.seq}\n` : ''}data: ${JSON.stringify(event)}\n\n`);
      };
      // A comment line now and then keeps proxies from closing a quiet stream.
      const heartbeat = setInterval(() => raw.write(': keep-alive\n\n'), 15_000).unref();
      const end = async () => {
        clearInterval(heartbeat);
        // A job with no stored end (kept by a version that did not store events) still tells its outcome.
        // One that is not over (handed back by a replica shutting down) gets none: the client
        // reconnects, to another replica, with its Last-Event-ID.
        if (!sawFinish && !jobs.isRunning(job.id)) {
          const final = await jobs.get(job.id).catch(() => undefined);
          if (final && TERMINAL_JOB_STATUSES.includes(final.status))
            send({ type: 'job-finish', status: final.status, ...(final.error ? { error: final.error.message } : {}) });
        }
        raw.end();
      };
      let sawFinish = false;
      let closed = false;
      let unsubscribe = () => {};
      request.raw.on('close', () => {
        closed = true;
        clearInterval(heartbeat);
        unsubscribe();
      });
      let stop: () => void;
      try {
        stop = await jobs.subscribe(
          job.id,
          (event) => {
            // One the client already has counts too: it saw the end.
            if (event.type === 'job-finish') sawFinish = true;
            if (event.seq <= after) return;
            send(event);
          },
          () => void end(),
        );
      } catch (error) {
        // The stream has begun, so no error body can follow: the client sees it end and reconnects.
        request.log.warn({ err: error, job_id: job.id }, 'could not read the job events');
        clearInterval(heartbeat);
        raw.end();
        return;
      }
      // A client gone while the subscription was being set up leaves no listener behind.
      if (closed) stop();
      else unsubscribe = stop;
    },
  );
};
