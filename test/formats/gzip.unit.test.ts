import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { expandInputs, importTasks, importTrajectories } from '../../src/formats/index.js';
import { describeRealData } from '../support/shared-data.js';
import { ownFixture, realDevstral } from './fixture-path.js';

/** Gzips `candidates` and `tasks` into a fresh folder and checks both read exactly as the plain files. */
async function expectGzipReadsAsPlain(candidates: string, tasks: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'wnw-gz-'));
  try {
    writeFileSync(join(dir, 'candidates.jsonl.gz'), gzipSync(readFileSync(candidates)));
    writeFileSync(join(dir, 'tasks.jsonl.gz'), gzipSync(readFileSync(tasks)));
    const plain = await importTrajectories(candidates);
    const packed = await importTrajectories(join(dir, 'candidates.jsonl.gz'));
    expect(packed.items).toEqual(plain.items);
    expect((await importTasks(join(dir, 'tasks.jsonl.gz'))).items).toEqual((await importTasks(tasks)).items);
    expect(await expandInputs([dir])).toEqual([join(dir, 'candidates.jsonl.gz'), join(dir, 'tasks.jsonl.gz')]);
    return packed.items.length;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('gzip-compressed inputs', () => {
  it('reads .jsonl.gz candidates and tasks exactly as the plain files', async () => {
    expect(await expectGzipReadsAsPlain(ownFixture('swebench', 'predictions.jsonl'), ownFixture('swebench', 'tasks.jsonl'))).toBe(13);
  });

  it('reads a .json.gz document (a single trajectory) as the plain file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wnw-gz-'));
    try {
      const source = ownFixture('swe-agent', 'acme__widgets-102.traj');
      writeFileSync(join(dir, 'acme__widgets-102.traj.gz'), gzipSync(readFileSync(source)));
      const packed = await importTrajectories(join(dir, 'acme__widgets-102.traj.gz'));
      expect(packed.items).toHaveLength(1);
      expect(packed.items).toEqual((await importTrajectories(source)).items);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describeRealData('gzip-compressed inputs: the Devstral sample', 'devstral-verified', () => {
  it('reads the 440 candidates and 377 tasks gzipped exactly as plain', async () => {
    expect(await expectGzipReadsAsPlain(realDevstral('candidates.jsonl'), realDevstral('tasks.jsonl'))).toBe(440);
    expect((await importTasks(realDevstral('tasks.jsonl'))).items).toHaveLength(377);
  });
});
