/** Issue 27 item 25: with no source family to rotate over, train said "over 0 source families: ". */
import { describe, expect, it } from 'vitest';
import { checkHeldOutSources } from '../../src/train/source-check.js';
import type { TrainSplit } from '../../src/train/train-split.js';

describe('the source-check stage', () => {
  it('says why leave-one-source-out is skipped when no family has a mixed pool', async () => {
    const lines: string[] = [];
    const check = await checkHeldOutSources([], { bySource: false, validation: [] } as unknown as TrainSplit, [], {
      sourceCheck: 'loso',
      fit: {} as never,
      tables: (() => ({})) as never,
      log: (line) => lines.push(line),
    });
    expect(lines).toEqual([expect.stringContaining('leave-one-source-out: skipped')]);
    expect(lines.join('\n')).not.toContain('over 0 source families');
    expect(check.tables).toEqual([]);
  });
});
