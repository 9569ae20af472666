/** What `winnower rerank` says on stderr after a run: warnings and candidates left unscored, and its exit status. */
import type { RerankBatchResult } from '../rerank/rerank-batch.js';

/** Exit status when some instance has no candidate that could be scored (outputs are still written). */
export const EXIT_UNSCORED = 3;

const NAMED_INSTANCES = 5;

export function rerankSummary(result: Pick<RerankBatchResult, 'candidates' | 'warnings' | 'unscored'>): string[] {
  const lines = result.warnings.map((warning) => `rerank: warning: ${warning.message}`);
  const { unscored } = result;
  if (unscored.candidates === 0) return lines;
  const instances = unscored.instances;
  const none = instances.length
    ? `; ${instances.length} instance(s) have no scored candidate (${instances.slice(0, NAMED_INSTANCES).join(', ')}${instances.length > NAMED_INSTANCES ? ', ...' : ''})`
    : '';
  lines.push(`rerank: ${unscored.candidates} of ${result.candidates} candidate(s) could not be scored${none}; first reasons:`);
  for (const reason of unscored.reasons) lines.push(`  ${reason.trajectory_id}: ${reason.code}: ${reason.message}`);
  return lines;
}

export function rerankExitCode(result: Pick<RerankBatchResult, 'unscored'>): number {
  return result.unscored.instances.length > 0 ? EXIT_UNSCORED : 0;
}
