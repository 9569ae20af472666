/** Stage 2, scoring: the value model's verdict on one finished candidate (when scoring is on). */
import { scoreCandidates } from '../rerank/score-candidates.js';
import type { SolveContext, Slot } from './solve-context.js';

export async function scoreSlot(context: SolveContext, slot: Slot): Promise<void> {
  const { scorer, request, hooks } = context;
  if (!scorer || !slot.trajectory) return;
  const [scored] = await scoreCandidates(scorer, context.task, [slot.trajectory], { template: request.scoring.template, budgetTokens: request.scoring.budget_tokens, signal: hooks.signal });
  slot.score = scored?.score;
  hooks.emit({ type: 'score-available', index: slot.index, value: slot.score?.value ?? null, ...(scored?.error ? { error: scored.error.message } : {}) });
}
