/**
 * The rerank inputs as a stream (src/formats onItem, src/rerank/candidate-spool.ts): every
 * candidate handed on as it is read and none collected, read back one instance at a time in input
 * order, duplicates still refused, the spool's file gone once closed.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importTasks } from '../../src/formats/index.js';
import { importRuns } from '../../src/formats/import-runs.js';
import { createCandidateSpool } from '../../src/rerank/candidate-spool.js';
import type { Trajectory } from '../../src/types/index.js';

let dir = '';
const row = (instance: string, source: string, patch: string) =>
  JSON.stringify({ instance_id: instance, model_name_or_path: source, model_patch: patch, resolved: patch !== '' });

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'wnw-spool-'));
  writeFileSync(
    join(dir, 'a.jsonl'),
    [row('x-1', 'run-a', 'p1'), row('y-2', 'run-a', 'p2'), row('x-1', 'run-b', 'p3'), row('z-3', 'run-a', '')].join('\n'),
  );
  writeFileSync(join(dir, 'dup.jsonl'), [row('x-1', 'run-a', 'p1'), row('x-1', 'run-a', 'p9')].join('\n'));
  writeFileSync(
    join(dir, 'tasks.jsonl'),
    [
      JSON.stringify({ instance_id: 'x-1', problem_statement: 'fix x', repo: 'o/x' }),
      JSON.stringify({ instance_id: 'y-2', problem_statement: 'fix y', repo: 'o/y' }),
    ].join('\n'),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('rerank inputs as a stream', () => {
  it('hands every candidate on in input order and collects none', async () => {
    const seen: Trajectory[] = [];
    const result = await importRuns([join(dir, 'a.jsonl')], { flag: '--candidates', onItem: (t) => seen.push(t) });
    expect(result.items).toEqual([]);
    expect(seen.map((t) => `${t.instance_id}:${t.patch}`)).toEqual(['x-1:p1', 'y-2:p2', 'x-1:p3', 'z-3:']);
  });

  it('still refuses a trajectory id seen twice', async () => {
    await expect(importRuns([join(dir, 'dup.jsonl')], { flag: '--candidates', onItem: () => undefined })).rejects.toThrow(/duplicate/);
  });

  it('reads each instance back in input order, with its task record, and removes its file on close', async () => {
    const spool = createCandidateSpool();
    await importRuns([join(dir, 'a.jsonl')], { flag: '--candidates', onItem: (t) => spool.add(t) });
    const tasks = await importTasks(join(dir, 'tasks.jsonl'), { onItem: (task) => spool.addTask(task) });
    expect(tasks.items).toEqual([]);
    expect(spool.candidateCount).toBe(4);
    expect([...spool.instances.keys()]).toEqual(['x-1', 'y-2', 'z-3']);
    expect(spool.instances.get('x-1')).toEqual([
      { id: 'run-a/x-1', source: 'run-a' },
      { id: 'run-b/x-1', source: 'run-b' },
    ]);
    expect(spool.candidatesOf('x-1').map((t) => t.patch)).toEqual(['p1', 'p3']);
    expect(spool.task('y-2')?.problem_statement).toBe('fix y');
    expect(spool.task('z-3')).toBeUndefined();
    expect([spool.hasTask('x-1'), spool.hasTask('z-3'), spool.taskCount]).toEqual([true, false, 2]);
    expect(existsSync(spool.file)).toBe(true);
    spool.close();
    spool.close();
    expect(existsSync(spool.file)).toBe(false);
  });
});
