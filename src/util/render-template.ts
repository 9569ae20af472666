import { wnwError } from '../errors.js';

/**
 * Renders `{{name}}` placeholders. A placeholder without a value is an error (like Jinja's
 * StrictUndefined), so a typo in a prompt file fails loudly instead of sending "undefined".
 */
export function renderTemplate(template: string, values: Record<string, string | number>, templateName = 'template'): string {
  let out = '';
  for (const part of partsOf(template)) {
    if (typeof part === 'string') {
      out += part;
      continue;
    }
    const value = values[part.name];
    if (value === undefined) {
      throw wnwError('WNW_ERR_CFG_INVALID', `${templateName}: no value for {{${part.name}}}`, {
        details: { template: templateName, variable: part.name },
      });
    }
    out += String(value);
  }
  return out;
}

type Part = string | { name: string };

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/**
 * Templates split once into text and placeholders: the serializer renders a few template
 * fields for every step of every candidate it scores (bench/results/service.md). Templates
 * come from config and template files, so the set is small; the cap keeps a caller that
 * renders ever-new templates from growing it.
 */
const compiled = new Map<string, Part[]>();
const MAX_COMPILED = 512;

function partsOf(template: string): Part[] {
  const known = compiled.get(template);
  if (known) return known;
  const parts: Part[] = [];
  let from = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    if (match.index > from) parts.push(template.slice(from, match.index));
    parts.push({ name: match[1]! });
    from = match.index + match[0].length;
  }
  if (from < template.length) parts.push(template.slice(from));
  if (compiled.size >= MAX_COMPILED) compiled.clear();
  compiled.set(template, parts);
  return parts;
}
