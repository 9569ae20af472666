/**
 * Budget fitting as arithmetic on token counts (no tokenizer calls). Order of cuts, each only
 * while still over budget: long observations to head + tail (longest first), then thoughts to a
 * marker (longest first), then middle steps (from the centre outwards, one marker for the block).
 * Afterwards cuts that still fit are undone, most valuable first. The last resort (issue, patch,
 * actions) is `waterFill`, run by the caller on estimated counts.
 */
import { maxOf } from '../util/large-arrays.js';

export interface ObservationCounts {
  full: number;
  /** Tokens once cut to head + tail; absent when the observation is too short to cut. */
  cut?: number;
}

export interface StepCounts {
  /** The rendered step (thought + action). */
  full: number;
  /** The rendered step with its thought replaced by the marker. */
  elided: number;
  observations: ObservationCounts[];
}

export interface FitInput {
  /** Tokens that every plan contains: system, instance, patch, question. */
  fixed: number;
  steps: StepCounts[];
  /** Tokens of the dropped-steps marker. */
  stepsMarker: number;
  keepFirst: number;
  keepLast: number;
}

export interface StepPlan {
  elided: boolean[];
  cut: boolean[][];
  /** Dropped steps as a half-open range of positions, or null. */
  dropped: { start: number; end: number } | null;
  /** Tokens of the plan (sum of counts). */
  tokens: number;
}

type Applied = { kind: 'cut'; step: number; observation: number; savings: number } | { kind: 'elide'; step: number; savings: number };

export function fitSteps(input: FitInput, budget: number): StepPlan {
  const { steps } = input;
  const elided = steps.map(() => false);
  const cut = steps.map((step) => step.observations.map(() => false));
  const stepTokens = (index: number): number => {
    const step = steps[index]!;
    let tokens = elided[index] ? step.elided : step.full;
    step.observations.forEach((observation, position) => {
      tokens += cut[index]![position] ? observation.cut! : observation.full;
    });
    return tokens;
  };
  let total = input.fixed + steps.reduce((sum, _step, index) => sum + stepTokens(index), 0);
  const applied: Applied[] = [];

  const cuts = steps.flatMap((step, index) =>
    step.observations.flatMap((observation, position) =>
      observation.cut !== undefined && observation.cut < observation.full
        ? [{ kind: 'cut' as const, step: index, observation: position, savings: observation.full - observation.cut }]
        : [],
    ),
  );
  const elisions = steps.flatMap((step, index) =>
    step.elided < step.full ? [{ kind: 'elide' as const, step: index, savings: step.full - step.elided }] : [],
  );
  for (const action of [...byLargestSavings(cuts), ...byLargestSavings(elisions)]) {
    if (total <= budget) break;
    if (action.kind === 'cut') cut[action.step]![action.observation] = true;
    else elided[action.step] = true;
    total -= action.savings;
    applied.push(action);
  }

  let dropped: StepPlan['dropped'] = null;
  const low = Math.min(input.keepFirst, steps.length);
  const high = Math.max(low, steps.length - input.keepLast);
  if (total > budget && high > low) {
    const middle = Math.floor((low + high) / 2);
    let start = middle;
    let end = middle;
    total += input.stepsMarker;
    while (total > budget && (start > low || end < high)) {
      const growEnd = end < high && (end - middle <= middle - start || start === low);
      const index = growEnd ? end++ : --start;
      total -= stepTokens(index);
    }
    dropped = { start, end };
  }

  if (total <= budget) {
    const isKept = (index: number): boolean => dropped === null || index < dropped.start || index >= dropped.end;
    for (const action of applied.reverse()) {
      if (!isKept(action.step) || total + action.savings > budget) continue;
      if (action.kind === 'cut' && elided.some((value, index) => value && isKept(index))) continue;
      if (action.kind === 'cut') cut[action.step]![action.observation] = false;
      else elided[action.step] = false;
      total += action.savings;
    }
  }
  return { elided, cut, dropped, tokens: total };
}

function byLargestSavings<T extends { step: number; savings: number }>(actions: T[]): T[] {
  return actions.sort((a, b) => b.savings - a.savings || a.step - b.step);
}

/**
 * Largest cap C (tokens) such that every item keeps min(size, C) and pays `marker` when cut,
 * within `available`: Infinity when nothing needs cutting, undefined when even C = 0 is too big.
 */
export function waterFill(sizes: number[], available: number, marker: number): number | undefined {
  const cost = (cap: number): number => sizes.reduce((sum, size) => sum + Math.min(size, cap + marker), 0);
  if (cost(Number.POSITIVE_INFINITY) <= available) return Number.POSITIVE_INFINITY;
  if (cost(0) > available) return undefined;
  let low = 0;
  let high = maxOf(sizes, 0);
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (cost(middle) <= available) low = middle;
    else high = middle - 1;
  }
  return low;
}
