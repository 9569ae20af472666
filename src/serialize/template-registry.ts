/**
 * Serialization templates by name: `templates/<name>.yaml` beside this file (copied to dist/ by
 * scripts/copy-assets.mjs), plus any folders the caller names first. Each file is parsed,
 * validated and checked for unknown placeholders once, then cached.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { wnwError } from '../errors.js';
import { renderField } from './render.js';
import { ChatTemplateFile, FIELD_VARIABLES, TemplateFile, type AnyTemplateFile } from './template-schema.js';

/** Folder of the built-in templates, from src/ (tests, tsx), dist/src/ or the bundle in dist/cli/ alike. */
export const BUILTIN_TEMPLATE_DIR = fileURLToPath(new URL('./templates/', import.meta.url));

export interface TemplateLookup {
  /** Folders searched, in order, before the built-in templates. */
  dirs?: string[];
}

const cache = new Map<string, AnyTemplateFile>();
/** The template each (name, folders) lookup resolved to: the serializer looks it up for every candidate. */
const byLookup = new Map<string, AnyTemplateFile>();

function searchPath(options: TemplateLookup): string[] {
  return [...(options.dirs ?? []).map((dir) => resolve(dir)), BUILTIN_TEMPLATE_DIR];
}

/** Names of every template found, sorted. */
export function listTemplates(options: TemplateLookup = {}): string[] {
  const names = new Set<string>();
  for (const dir of searchPath(options)) {
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir)) if (entry.endsWith('.yaml')) names.add(basename(entry, '.yaml'));
  }
  return [...names].sort();
}

/** Loads `<name>.yaml`; an unknown name or an invalid file is WNW_ERR_SCORE_TEMPLATE. */
export function loadTemplate(name: string, options: TemplateLookup = {}): AnyTemplateFile {
  const lookup = [name, ...(options.dirs ?? [])].join('\0');
  const known = byLookup.get(lookup);
  if (known) return known;
  const file = /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)
    ? searchPath(options)
        .map((dir) => join(dir, `${name}.yaml`))
        .find((candidate) => existsSync(candidate))
    : undefined;
  if (file === undefined) {
    const valid = listTemplates(options);
    throw wnwError('WNW_ERR_SCORE_TEMPLATE', `unknown serialization template "${name}"; valid: ${valid.join(', ')}`, {
      details: { template: name, valid },
    });
  }
  const template = cache.get(file) ?? parseTemplateFile(file, name);
  cache.set(file, template);
  byLookup.set(lookup, template);
  return template;
}

function parseTemplateFile(file: string, name: string): AnyTemplateFile {
  let raw: unknown;
  try {
    raw = parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw wnwError('WNW_ERR_SCORE_TEMPLATE', `${file}: ${(error as Error).message}`, { cause: error, details: { template: name, file } });
  }
  const chat = typeof raw === 'object' && raw !== null && (raw as { layout?: unknown }).layout === 'chat';
  const parsed = chat ? ChatTemplateFile.safeParse(raw) : TemplateFile.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join('.');
    throw wnwError('WNW_ERR_SCORE_TEMPLATE', `${file}: ${field}: ${issue.message}`, { details: { template: name, file, field } });
  }
  const template = parsed.data;
  if (template.name !== name) {
    throw wnwError('WNW_ERR_SCORE_TEMPLATE', `${file}: name is ${template.name}, expected ${name}`, {
      details: { template: name, file, field: 'name' },
    });
  }
  checkPlaceholders(template);
  return template;
}

/** Dry-renders every field with the placeholders it may use, so a typo fails at load, not mid-batch. */
function checkPlaceholders(template: AnyTemplateFile): void {
  if (template.layout === 'chat') {
    renderField(template.markers.text, { chars: '', lines: '' }, `${template.name}.markers.text`);
    return;
  }
  for (const [field, allowed] of Object.entries(FIELD_VARIABLES)) {
    const [group, key] = field.includes('.') ? (field.split('.') as [string, string]) : [field, undefined];
    const container = template as unknown as Record<string, unknown>;
    const value = key === undefined ? container[group] : (container[group] as Record<string, unknown>)[key];
    if (typeof value !== 'string') continue;
    renderField(value, Object.fromEntries(allowed.map((variable) => [variable, ''])), `${template.name}.${field}`);
  }
}
