/** Liveness, readiness and Prometheus metrics. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { openSandboxCount } from '../../sandbox/lifecycle.js';
import { servingNow } from '../../scoring/reloadable.js';

const ScorerState = z.looseObject({
  backend: z.string(),
  model: z.string(),
  /** The last probe's verdict (kept a few seconds): one line scored within its deadline, a probability back. */
  ok: z.boolean(),
  probe_ms: z.number(),
  checked_at: z.string(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});

const Readiness = z
  .looseObject({
    status: z.enum(['ready', 'shutting-down', 'scorer-unavailable', 'store-unavailable']),
    /** A networked job store (Postgres, server.store): its name without credentials, and whether it answered. */
    store: z.object({ where: z.string(), ok: z.boolean(), error: z.string().nullable() }).nullable(),
    /** This replica's id in the shared queue; null with SQLite. */
    replica: z.string().nullable(),
    scorer: ScorerState.nullable(),
    sandbox: z.string(),
    open_sandboxes: z.number().int(),
  })
  .describe(
    'Whether the server takes work: 200 ready; 503 shutting down, the job store is unreachable, or the scorer did not answer its probe (hung, failing, or answering garbage)',
  );

/** Probes and scrapes arrive every few seconds: their requests log only warnings and errors, not a line each. */
const QUIET = 'warn';

export const healthRoutes: FastifyPluginAsyncZod = async (app) => {
  // Health checks need no API key (src/server/plugins/auth.ts).
  app.get(
    '/healthz',
    { logLevel: QUIET, schema: { security: [], response: { 200: z.object({ status: z.literal('ok') }).describe('The process is up') } } },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    { logLevel: QUIET, schema: { security: [], response: { 200: Readiness, 503: Readiness } } },
    async (_request, reply) => {
      const { solveDeps, closing, scorerReadiness } = app.winnower;
      const verdict = scorerReadiness ? await scorerReadiness.check() : undefined;
      // After the probe: the model it probed, unless a reload swapped it meanwhile.
      const scorer = servingNow(app.winnower.valueModel)?.scorer;
      const { storeCheck } = app.winnower;
      const storeError = storeCheck
        ? await storeCheck.ping().then(
            () => null,
            (error: unknown) => (error as Error).message,
          )
        : null;
      const status = closing()
        ? 'shutting-down'
        : storeError !== null
          ? 'store-unavailable'
          : verdict && !verdict.ok
            ? 'scorer-unavailable'
            : 'ready';
      return reply.status(status === 'ready' ? 200 : 503).send({
        status,
        scorer:
          scorer && verdict
            ? {
                backend: scorer.backend,
                model: scorer.model,
                ok: verdict.ok,
                probe_ms: verdict.ms,
                checked_at: verdict.checked_at,
                error: verdict.ok ? null : { code: verdict.code, message: verdict.reason },
              }
            : null,
        store: storeCheck ? { where: storeCheck.where, ok: storeError === null, error: storeError } : null,
        replica: app.winnower.jobs.replica ?? null,
        sandbox: solveDeps.sandboxes.name,
        open_sandboxes: openSandboxCount(),
      });
    },
  );

  app.get('/metrics', { logLevel: QUIET }, async (_request, reply) => {
    const { registry } = app.winnower.metrics;
    return reply.header('content-type', registry.contentType).send(await registry.metrics());
  });
};
