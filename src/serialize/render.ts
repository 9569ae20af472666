/** Strict `{{name}}` rendering for serialization templates, on the project's one renderer. */
import { WinnowerError, wnwError } from '../errors.js';
import { renderTemplate } from '../util/render-template.js';

/**
 * Renders `source` with `values`; a placeholder without a value is WNW_ERR_SCORE_TEMPLATE naming
 * the template field (`where`, e.g. `judge-v1.step`) and the variable. Values are inserted as
 * they are, never rendered again, so `{{` inside a trajectory is harmless.
 */
export function renderField(source: string, values: Record<string, string | number>, where: string): string {
  try {
    return renderTemplate(source, values, where);
  } catch (error) {
    if (WinnowerError.isInstance(error) && error.code === 'WNW_ERR_CFG_INVALID') {
      throw wnwError('WNW_ERR_SCORE_TEMPLATE', `undefined template variable: ${error.message}`, { cause: error, details: error.details });
    }
    throw error;
  }
}
