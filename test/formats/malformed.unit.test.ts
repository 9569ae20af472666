import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { importTasks, importTrajectories } from '../../src/formats/index.js';
import { ownFixture, tempFile } from './fixture-path.js';

const PREDICTIONS = [
  '{"instance_id": "a__b-1", "model_name_or_path": "m", "model_patch": "p1"}',
  '{"instance_id": "a__b-2", "model_name_or_path": "m"}',
  '{"instance_id": "a__b-3", "model_name_or_path": "m", "model_patch": "p3"',
  '',
  '{"instance_id": 5, "model_name_or_path": "m", "model_patch": "p5"}',
  '{"instance_id": "a__b-6", "model_name_or_path": "m", "model_patch": "p6"}',
].join('\n');

describe('malformed input', () => {
  it('fails at the first bad line by default, naming file, line and field', async () => {
    const file = tempFile('bad.jsonl', PREDICTIONS);
    const error = await importTrajectories(file, { format: 'swebench-predictions' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'WNW_ERR_INPUT_INVALID', status: 400, details: { file, line: 2, field: 'model_patch' } });
    expect((error as Error).message).toContain(`${file}:2: model_patch:`);
  });

  it('skips bad lines with onInvalid skip and reports every one of them', async () => {
    const file = tempFile('bad.jsonl', PREDICTIONS);
    const { items, issues } = await importTrajectories(file, { onInvalid: 'skip' });
    expect(items.map((t) => t.id)).toEqual(['m/a__b-1', 'm/a__b-6']);
    expect(issues.map((issue) => [issue.line, issue.field, issue.code])).toEqual([
      [2, 'model_patch', 'WNW_ERR_INPUT_INVALID'],
      [3, '(json)', 'WNW_ERR_INPUT_INVALID'],
      [5, 'instance_id', 'WNW_ERR_INPUT_INVALID'],
    ]);
    expect(issues.every((issue) => issue.file === file)).toBe(true);
  });

  it('gives the nested zod path inside a message', async () => {
    const row = (name: unknown, id: string): string =>
      JSON.stringify({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name, arguments: '{}' } }] },
        ],
        metadata: { instance_id: id, source: 's' },
      });
    const file = tempFile('chat.jsonl', [row('bash', 'a__b-1'), row(7, 'a__b-2'), row('bash', 'a__b-3')].join('\n'));
    const { items, issues } = await importTrajectories(file, { onInvalid: 'skip' });
    expect(items).toHaveLength(2);
    expect(issues).toEqual([expect.objectContaining({ line: 2, field: 'messages[1].tool_calls[0].function.name' })]);
  });

  it('reports a bad role in a single-document trajectory by record path (no line)', async () => {
    const raw = JSON.parse(readFileSync(ownFixture('mini-swe-agent', 'text', 'acme__widgets-101.traj.json'), 'utf8')) as {
      messages: Array<{ role: string }>;
    };
    raw.messages[3]!.role = 'robot';
    const file = tempFile('broken.traj.json', JSON.stringify(raw, null, 2));
    await expect(importTrajectories(file)).rejects.toMatchObject({ details: { file, line: null, field: 'messages[3].role' } });
    const { items, issues } = await importTrajectories(file, { onInvalid: 'skip' });
    expect(items).toEqual([]);
    expect(issues).toEqual([expect.objectContaining({ file, field: 'messages[3].role' })]);
    expect(issues[0]).not.toHaveProperty('line');
    // the same record on one line is a one-record JSONL file: line 1
    const oneLine = tempFile('broken.jsonl', JSON.stringify(raw));
    await expect(importTrajectories(oneLine)).rejects.toMatchObject({ details: { file: oneLine, line: 1, field: 'messages[3].role' } });
  });

  it('reports bad task lines the same way', async () => {
    const file = tempFile(
      'tasks.jsonl',
      [
        '{"instance_id": "a__b-1", "problem_statement": "p", "FAIL_TO_PASS": "[\\"t1\\"]"}',
        '{"instance_id": "a__b-2"}',
        '{"instance_id": "a__b-3", "problem_statement": "p", "PASS_TO_PASS": "not json"}',
      ].join('\n'),
    );
    await expect(importTasks(file)).rejects.toMatchObject({ details: { line: 2, field: 'problem_statement' } });
    const { items, issues } = await importTasks(file, { onInvalid: 'skip' });
    expect(items.map((t) => [t.instance_id, t.fail_to_pass])).toEqual([['a__b-1', ['t1']]]);
    expect(issues.map((issue) => [issue.line, issue.field])).toEqual([
      [2, 'problem_statement'],
      [3, 'PASS_TO_PASS'],
    ]);
  });

  it('reports a file that is neither JSON nor JSONL', async () => {
    const file = tempFile('junk.json', 'this is not json\nat all\n');
    const { issues } = await importTasks(file, { onInvalid: 'skip' });
    expect(issues).toEqual([expect.objectContaining({ file, field: '(json)' })]);
  });
});
