/**
 * Submit-time checks of a request's scoring options, so that a typo in a template name or a budget
 * that cannot hold the template is a 400 naming the field, not a job that "succeeds" with nothing
 * scored. The budget is checked by serializing an empty candidate with the scorer's own tokenizer:
 * the same code, the same count, that scoring will use. Its verdict is remembered per scorer, since
 * most requests ask for the same few budgets.
 */
import { wnwError, WinnowerError } from '../../errors.js';
import { budgetFor, templateFor, type ScoringModel } from '../../scoring/score-candidates.js';
import type { Scorer } from '../../scoring/types.js';
import { listTemplates, loadTemplate, serializeTrajectory } from '../../serialize/index.js';
import { Task, Trajectory } from '../../types/index.js';

export interface ScoringOptions {
  template?: string;
  budgetTokens?: number;
  /** Whether the candidates have messages (they pick the trajectory template), or are patches only. */
  withMessages: boolean;
}

/** Throws WNW_ERR_INPUT_INVALID naming `fields.template` or `fields.budget`. */
export async function checkScoring(
  model: ScoringModel | undefined,
  options: ScoringOptions,
  fields: { template: string; budget: string },
): Promise<void> {
  if (options.template !== undefined) {
    try {
      loadTemplate(options.template);
    } catch (error) {
      const message =
        WinnowerError.isInstance(error) && error.code === 'WNW_ERR_SCORE_TEMPLATE'
          ? `unknown serialization template "${options.template}"`
          : 'template could not be loaded';
      throw wnwError('WNW_ERR_INPUT_INVALID', `${fields.template}: ${message}; valid: ${listTemplates().join(', ')}`, {
        details: { field: fields.template, valid: listTemplates() },
      });
    }
  }
  if (!model || options.budgetTokens === undefined) return;
  // As scoreCandidates picks it: the model's own template (model.template) for trajectories.
  const template = templateFor(options.withMessages, {
    template: options.template ?? (options.withMessages ? model.template : undefined),
  });
  const budgetTokens = budgetFor(model.scorer, options.budgetTokens);
  const reason = await budgetVerdict(model, template, budgetTokens, options.withMessages);
  if (reason !== undefined) {
    throw wnwError(
      'WNW_ERR_INPUT_INVALID',
      `${fields.budget}: ${budgetTokens} tokens cannot hold an empty candidate with template ${template} (${reason})`,
      {
        details: { field: fields.budget },
      },
    );
  }
}

/**
 * Verdicts kept per scorer: its own tokenizer did the count, so another scorer's (even of the same
 * model name) may differ. A scorer belongs to one value model, so its chat template is the same too.
 */
const VERDICTS_PER_SCORER = 64;
const verdicts = new WeakMap<Scorer, Map<string, string | undefined>>();

/** Undefined when an empty candidate fits `budgetTokens` with `template`, else why not. */
async function budgetVerdict(
  model: ScoringModel,
  template: string,
  budgetTokens: number,
  withMessages: boolean,
): Promise<string | undefined> {
  const { scorer } = model;
  const key = JSON.stringify([scorer.model, template, budgetTokens, withMessages]);
  let known = verdicts.get(scorer);
  if (known === undefined) verdicts.set(scorer, (known = new Map()));
  if (known.has(key)) return known.get(key);
  let verdict: string | undefined;
  try {
    const task = Task.parse({ instance_id: 'budget-check', problem_statement: '' });
    const candidate = Trajectory.parse({
      id: 'budget-check',
      instance_id: 'budget-check',
      source: 'budget-check',
      messages: withMessages ? [{ role: 'assistant', content: '' }] : [],
    });
    await serializeTrajectory(task, candidate, { template, budgetTokens, tokenizer: scorer.tokenizer, chatTemplate: model.chatTemplate });
  } catch (error) {
    verdict = error instanceof Error ? error.message.replace(/^budgetTokens \d+ is /, '') : String(error);
    // Only the budget's refusal is sure to be the same next time; any other failure is not remembered.
    if (!(WinnowerError.isInstance(error) && error.code === 'WNW_ERR_CFG_INVALID')) return verdict;
  }
  if (known.size >= VERDICTS_PER_SCORER) known.delete(known.keys().next().value!);
  known.set(key, verdict);
  return verdict;
}
