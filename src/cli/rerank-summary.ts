/**
 * What `winnower rerank` says after a run: warnings and candidates left unscored on stderr, its
 * exit status, and the summary JSON written beside the predictions (which model and selector
 * scored the run, what was written, the metrics).
 */
import { describeUnscored, type RerankBatchResult } from '../rerank/rerank-batch.js';
import { describeJudgeReport } from '../judge/judge-report.js';
import type { ScoredBy } from '../scoring/scorer-identity.js';

import { RERANK_EXIT_UNSCORED as EXIT_UNSCORED } from './option-values.js';

/** Exit status when some instance has no candidate that could be scored (outputs are still written). */
export { EXIT_UNSCORED };

const NAMED_INSTANCES = 5;

export function rerankSummary(
  result: Pick<RerankBatchResult, 'candidates' | 'warnings' | 'unscored'> & Partial<Pick<RerankBatchResult, 'noneUsable' | 'judge'>>,
): string[] {
  const lines = result.warnings.map((warning) => `rerank: warning: ${warning.message}`);
  const none = result.noneUsable ?? [];
  if (none.length > 0) {
    lines.push(
      `rerank: ${none.length} instance(s) have no usable candidate; their predictions have an empty model_patch and a no_patch_reason:`,
    );
    for (const entry of none.slice(0, NAMED_INSTANCES)) lines.push(`  ${entry.instance_id}: ${entry.reason}`);
  }
  if (result.judge) lines.push(`rerank: ${describeJudgeReport(result.judge)}`);
  const { unscored } = result;
  if (unscored.candidates === 0) return lines;
  lines.push(`rerank: ${describeUnscored(unscored, { of: result.candidates, names: NAMED_INSTANCES })}; first reasons:`);
  for (const reason of unscored.reasons) lines.push(`  ${reason.trajectory_id}: ${reason.code}: ${reason.message}`);
  return lines;
}

export function rerankExitCode(result: Pick<RerankBatchResult, 'unscored'>): number {
  return result.unscored.instances.length > 0 ? EXIT_UNSCORED : 0;
}

/** The summary JSON (`<out>.summary.json`): `scored_by` is this run's model; instances taken from an earlier run (`resumed`) were scored by that run's. */
export function rerankSummaryFile(result: RerankBatchResult, scoredBy: ScoredBy | null) {
  return {
    scored_by: scoredBy,
    instances: result.instances,
    resumed: result.resumed,
    candidates: result.candidates,
    unscored_candidates: result.unscored.candidates,
    predictions: result.predictions,
    scores: result.scores,
    report: result.report ?? null,
    metrics: result.metrics ?? null,
    judge: result.judge ?? null,
  };
}
