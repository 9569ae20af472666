/** What `winnower rerank` says on stderr after a run: warnings and candidates left unscored, and its exit status. */
import { describeUnscored, type RerankBatchResult } from '../rerank/rerank-batch.js';

/** Exit status when some instance has no candidate that could be scored (outputs are still written). */
export const EXIT_UNSCORED = 3;

const NAMED_INSTANCES = 5;

export function rerankSummary(result: Pick<RerankBatchResult, 'candidates' | 'warnings' | 'unscored'> & Partial<Pick<RerankBatchResult, 'noneUsable'>>): string[] {
  const lines = result.warnings.map((warning) => `rerank: warning: ${warning.message}`);
  const none = result.noneUsable ?? [];
  if (none.length > 0) {
    lines.push(`rerank: ${none.length} instance(s) have no usable candidate; their predictions have an empty model_patch and a no_patch_reason:`);
    for (const entry of none.slice(0, NAMED_INSTANCES)) lines.push(`  ${entry.instance_id}: ${entry.reason}`);
  }
  const { unscored } = result;
  if (unscored.candidates === 0) return lines;
  lines.push(`rerank: ${describeUnscored(unscored, { of: result.candidates, names: NAMED_INSTANCES })}; first reasons:`);
  for (const reason of unscored.reasons) lines.push(`  ${reason.trajectory_id}: ${reason.code}: ${reason.message}`);
  return lines;
}

export function rerankExitCode(result: Pick<RerankBatchResult, 'unscored'>): number {
  return result.unscored.instances.length > 0 ? EXIT_UNSCORED : 0;
}
