/**
 * The learned selector's file (`selector.json` in the model folder, written by `winnower train`):
 * its schema and loader. A leaf of the selection code, so the selection seam (types.ts) can name
 * the selector without importing the strategy that uses it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { wnwError } from '../errors.js';
import { Priors } from './priors.js';
import { SIGNALS } from './signal-names.js';
import { TrajectoryWeights } from './trajectory-weights.js';

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
  /**
   * The strategy a request without one gets: `learned` only when `winnower train` found the
   * learned selector above the best trivial selector on sources held out of training, else
   * `robust`; absent in files written before it existed (then `learned`).
   */
  default_strategy: z.enum(['learned', 'robust']).optional(),
  /** Why `default_strategy` is what it is, in one sentence. */
  default_reason: z.string().optional(),
  /** Own-history priors per agent configuration (priors.ts), when the training rows had several. */
  priors: Priors.optional(),
  /** Trajectory-signal weights fitted on labelled pools with trajectories (trajectory-weights.ts); absent: the fixed priors. */
  trajectory: TrajectoryWeights.optional(),
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
    throw wnwError('WNW_ERR_CFG_INVALID', `${SELECTOR_FILE} in the model folder is not JSON: ${(error as Error).message}`, {
      details: { field: SELECTOR_FILE },
    });
  }
  const parsed = LearnedSelector.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw wnwError('WNW_ERR_CFG_INVALID', `${SELECTOR_FILE}: ${issue.path.join('.')}: ${issue.message}`, {
      details: { field: `${SELECTOR_FILE}.${issue.path.join('.')}` },
    });
  }
  return parsed.data;
}
