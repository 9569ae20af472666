import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectFormat, expandInputs, importTrajectories, TRAJECTORY_FORMATS } from '../../src/formats/index.js';
import { globToRegExp } from '../../src/formats/expand-inputs.js';
import { describeRealData } from '../support/shared-data.js';
import { fixture, ownFixture, realDevstral, realTrajectory, tempFile } from './fixture-path.js';
import { tempDir } from '../support/temp-dir.js';

const PREDICTIONS = ownFixture('swebench', 'predictions.jsonl');

describe('format detection and dispatch', () => {
  it.each([
    ['mini-swe-agent/text/acme__widgets-101.traj.json', 'mini-swe-agent'],
    ['mini-swe-agent/toolcalls/acme__tools-301.traj.json', 'mini-swe-agent'],
    ['mini-swe-agent/messages/v2_count_lines.traj.json', 'mini-swe-agent'],
    ['openai-chat/acme__gadgets-204_3.json', 'openai-chat'],
    ['swe-agent/acme__widgets-102.traj', 'swe-agent'],
    ['swe-agent/acme__tools-302.function_calling.traj', 'swe-agent'],
    ['openhands/acme__gadgets-201.output.jsonl', 'openhands'],
    ['openhands/hello.trajectory.json', 'openhands'],
    ['swebench/predictions.jsonl', 'swebench-predictions'],
  ])('detects %s as %s', async (path, format) => {
    expect(await detectFormat(ownFixture(path))).toBe(format);
  });

  it('detects winnower JSONL, and a report.json or a tasks file as nothing', async () => {
    const own = tempFile(
      'own.jsonl',
      `${JSON.stringify({ format: 'winnower-trajectory-1', id: 's/a__b-1', instance_id: 'a__b-1', source: 's' })}\n`,
    );
    expect(await detectFormat(own)).toBe('winnower');
    expect(await detectFormat(ownFixture('mini-swe-agent', 'text', 'acme__widgets-101.report.json'))).toBeUndefined();
    expect(await detectFormat(ownFixture('swebench', 'tasks.jsonl'))).toBeUndefined();
  });

  it('goes by content, not by the file name', async () => {
    const dir = tempDir('winnower-detect-');
    const preds = join(dir, 'predictions.txt');
    copyFileSync(PREDICTIONS, preds);
    const mini = join(dir, 'looks-like.jsonl');
    writeFileSync(
      mini,
      JSON.stringify(JSON.parse(readFileSync(ownFixture('mini-swe-agent', 'text', 'acme__widgets-101.traj.json'), 'utf8'))),
    );
    expect(await detectFormat(preds)).toBe('swebench-predictions');
    expect(await detectFormat(mini)).toBe('mini-swe-agent');
    const { items } = await importTrajectories([preds, mini]);
    expect(items).toHaveLength(14);
    expect(items.at(-1)!.id).toBe('acme/coder-large/acme__widgets-101');
  });

  it('imports a whole folder of mixed formats through a glob', async () => {
    const { items, issues } = await importTrajectories(ownFixture('{mini-swe-agent,swe-agent,openhands}/**/*.{traj,traj.json,jsonl}'));
    expect(issues).toEqual([]);
    expect(items.map((t) => t.instance_id).sort()).toEqual([
      'acme__gadgets-201',
      'acme__gadgets-201',
      'acme__tools-301',
      'acme__tools-302',
      'acme__widgets-101',
      'acme__widgets-102',
      'acme__widgets-102',
      'v1_count_lines',
      'v2_count_lines',
    ]);
    expect(new Set(items.map((t) => t.meta.importer))).toEqual(new Set(['mini-swe-agent', 'swe-agent', 'openhands']));
  });

  it('reports a file that matches no importer with the valid format names', async () => {
    const report = ownFixture('mini-swe-agent', 'text', 'acme__widgets-101.report.json');
    await expect(importTrajectories(report)).rejects.toMatchObject({
      code: 'WNW_ERR_INPUT_FORMAT',
      message: expect.stringContaining(TRAJECTORY_FORMATS.join(', ')),
    });
    const skipped = await importTrajectories(ownFixture('mini-swe-agent', 'text'), { onInvalid: 'skip' });
    expect(skipped.items).toHaveLength(2);
    expect(skipped.issues.map((issue) => [issue.code, issue.field, issue.file.endsWith('.report.json')])).toEqual([
      ['WNW_ERR_INPUT_FORMAT', 'format', true],
      ['WNW_ERR_INPUT_FORMAT', 'format', true],
    ]);
  });

  it('lets an explicit format override detection, and rejects an unknown one listing the valid names', async () => {
    await expect(importTrajectories(PREDICTIONS, { format: 'openai-chat' })).rejects.toMatchObject({
      code: 'WNW_ERR_INPUT_INVALID',
      details: { line: 1, field: 'messages' },
    });
    await expect(importTrajectories(PREDICTIONS, { format: 'sweagent' })).rejects.toMatchObject({
      code: 'WNW_ERR_INPUT_FORMAT',
      details: { valid: [...TRAJECTORY_FORMATS] },
    });
  });

  it('tells apart prediction files sharing a model name by file name, and flags duplicate ids otherwise', async () => {
    const dir = tempDir('winnower-runs-');
    const line = (patch: string): string => `${JSON.stringify({ instance_id: 'a__b-1', model_name_or_path: 'm', model_patch: patch })}\n`;
    writeFileSync(join(dir, 'seed1.jsonl'), line('p1'));
    writeFileSync(join(dir, 'seed2.jsonl'), line('p2'));
    const bySource = await importTrajectories(dir, { sourceFrom: 'file' });
    expect(bySource.items.map((t) => [t.id, t.patch])).toEqual([
      ['seed1/a__b-1', 'p1'],
      ['seed2/a__b-1', 'p2'],
    ]);
    const clash = await importTrajectories(dir, { onInvalid: 'skip' });
    expect(clash.items).toHaveLength(1);
    expect(clash.issues).toEqual([expect.objectContaining({ field: 'id', record: 'm/a__b-1', file: join(dir, 'seed2.jsonl') })]);
  });
});

