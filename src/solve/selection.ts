/**
 * Stage: selection. The request's strategy (or the default for the evidence at hand) over the
 * candidates that finished, with their scores and test outcomes; the choice is announced.
 */
import { defaultStrategy, select } from '../rerank/select/index.js';
import type { Selection } from '../types/index.js';
import type { SolveContext, Slot } from './solve-context.js';

export function selectCandidate(context: SolveContext): { selection: Selection; chosen: Slot | undefined } {
  const { request, scorer, task } = context;
  const usable = context.slots.filter((slot) => slot.status === 'finished' && slot.trajectory);
  const strategy = request.strategy ?? defaultStrategy(context.verifying, scorer);
  const selection = select(
    strategy,
    usable.map((slot) => ({ trajectory: slot.trajectory!, score: slot.score, verify: slot.verify, checks: context.evidence.forCandidate(slot.index) })),
    { instanceId: task.instance_id, selector: scorer?.selector, task },
  );
  const chosen = usable.find((slot) => slot.trajectory!.id === selection.chosen);
  context.hooks.emit({ type: 'selection', chosen_index: chosen?.index ?? null, trajectory_id: selection.chosen, reason: selection.reason });
  return { selection, chosen };
}
