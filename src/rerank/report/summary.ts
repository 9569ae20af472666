/** Builds report inputs from pipeline types: a Selection per instance, the Scores of a run. */
import type { Score, Selection } from '../../types/index.js';
import { describeFlags } from '../../select/tamper.js';
import type { SelectionSummary, TruncationStats } from './types.js';

/**
 * Summarizes one instance's selection; `labels` maps trajectory id to resolved (omit it, or leave
 * ids out, when there are no labels).
 */
export function summarizeSelection(selection: Selection, repo: string, labels?: ReadonlyMap<string, boolean>): SelectionSummary {
  const chosen = selection.ranking.find((entry) => entry.trajectory_id === selection.chosen);
  const known = selection.ranking.filter((entry) => labels?.has(entry.trajectory_id));
  const flagged = selection.ranking
    .filter((entry) => entry.tamper?.length)
    .map((entry) => ({
      trajectory_id: entry.trajectory_id,
      chosen: entry.trajectory_id === selection.chosen,
      flags: describeFlags(entry.tamper!),
    }));
  return {
    instance_id: selection.instance_id,
    repo,
    chosen: selection.chosen,
    value: chosen?.value ?? null,
    resolved: selection.chosen !== null && labels?.has(selection.chosen) ? labels.get(selection.chosen)! : null,
    any_resolved: known.length ? known.some((entry) => labels!.get(entry.trajectory_id)) : null,
    candidates: selection.ranking.length,
    reason: selection.reason,
    ...(flagged.length ? { flagged } : {}),
  };
}

/** Totals of what serialization cut, over the scores of a run. */
export function truncationStats(scores: readonly Score[]): TruncationStats {
  const stats = { inputs: scores.length, truncated: 0, thoughts: 0, observations: 0, steps_dropped: 0, patches_cut: 0 };
  for (const score of scores) {
    stats.truncated += Number(score.truncated);
    stats.thoughts += score.cut.thoughts;
    stats.observations += score.cut.observations;
    stats.steps_dropped += score.cut.steps_dropped;
    stats.patches_cut += Number(score.cut.patch);
  }
  return stats;
}
