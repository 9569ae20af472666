import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { expandInputs, importTasks, importTrajectories } from '../../../src/rerank/importers/index.js';

const FIXTURE = new URL('../../fixtures/devstral/', import.meta.url).pathname;

describe('gzip-compressed inputs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wnw-gz-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads .jsonl.gz candidates and tasks exactly as the plain files', async () => {
    for (const name of ['candidates.jsonl', 'tasks.jsonl']) writeFileSync(join(dir, `${name}.gz`), gzipSync(readFileSync(join(FIXTURE, name))));
    const plain = await importTrajectories(join(FIXTURE, 'candidates.jsonl'));
    const packed = await importTrajectories(join(dir, 'candidates.jsonl.gz'));
    expect(packed.items).toEqual(plain.items);
    expect(packed.items.length).toBeGreaterThan(10);
    expect((await importTasks(join(dir, 'tasks.jsonl.gz'))).items).toEqual((await importTasks(join(FIXTURE, 'tasks.jsonl'))).items);
    expect(await expandInputs([dir])).toEqual([join(dir, 'candidates.jsonl.gz'), join(dir, 'tasks.jsonl.gz')]);
  });

  it('reads the bundled sample data (440 candidates, 377 tasks)', async () => {
    const root = new URL('../../../examples/devstral-verified/', import.meta.url).pathname;
    expect((await importTrajectories(join(root, 'candidates.jsonl.gz'))).items).toHaveLength(440);
    expect((await importTasks(join(root, 'tasks.jsonl.gz'))).items).toHaveLength(377);
  });
});
