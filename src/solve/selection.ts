/**
 * Stage: selection. The request's strategy (or the default for the evidence at hand) over the
 * candidates that finished, with their scores and test outcomes; the choice is announced.
 *
 * Own-history priors (selector.json `priors`, per configuration: priors.ts) rank candidates by
 * their configuration's record in the `robust` strategy. A one-policy job's candidates share one
 * configuration, so there they cannot change the order; in a mixed job they can, so a mixed job
 * whose model folder has priors for any of its candidates' configurations defaults to `robust`
 * (test outcome and execution checks first, then the configuration's record, then agreement).
 * The priors come with the model folder, so they apply also when the job does not score.
 */
import { defaultStrategy, select } from '../select/index.js';
import { configKey, type Priors } from '../select/priors.js';
import type { Selection, Strategy, Trajectory } from '../types/index.js';
import type { SolveContext, Slot } from './solve-context.js';

/** Whether `priors` tell the candidates apart: two or more configurations, at least one with a record. */
export function priorsApply(priors: Priors | undefined, trajectories: readonly Trajectory[]): boolean {
  if (!priors) return false;
  const keys = new Set(trajectories.map(configKey));
  return keys.size > 1 && [...keys].some((key) => priors.configs[key] !== undefined);
}

export function selectCandidate(context: SolveContext): { selection: Selection; chosen: Slot | undefined } {
  const { request, valueModel, task } = context;
  const usable = context.slots.filter((slot) => slot.status === 'finished' && slot.trajectory);
  // The folder's selector also when this job does not score (its priors, for robust).
  const folder = context.deps.valueModel?.selector;
  const mixed = priorsApply(
    folder?.priors,
    usable.map((slot) => slot.trajectory!),
  );
  const strategy: Strategy = request.strategy ?? (mixed ? 'robust' : defaultStrategy(context.verifying, valueModel));
  const selection = select(
    strategy,
    usable.map((slot) => ({
      trajectory: slot.trajectory!,
      score: slot.score,
      verify: slot.verify,
      checks: context.evidence.forCandidate(slot.index),
    })),
    { instanceId: task.instance_id, selector: strategy === 'robust' ? folder : valueModel?.selector, task },
  );
  const chosen = usable.find((slot) => slot.trajectory!.id === selection.chosen);
  context.hooks.emit({ type: 'selection', chosen_index: chosen?.index ?? null, trajectory_id: selection.chosen, reason: selection.reason });
  return { selection, chosen };
}
