import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { importTasks } from '../../../src/rerank/importers/index.js';
import { taskFromRecord } from '../../../src/rerank/importers/tasks.js';
import { fixture, tempFile } from './fixture-path.js';

describe('task importer', () => {
  it('reads the devstral tasks (F2P/P2P as JSON lists)', async () => {
    const file = fixture('devstral', 'tasks.jsonl');
    const { items, issues } = await importTasks(file);
    expect(issues).toEqual([]);
    expect(items).toHaveLength(12);
    const raw = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
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
    expect(new Set(items.map((t) => t.repo?.name)).size).toBe(7);
  });

  it('reads F2P/P2P as JSON-encoded strings (the Hugging Face shape), as a JSON array file', async () => {
    const file = tempFile(
      'tasks.json',
      JSON.stringify([
        {
          instance_id: 'sympy__sympy-20590',
          repo: 'sympy/sympy',
          base_commit: 'cffd4e0f86fefd4802349a9f9b19ed70934ea354',
          problem_statement: 'Symbol instances have __dict__',
          FAIL_TO_PASS: '["test_immutable"]',
          PASS_TO_PASS: '["test__aresame", "test_structure"]',
          version: 1.7,
          environment_setup_commit: 'abc',
        },
      ]),
    );
    const { items } = await importTasks(file);
    expect(items[0]).toMatchObject({
      instance_id: 'sympy__sympy-20590',
      repo: { name: 'sympy/sympy', base_commit: 'cffd4e0f86fefd4802349a9f9b19ed70934ea354' },
      fail_to_pass: ['test_immutable'],
      pass_to_pass: ['test__aresame', 'test_structure'],
      meta: { version: '1.7', environment_setup_commit: 'abc' },
    });
  });

  it('names the field when a test list is not a list', () => {
    expect(() => taskFromRecord({ instance_id: 'a__b-1', problem_statement: 'x', FAIL_TO_PASS: '["unterminated' })).toThrow(/FAIL_TO_PASS/);
    expect(() => taskFromRecord({ instance_id: 'a__b-1', problem_statement: 'x', PASS_TO_PASS: [1, 2] })).toThrow(/PASS_TO_PASS/);
  });
});