describe('expandInputs', () => {
  it('expands folders, globs and plain paths, without duplicates', async () => {
    const folder = await expandInputs([ownFixture('swe-agent')]);
    expect(folder.map((f) => f.split('/').pop())).toEqual(['acme__tools-302.function_calling.traj', 'acme__widgets-102.traj']);
    const globbed = await expandInputs([
      ownFixture('mini-swe-agent/*/*.report.json'),
      ownFixture('mini-swe-agent', 'text', 'acme__widgets-101.report.json'),
    ]);
    expect(globbed.map((f) => f.split('/').pop())).toEqual(['acme__gadgets-201.report.json', 'acme__widgets-101.report.json']);
  });

  it('reports a missing path or an empty glob as WNW_ERR_INPUT_NOT_FOUND', async () => {
    await expect(expandInputs([fixture('nope.jsonl')])).rejects.toMatchObject({ code: 'WNW_ERR_INPUT_NOT_FOUND' });
    await expect(expandInputs([ownFixture('**/*.parquet')])).rejects.toMatchObject({ code: 'WNW_ERR_INPUT_NOT_FOUND' });
  });

  it('matches * within a folder, ** across folders, {a,b} and ?', () => {
    expect(globToRegExp('*.json').test('a.json')).toBe(true);
    expect(globToRegExp('*.json').test('x/a.json')).toBe(false);
    expect(globToRegExp('**/*.json').test('a.json')).toBe(true);
    expect(globToRegExp('**/*.json').test('x/y/a.json')).toBe(true);
    expect(globToRegExp('run?/*.{json,jsonl}').test('run1/a.jsonl')).toBe(true);
    expect(globToRegExp('run?/*.{json,jsonl}').test('run12/a.jsonl')).toBe(false);
  });
});

describeRealData('format detection on public trajectories', 'trajectories', () => {
  it.each([
    ['mini-swe-agent-1_text/django__django-10999.traj.json', 'mini-swe-agent'],
    ['mini-swe-agent-1.1_toolcalls/pvlib__pvlib-python-1606.traj.json', 'mini-swe-agent'],
    ['mini-swe-agent_testdata-messages/v2_github_issue.traj.json', 'mini-swe-agent'],
    ['openai-chat-tools/Project-MONAI__MONAI-5686_4.json', 'openai-chat'],
    ['swe-agent-traj/pydicom__pydicom-1458.traj', 'swe-agent'],
    ['swe-agent-traj/marshmallow-code__marshmallow-1867.function_calling.traj', 'swe-agent'],
    ['openhands/ponylang__ponyc-4593.output.jsonl', 'openhands'],
    ['openhands/basic.trajectory.json', 'openhands'],
  ])('detects %s as %s', async (path, format) => {
    expect(await detectFormat(realTrajectory(path))).toBe(format);
  });

  it('detects a report.json as nothing, and reports it with the valid format names', async () => {
    const report = realTrajectory('mini-swe-agent-1_text', 'django__django-10999.report.json');
    expect(await detectFormat(report)).toBeUndefined();
    await expect(importTrajectories(report)).rejects.toMatchObject({
      code: 'WNW_ERR_INPUT_FORMAT',
      message: expect.stringContaining(TRAJECTORY_FORMATS.join(', ')),
    });
    const skipped = await importTrajectories(realTrajectory('mini-swe-agent-1_text'), { onInvalid: 'skip' });
    expect(skipped.items).toHaveLength(2);
    expect(skipped.issues.map((issue) => issue.file.endsWith('.report.json'))).toEqual([true, true]);
  });

  it('imports the whole folder of mixed formats through a glob', async () => {
    const { items, issues } = await importTrajectories(realTrajectory('**/*.{traj,traj.json,jsonl}'));
    expect(issues).toEqual([]);
    expect(items.map((t) => t.instance_id).sort()).toEqual([
      'django__django-10999',
      'django__django-14752',
      'marshmallow-code__marshmallow-1867',
      'ponylang__ponyc-4593',
      'pvlib__pvlib-python-1606',
      'pydicom__pydicom-1458',
      'scikit-learn__scikit-learn-14141',
      'v1_github_issue',
      'v2_github_issue',
    ]);
  });
});

describeRealData('format detection on the Devstral sample', 'devstral-verified', () => {
  it('detects the predictions by content, also under another name', async () => {
    expect(await detectFormat(realDevstral('candidates.jsonl'))).toBe('swebench-predictions');
    const preds = join(tempDir('winnower-detect-'), 'predictions.txt');
    copyFileSync(realDevstral('candidates.jsonl'), preds);
    expect(await detectFormat(preds)).toBe('swebench-predictions');
    expect((await importTrajectories(preds)).items).toHaveLength(440);
  });
});
