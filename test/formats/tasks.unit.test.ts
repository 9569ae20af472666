import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { importTasks } from '../../src/formats/index.js';
import { taskFromRecord } from '../../src/formats/tasks.js';
import { describeRealData } from '../support/shared-data.js';
import { ownFixture, realDevstral, tempFile } from './fixture-path.js';

const rowsOf = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('task importer', () => {
  it('reads SWE-bench task records (F2P/P2P as JSON lists)', async () => {
    const file = ownFixture('swebench', 'tasks.jsonl');
    const { items, issues } = await importTasks(file);
    expect(issues).toEqual([]);
    expect(items).toHaveLength(12);
    const raw = rowsOf(file);
    const parser = items.find((t) => t.instance_id === 'beta__parser-12')!;
    const parserRaw = raw.find((r) => r.instance_id === 'beta__parser-12')!;
    expect(parser.repo).toEqual({ name: 'beta/parser', base_commit: parserRaw.base_commit });
    expect(parser.fail_to_pass).toEqual(['tests/test_grammar.py::test_subtraction', 'tests/test_grammar.py::test_mixed_signs']);
    expect(parser.pass_to_pass).toHaveLength(3);
    expect(parser.test_patch).toBe(parserRaw.test_patch);
    expect(parser.problem_statement).toBe('Subtraction is not parsed\n\n`parse("3 - 1")` stops after `3`.');
    expect(parser.meta.dataset).toBe('acme-bench');
    expect(parser.meta).not.toHaveProperty('FAIL_TO_PASS');
    expect(items.find((t) => t.instance_id === 'django__django-99002')!.pass_to_pass).toEqual([]);
    expect(new Set(items.map((t) => t.repo?.name)).size).toBe(7);
  });

  it('reads F2P/P2P as JSON-encoded strings (the Hugging Face shape), as a JSON array file', async () => {
    const file = tempFile(
      'tasks.json',
      JSON.stringify([
        {
          instance_id: 'acme__widgets-7',
          repo: 'acme/widgets',
          base_commit: '0123456789abcdef0123456789abcdef01234567',
          problem_statement: 'Widgets cannot be frozen',
          FAIL_TO_PASS: '["test_freeze"]',
          PASS_TO_PASS: '["test_create", "test_resize"]',
          version: 1.7,
          environment_setup_commit: 'abc',
        },
      ]),
    );
    const { items } = await importTasks(file);
    expect(items[0]).toMatchObject({
      instance_id: 'acme__widgets-7',
      repo: { name: 'acme/widgets', base_commit: '0123456789abcdef0123456789abcdef01234567' },
      fail_to_pass: ['test_freeze'],
      pass_to_pass: ['test_create', 'test_resize'],
      meta: { version: '1.7', environment_setup_commit: 'abc' },
    });
  });

  it('names the field when a test list is not a list', () => {
    expect(() => taskFromRecord({ instance_id: 'a__b-1', problem_statement: 'x', FAIL_TO_PASS: '["unterminated' })).toThrow(/FAIL_TO_PASS/);
    expect(() => taskFromRecord({ instance_id: 'a__b-1', problem_statement: 'x', PASS_TO_PASS: [1, 2] })).toThrow(/PASS_TO_PASS/);
  });

  // Issue 27 item 4: the message said `problem_statement: problem_statement: Invalid input`.
  it('names a missing field once in the error', async () => {
    const file = tempFile('tasks.jsonl', `${JSON.stringify({ instance_id: 'a__b-1' })}\n`);
    const error = await importTasks(file).then(
      () => undefined,
      (caught: Error) => caught,
    );
    expect(error?.message).toMatch(/tasks\.jsonl:1: problem_statement: [^:]*Invalid input/);
    expect(error?.message.match(/problem_statement/g)).toHaveLength(1);
  });
});

describeRealData('task importer on the Devstral sample', 'devstral-verified', () => {
  it('reads the 377 SWE-bench Verified task records (F2P/P2P as JSON lists)', async () => {
    const file = realDevstral('tasks.jsonl');
    const { items, issues } = await importTasks(file);
    expect(issues).toEqual([]);
    expect(items).toHaveLength(377);
    const raw = rowsOf(file);
    const requests = items.find((t) => t.instance_id === 'psf__requests-1766')!;
    const requestsRaw = raw.find((r) => r.instance_id === 'psf__requests-1766')!;
    expect(requests.repo).toEqual({ name: 'psf/requests', base_commit: requestsRaw.base_commit });
    expect(requests.fail_to_pass).toHaveLength(6);
    expect(requests.pass_to_pass).toHaveLength(79);
    expect(requests.fail_to_pass).toEqual(requestsRaw.FAIL_TO_PASS);
    expect(requests.test_patch).toBe(requestsRaw.test_patch);
    expect(requests.problem_statement).toBe(requestsRaw.problem_statement);
    expect(requests.meta.dataset).toBe('SWE-bench_Verified');
    expect(requests.meta).not.toHaveProperty('FAIL_TO_PASS');
    expect(new Set(items.map((t) => t.repo?.name)).size).toBe(10);
  });
});
