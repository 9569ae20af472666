/**
 * Submit-time checks of a request's scoring options, so that a typo in a template name or a budget
 * that cannot hold the template is a 400 naming the field, not a job that "succeeds" with nothing
 * scored. The budget is checked by serializing an empty candidate with the scorer's own tokenizer:
 * the same code, the same count, that scoring will use.
 */
import { wnwError, WinnowerError } from '../errors.js';
import { DEFAULT_PATCH_TEMPLATE, DEFAULT_TEMPLATE } from '../rerank/score-candidates.js';
import type { Scorer } from '../rerank/scorers/types.js';
import { listTemplates, loadTemplate, serializeTrajectory } from '../rerank/serialize/index.js';
import { Task, Trajectory } from '../types/index.js';

export interface ScoringOptions {
  template?: string;
  budgetTokens?: number;
  /** Whether the candidates have messages (they pick the trajectory template), or are patches only. */
  withMessages: boolean;
}

/** Throws WNW_ERR_INPUT_INVALID naming `fields.template` or `fields.budget`. */
export async function checkScoring(scorer: Scorer | undefined, options: ScoringOptions, fields: { template: string; budget: string }): Promise<void> {
  if (options.template !== undefined) {
    try {
      loadTemplate(options.template);
    } catch (error) {
      const message = WinnowerError.isInstance(error) && error.code === 'WNW_ERR_SCORE_TEMPLATE' ? `unknown serialization template "${options.template}"` : 'template could not be loaded';
      throw wnwError('WNW_ERR_INPUT_INVALID', `${fields.template}: ${message}; valid: ${listTemplates().join(', ')}`, {
        details: { field: fields.template, valid: listTemplates() },
      });
    }
  }
  if (!scorer || options.budgetTokens === undefined) return;
  const template = options.template ?? (options.withMessages ? DEFAULT_TEMPLATE : DEFAULT_PATCH_TEMPLATE);
  const task = Task.parse({ instance_id: 'budget-check', problem_statement: '' });
  const candidate = Trajectory.parse({ id: 'budget-check', instance_id: 'budget-check', source: 'budget-check', messages: options.withMessages ? [{ role: 'assistant', content: '' }] : [] });
  const budgetTokens = Math.min(options.budgetTokens, scorer.maxInputTokens);
  try {
    await serializeTrajectory(task, candidate, { template, budgetTokens, tokenizer: scorer.tokenizer });
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^budgetTokens \d+ is /, '') : String(error);
    throw wnwError('WNW_ERR_INPUT_INVALID', `${fields.budget}: ${budgetTokens} tokens cannot hold an empty candidate with template ${template} (${reason})`, {
      details: { field: fields.budget },
    });
  }
}
