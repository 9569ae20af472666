import { wnwError } from '../errors.js';

/**
 * Renders `{{name}}` placeholders. A placeholder without a value is an error (like Jinja's
 * StrictUndefined), so a typo in a prompt file fails loudly instead of sending "undefined".
 */
export function renderTemplate(template: string, values: Record<string, string | number>, templateName = 'template'): string {
  return template.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (_match, name: string) => {
    const value = values[name];
    if (value === undefined) {
      throw wnwError('WNW_ERR_CFG_INVALID', `${templateName}: no value for {{${name}}}`, {
        details: { template: templateName, variable: name },
      });
    }
    return String(value);
  });
}
