/** What `winnower rerank` says on stderr after a run: warnings and candidates left unscored, and its exit status. */
import { describeUnscored, type RerankBatchResult } from '../rerank/rerank-batch.js';

/** Exit status when some instance has no candidate that could be scored (outputs are still written). */
export const EXIT_UNSCORED = 3;

const NAMED_INSTANCES = 5;

export function rerankSummary(result: Pick<RerankBatchResult, 'candidates' | 'warnings' | 'unscored'>): string[] {
  const lines = result.warnings.map((warning) => `rerank: warning: ${warning.message}`);
  const { unscored } = result;
  if (unscored.candidates === 0) return lines;
  lines.push(`rerank: ${describeUnscored(unscored, { of: result.candidates, names: NAMED_INSTANCES })}; first reasons:`);
  for (const reason of unscored.reasons) lines.push(`  ${reason.trajectory_id}: ${reason.code}: ${reason.message}`);
  return lines;
}

export function rerankExitCode(result: Pick<RerankBatchResult, 'unscored'>): number {
  return result.unscored.instances.length > 0 ? EXIT_UNSCORED : 0;
}
