/** `GET /jobs/:id`, `GET /jobs/:id/events` (server-sent events), `DELETE /jobs/:id` (cancel). */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { JobEvent } from '../../solve/events.js';
import { jobView } from '../job-view.js';

const Params = z.object({ id: z.string().min(1) });

export const jobRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/jobs/:id',
    { schema: { params: Params, querystring: z.object({ trajectories: z.stringbool().default(false) }) } },
    async (request) => jobView(app.winnower.store, app.winnower.jobs.get(request.params.id), { trajectories: request.query.trajectories }),
  );

  app.delete('/jobs/:id', { schema: { params: Params } }, async (request) => {
    const job = await app.winnower.jobs.cancel(request.params.id);
    return jobView(app.winnower.store, job);
  });

  app.get('/jobs/:id/events', { schema: { params: Params } }, async (request, reply) => {
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
        // Subscribers that arrive after the end (or after a restart) still learn the outcome.
        if (!sawFinish) send({ type: 'job-finish', status: final.status, ...(final.error ? { error: final.error.message } : {}) });
      }
      raw.end();
    };
    let sawFinish = false;
    // A client reconnecting with Last-Event-ID gets only the events after the last one it saw.
    const lastSeen = Number(request.headers['last-event-id'] ?? -1);
    const after = Number.isInteger(lastSeen) ? lastSeen : -1;
    const unsubscribe = jobs.subscribe(
      job.id,
      (event) => {
        if (event.seq <= after) return;
        if (event.type === 'job-finish') sawFinish = true;
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
