import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WinnowerError } from '../../src/errors.js';
import { renderField } from '../../src/serialize/render.js';
import { serializeTrajectory } from '../../src/serialize/serialize-trajectory.js';
import { BUILTIN_TEMPLATE_DIR, listTemplates, loadTemplate } from '../../src/serialize/template-registry.js';
import type { TemplateFile } from '../../src/serialize/template-schema.js';
import { task, toolTrajectory } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';

const judge = readFileSync(join(BUILTIN_TEMPLATE_DIR, 'judge-v1.yaml'), 'utf8');

function errorOf(run: () => unknown): WinnowerError {
  try {
    run();
  } catch (error) {
    if (WinnowerError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected an error');
}

/** A folder holding `judge-v1.yaml` rewritten by `edit` under `name`. */
function templateDir(name: string, edit: (yaml: string) => string): string {
  const dir = tempDir('wnw-templates-');
  writeFileSync(join(dir, `${name}.yaml`), edit(judge.replace('name: judge-v1', `name: ${name}`)));
  return dir;
}

describe('template registry', () => {
  it('lists and loads the built-in templates', () => {
    expect(listTemplates()).toEqual(expect.arrayContaining(['judge-v1', 'patch-v1']));
    const template = loadTemplate('judge-v1');
    expect(template).toMatchObject({ name: 'judge-v1', version: 1, layout: 'trajectory' });
    expect(template.defaults.chars_per_token).toBe(3.5);
    expect(loadTemplate('patch-v1').layout).toBe('patch');
    expect(loadTemplate('judge-v1')).toBe(template);
  });

  it('names the valid templates when the name is unknown', () => {
    for (const name of ['judge-v9', '../templates/judge-v1', '']) {
      const error = errorOf(() => loadTemplate(name));
      expect(error.code).toBe('WNW_ERR_SCORE_TEMPLATE');
      expect(error.message).toContain('judge-v1, openhands-critic-tool-calls-v1, openhands-critic-v1, patch-v1');
      expect(error.details.valid).toEqual(expect.arrayContaining(['judge-v1', 'patch-v1']));
    }
  });

  it('finds templates in the folders given first', () => {
    const dir = templateDir('custom-v1', (yaml) => yaml.replace('Answer with one word: YES or NO.', 'CUSTOM-SYSTEM'));
    expect(listTemplates({ dirs: [dir] })).toEqual(expect.arrayContaining(['custom-v1', 'judge-v1']));
    expect((loadTemplate('custom-v1', { dirs: [dir] }) as TemplateFile).system).toContain('CUSTOM-SYSTEM');
  });

  it('rejects a template with an undefined variable when it loads, naming field and variable', async () => {
    const dir = templateDir('typo-v1', (yaml) => yaml.replace('{{problem_statement}}', '{{problem}}'));
    const error = errorOf(() => loadTemplate('typo-v1', { dirs: [dir] }));
    expect(error.code).toBe('WNW_ERR_SCORE_TEMPLATE');
    expect(error.message).toContain('typo-v1.instance');
    expect(error.message).toContain('{{problem}}');
    await expect(
      serializeTrajectory(task, toolTrajectory('t', 1), { template: 'typo-v1', templateDirs: [dir], budgetTokens: 1000 }),
    ).rejects.toMatchObject({
      code: 'WNW_ERR_SCORE_TEMPLATE',
    });
  });

  it('rejects a template with a missing field, a wrong name or bad YAML', () => {
    const missing = templateDir('missing-v1', (yaml) => yaml.replace(/^step: \|[\s\S]*?(?=^observation:)/m, ''));
    expect(errorOf(() => loadTemplate('missing-v1', { dirs: [missing] })).message).toContain('step');
    const misnamed = templateDir('misnamed-v1', (yaml) => yaml.replace('name: misnamed-v1', 'name: other-v1'));
    expect(errorOf(() => loadTemplate('misnamed-v1', { dirs: [misnamed] })).code).toBe('WNW_ERR_SCORE_TEMPLATE');
    const broken = templateDir('broken-v1', () => 'name: [unclosed');
    expect(errorOf(() => loadTemplate('broken-v1', { dirs: [broken] })).code).toBe('WNW_ERR_SCORE_TEMPLATE');
  });
});

describe('renderField', () => {
  it('substitutes once and fails on an undefined variable', () => {
    expect(renderField('a {{ x }} b {{y}}', { x: '{{y}}', y: 2 }, 't.f')).toBe('a {{y}} b 2');
    const error = errorOf(() => renderField('{{missing}}', {}, 'judge-v1.step'));
    expect(error.code).toBe('WNW_ERR_SCORE_TEMPLATE');
    expect(error.message).toContain('judge-v1.step');
  });
});

describe('scripts/copy-assets.mjs', () => {
  it('copies the templates next to the compiled code', () => {
    const target = tempDir('wnw-dist-');
    execFileSync(process.execPath, ['scripts/copy-assets.mjs', 'src', target]);
    for (const name of ['judge-v1', 'patch-v1']) {
      const copied = join(target, 'serialize', 'templates', `${name}.yaml`);
      expect(existsSync(copied)).toBe(true);
      expect(readFileSync(copied, 'utf8')).toBe(readFileSync(join(BUILTIN_TEMPLATE_DIR, `${name}.yaml`), 'utf8'));
    }
  });
});
