/**
 * Swapping the server's value model, the one code path behind `POST /admin/model` and SIGHUP:
 * the reloadable value model loads and checks the folder, then swaps it in
 * (src/scoring/reloadable.ts); here the readiness verdict about the model that left is dropped and
 * the swap is logged with both identities. A failed load throws WNW_ERR_SCORE_RELOAD and changes
 * nothing.
 */
import type { FastifyInstance } from 'fastify';
import type { ReloadableValueModel, ReloadResult } from '../scoring/reloadable.js';
import type { ScorerIdentity } from '../scoring/scorer-identity.js';

export async function reloadModel(
  app: FastifyInstance,
  valueModel: ReloadableValueModel,
  options: { path?: string; via: string },
): Promise<ReloadResult & { previous: ScorerIdentity | null }> {
  const previous = valueModel.current.identity;
  const loaded = await valueModel.reload(options.path === undefined ? {} : { path: options.path });
  app.winnower.scorerReadiness?.forget();
  app.log.info({ scorer: loaded.identity ?? loaded, previous }, `scorer reloaded on ${options.via}`);
  return { ...loaded, previous };
}
