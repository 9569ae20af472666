/** `GET /harnesses`: the agents this server can run, and for those it cannot, why and how to install them. */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { harnessCatalog } from '../../rollout/prepare-rollout.js';
import { COMMON_ERRORS, errorResponses } from '../api-schemas.js';

const HarnessView = z.object({
  name: z.string(),
  description: z.string(),
  protocol: z.string(),
  source: z.enum(['builtin', 'npm', 'image']),
  package: z.string().optional(),
  version: z.string().optional(),
  available: z.boolean(),
  reason: z.string().optional(),
  install_command: z.string().optional(),
});

const HarnessList = z
  .object({ default: z.string(), harnesses: z.array(HarnessView) })
  .describe(
    'Every harness definition: `available` says whether this server can run it; `reason` and `install_command` say why not and how to fix it',
  );

export const harnessRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get('/harnesses', { schema: { response: { 200: HarnessList, ...errorResponses(...COMMON_ERRORS) } } }, async () => {
    // No install folder in the answer: a client must not learn host paths.
    const catalog = harnessCatalog(app.winnower.solveDeps);
    return { default: 'winnower', harnesses: catalog.list() };
  });
};
