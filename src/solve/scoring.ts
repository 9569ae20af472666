/**
 * Stage 2, scoring: the value model's verdict on one finished candidate (when scoring is on). A
 * candidate whose patch can never be chosen (no patch, unparseable, refused by the patch rules)
 * is announced as such and not scored: a value for it would only read as a rank it cannot have.
 */
import { unusableOf } from '../select/index.js';
import { scoreCandidates } from '../scoring/score-candidates.js';
import type { SolveContext, Slot } from './solve-context.js';

/** Why a finished candidate's patch can never be chosen, before any test: no patch, unparseable, refused. */
export function unusablePatch(slot: Slot): { kind: string; reason: string } | null {
  if (!slot.trajectory) return null;
  try {
    return unusableOf({ trajectory: slot.trajectory });
  } catch {
    return null; // selection sets it aside with its code (src/select/usable-gate.ts)
  }
}

export async function scoreSlot(context: SolveContext, slot: Slot): Promise<void> {
  const { valueModel, request, hooks } = context;
  const unusable = unusablePatch(slot);
  if (unusable) {
    hooks.emit({
      type: 'candidate-unusable',
      index: slot.index,
      kind: unusable.kind,
      reason: unusable.kind === 'empty' ? 'no patch' : unusable.reason,
    });
    return;
  }
  if (!valueModel || !slot.trajectory) return;
  const down = await context.deps.scorerDown?.();
  if (down) {
    hooks.emit({ type: 'score-available', index: slot.index, value: null, error: down.message });
    return;
  }
  const [scored] = await scoreCandidates(valueModel, context.task, [slot.trajectory], {
    template: request.scoring.template,
    budgetTokens: request.scoring.budget_tokens,
    signal: hooks.signal,
  });
  slot.score = scored?.score;
  hooks.emit({
    type: 'score-available',
    index: slot.index,
    value: slot.score?.value ?? null,
    ...(scored?.error ? { error: scored.error.message } : {}),
  });
}
