/** What `winnower rerank` prints on stderr about candidates left unscored (src/cli/rerank-summary.ts), and its exit status. */
import { describe, expect, it } from 'vitest';
import { EXIT_UNSCORED, rerankExitCode, rerankSummary } from '../../src/cli/rerank-summary.js';
import type { Unscored } from '../../src/rerank/rerank-batch.js';

const reason = (instanceId: string) => ({
  instance_id: instanceId,
  trajectory_id: `run/${instanceId}`,
  code: 'WNW_ERR_SCORE_UPSTREAM',
  message: '503',
});
const unscored = (candidates: number, instances: string[], reasons = instances.map(reason)): Unscored => ({
  candidates,
  instances,
  reasons,
});
const warning = {
  code: 'WNW_ERR_INPUT_INVALID',
  message: '1 instance(s) have candidates but no task record (e.g. i1); they were scored without the issue text',
  instances: ['i1'],
};

describe('rerankSummary', () => {
  it.each([
    [
      'nothing unscored: the warnings only',
      { candidates: 4, warnings: [warning], unscored: unscored(0, []) },
      [`rerank: warning: ${warning.message}`],
      0,
    ],
    [
      'candidates unscored, every instance with a scored one',
      { candidates: 4, warnings: [], unscored: unscored(1, [], [reason('i2')]) },
      ['rerank: 1 of 4 candidate(s) could not be scored; first reasons:', '  run/i2: WNW_ERR_SCORE_UPSTREAM: 503'],
      0,
    ],
    [
      'instances without a scored candidate, named up to five',
      { candidates: 14, warnings: [], unscored: unscored(7, ['i1', 'i2', 'i3', 'i4', 'i5', 'i6', 'i7'], [reason('i1')]) },
      [
        'rerank: 7 of 14 candidate(s) could not be scored; 7 instance(s) have no scored candidate (i1, i2, i3, i4, i5, ...); first reasons:',
        '  run/i1: WNW_ERR_SCORE_UPSTREAM: 503',
      ],
      EXIT_UNSCORED,
    ],
    [
      'five instances: all named, no ellipsis',
      { candidates: 5, warnings: [], unscored: unscored(5, ['i1', 'i2', 'i3', 'i4', 'i5'], []) },
      ['rerank: 5 of 5 candidate(s) could not be scored; 5 instance(s) have no scored candidate (i1, i2, i3, i4, i5); first reasons:'],
      EXIT_UNSCORED,
    ],
  ])('%s', (_name, result, lines, exit) => {
    expect(rerankSummary(result)).toEqual(lines);
    expect(rerankExitCode(result)).toBe(exit);
  });
});
