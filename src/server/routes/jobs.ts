/** `GET /jobs/:id`, `GET /jobs/:id/events` (server-sent events), `DELETE /jobs/:id` (cancel). */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { JobEvent } from '../../solve/events.js';
import { COMMON_ERRORS, errorResponses, JobView } from '../api-schemas.js';
import { jobView } from '../job-view.js';

const Params = z.object({ id: z.string().min(1) });

/** The id a client last saw: decimal digits only (not `0x2`, `1e0` or an empty value); anything else is ignored, and the stream starts from the first event. */
function lastEventId(header: string | string[] | undefined): number {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^\d{1,15}$/.test(value.trim())) return -1;
  return Number(value.trim());
}

export const jobRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/jobs/:id',
    { schema: { params: Params, querystring: z.object({ trajectories: z.stringbool().default(false) }), response: { 200: JobView, ...errorResponses(400, 404, 414, ...COMMON_ERRORS) } } },
    async (request) => jobView(app.winnower.store, app.winnower.jobs.get(request.params.id), { trajectories: request.query.trajectories }),
  );

  app.delete('/jobs/:id', { schema: { params: Params, response: { 200: JobView.describe('The job, stopped'), ...errorResponses(404, 409, 414, ...COMMON_ERRORS) } } }, async (request) => {
    const job = await app.winnower.jobs.cancel(request.params.id);
    return jobView(app.winnower.store, job);
  });

  // The stream is written to the socket (hijacked), so only its errors go through a schema; openapi.ts describes the 200.
  app.get('/jobs/:id/events', { schema: { params: Params, response: errorResponses(404, 414, ...COMMON_ERRORS) } }, async (request, reply) => {
    const { jobs } = app.winnower;
    const job = jobs.get(request.params.id);
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const send = (event: Pick<JobEvent, 'type'> & Record<string, unknown>) => {
      raw.write(`event: ${event.type}\n${typeof event.seq === 'number' ? `id: ${event.seq}\n` : ''}data: ${JSON.stringify(event)}\n\n`);
    };
    // A comment line now and then keeps proxies from closing a quiet stream.
    const heartbeat = setInterval(() => raw.write(': keep-alive\n\n'), 15_000).unref();
    const end = () => {
      clearInterval(heartbeat);
      if (!jobs.isRunning(job.id)) {
        const final = jobs.get(job.id);
        // A job with no stored end (kept by a version that did not store events) still tells its outcome.
        if (!sawFinish) send({ type: 'job-finish', status: final.status, ...(final.error ? { error: final.error.message } : {}) });
      }
      raw.end();
    };
    let sawFinish = false;
    // A client reconnecting with Last-Event-ID gets only the events after the last one it saw.
    const after = lastEventId(request.headers['last-event-id']);
    const unsubscribe = jobs.subscribe(
      job.id,
      (event) => {
        // One the client already has counts too: it saw the end.
        if (event.type === 'job-finish') sawFinish = true;
        if (event.seq <= after) return;
        send(event);
      },
      end,
    );
    request.raw.on('close', () => {
      clearInterval(heartbeat);
      unsubscribe();
    });
  });
};
