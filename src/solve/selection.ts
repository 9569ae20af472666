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
import { judgeCandidates } from '../judge/judge-pass.js';
import { resolveJudge } from '../judge/judge-options.js';
import { defaultStrategy, select, type Candidate } from '../select/index.js';
import { configKey, type Priors } from '../select/priors.js';
import type { JudgeReport, Selection, Strategy, Trajectory } from '../types/index.js';
import type { SolveContext, Slot } from './solve-context.js';

/** Whether `priors` tell the candidates apart: two or more configurations, at least one with a record. */
export function priorsApply(priors: Priors | undefined, trajectories: readonly Trajectory[]): boolean {
  if (!priors) return false;
  const keys = new Set(trajectories.map(configKey));
  return keys.size > 1 && [...keys].some((key) => priors.configs[key] !== undefined);
}

/**
 * The selection, after the pairwise judge's pass when the strategy reads a judge and one is
 * configured (the request's, else the server's). A failing judge does not fail the job: selection
 * goes on without it and `judge.error` says why.
 */
export async function selectCandidate(
  context: SolveContext,
): Promise<{ selection: Selection; chosen: Slot | undefined; judge: JudgeReport | null }> {
  const { request, valueModel, task } = context;
  const usable = context.slots.filter((slot) => slot.status === 'finished' && slot.trajectory);
  // The folder's selector also when this job does not score (its priors, for robust).
  const folder = context.deps.valueModel?.selector;
  const mixed = priorsApply(
    folder?.priors,
    usable.map((slot) => slot.trajectory!),
  );
  // Checked at submit (src/server/routes/solve.ts), so this does not throw for a job that started.
  const { strategy, judge: judgeOptions } = resolveJudge(
    { strategy: request.strategy, judge: request.judge },
    context.deps.judge,
    { strategy: 'body.strategy', judge: 'body.judge' },
    (): Strategy => (mixed ? 'robust' : defaultStrategy(context.verifying, valueModel)),
    context.verifying,
  );
  const candidates: Candidate[] = usable.map((slot) => ({
    trajectory: slot.trajectory!,
    score: slot.score,
    verify: slot.verify,
    checks: context.evidence.forCandidate(slot.index),
  }));
  const options = { instanceId: task.instance_id, selector: strategy === 'robust' ? folder : valueModel?.selector, task };
  const judged = judgeOptions
    ? await judgeCandidates(judgeOptions, strategy, candidates, task.problem_statement, options, context.hooks.signal)
    : undefined;
  const selection = select(strategy, candidates, {
    ...options,
    ...(judged?.scores ? { judge: judged.scores } : {}),
    ...(judged?.unavailable ? { judgeUnavailable: judged.unavailable } : {}),
  });
  const chosen = usable.find((slot) => slot.trajectory!.id === selection.chosen);
  context.hooks.emit({ type: 'selection', chosen_index: chosen?.index ?? null, trajectory_id: selection.chosen, reason: selection.reason });
  return { selection, chosen, judge: judged?.report ?? null };
}
