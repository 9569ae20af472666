/**
 * `learned`: one linear score per candidate over the standardised group signals (`signals.ts`),
 * with weights that `winnower train` fitted on labelled pools and stored in the model folder
 * (`selector.json`). Order: usable patch first, then the score, then smaller patch, then id. The
 * reasons list each candidate's largest contributions, so a choice explains itself.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { wnwError } from '../../errors.js';
import type { Selection, Task } from '../../types/index.js';
import { quantize, type Prepared, type PreparedInstance } from './prepare.js';
import { assemble, formatValue, type Ordering } from './rank.js';
import { SIGNALS, computeSignals, type SignalName, type Signals } from './signals.js';
import { rankByValue } from './value.js';

export const SELECTOR_FORMAT = 'winnower-selector-1';
export const SELECTOR_FILE = 'selector.json';

export const LearnedSelector = z.strictObject({
  format: z.literal(SELECTOR_FORMAT),
  signals: z.array(
    z.strictObject({
      name: z.enum(SIGNALS),
      mean: z.number(),
      std: z.number().positive(),
      weight: z.number(),
      /** False for a weight set by hand because the training data never showed the signal. */
      learned: z.boolean(),
    }),
  ),
});
export type LearnedSelector = z.infer<typeof LearnedSelector>;

/** The selector stored in `modelDir`, or undefined when the folder has none. */
export function loadSelector(modelDir: string): LearnedSelector | undefined {
  const file = join(modelDir, SELECTOR_FILE);
  if (!existsSync(file)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw wnwError('WNW_ERR_CFG_INVALID', `${SELECTOR_FILE} in the model folder is not JSON: ${(error as Error).message}`, { details: { field: SELECTOR_FILE } });
  }
  const parsed = LearnedSelector.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw wnwError('WNW_ERR_CFG_INVALID', `${SELECTOR_FILE}: ${issue.path.join('.')}: ${issue.message}`, { details: { field: `${SELECTOR_FILE}.${issue.path.join('.')}` } });
  }
  return parsed.data;
}

/** Each signal's contribution (weight × standardised value) and their sum. */
export function contributions(selector: LearnedSelector, signals: Signals): { total: number; parts: Array<{ name: SignalName; value: number }> } {
  let total = 0;
  const parts = selector.signals.map((signal) => {
    const value = (signal.weight * (signals[signal.name] - signal.mean)) / signal.std;
    total += value;
    return { name: signal.name, value };
  });
  return { total, parts };
}

export interface LearnedContext {
  selector: LearnedSelector;
  task?: Pick<Task, 'problem_statement'>;
}

/** Ranks by the learned score; without a selector this is the value strategy, and says so. */
export function rankLearned(instance: PreparedInstance, context: LearnedContext | undefined): Selection {
  if (!context) return rankByValue(instance, 'learned', 'no learned selector in the model folder');
  const signals = computeSignals(instance, context.task);
  const scored = new Map<Prepared, ReturnType<typeof contributions>>();
  instance.candidates.forEach((p, index) => scored.set(p, contributions(context.selector, signals[index]!)));
  const ordering: Ordering = {
    strategy: 'learned',
    key: (p) => [Number(p.usable), quantize(scored.get(p)!.total), -p.changedLines],
    primary: 2,
    tieSubject: 'learned score',
    tieBreaks: ['smaller patch'],
    reasons(p) {
      const { total, parts } = scored.get(p)!;
      const top = [...parts].filter((part) => Math.abs(part.value) >= 0.005).sort((a, b) => Math.abs(b.value) - Math.abs(a.value)).slice(0, 4);
      const listed = top.map((part) => `${part.name} ${part.value >= 0 ? '+' : ''}${formatValue(part.value)}`).join(', ');
      return [`learned score ${formatValue(total)}${listed ? ` (${listed})` : ''}`];
    },
    why(chosen, ranked) {
      const usable = ranked.filter((p) => p.usable).length;
      const top = [...scored.get(chosen)!.parts].sort((a, b) => b.value - a.value)[0];
      const lead = top && top.value > 0 ? `, most from ${top.name}` : '';
      return `chose ${chosen.id}: highest learned score (${formatValue(scored.get(chosen)!.total)}${lead}) of ${usable} usable candidate${usable === 1 ? '' : 's'}`;
    },
  };
  return assemble(instance, 'learned', ordering);
}
