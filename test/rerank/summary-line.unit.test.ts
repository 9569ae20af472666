/**
 * What a rerank run keeps of each candidate until its summary (src/rerank/summarize.ts
 * summaryLine): the value, the label, whether it was chosen and any error; the whole score only
 * for the report. Issue 31.5: memory that does not grow with the candidates beyond that.
 */
import { describe, expect, it } from 'vitest';
import { summaryLine } from '../../src/rerank/summarize.js';
import type { ScoreLine } from '../../src/rerank/types.js';

const score = {
  trajectory_id: 't',
  instance_id: 'i',
  value: 0.25,
  raw: -1.1,
  backend: 'onnx',
  model: 'm',
  template: 'patch-v1',
  input_tokens: 476,
  truncated: false,
  cut: { thoughts: 0, observations: 0, steps_dropped: 0, patch: false, tokens_before: 476 },
  cached: false,
};
const line: ScoreLine = {
  instance_id: 'i',
  trajectory_id: 't',
  source: 's',
  chosen: true,
  resolved: false,
  score,
  error: null,
  tamper: [],
};

describe('summaryLine', () => {
  it('keeps the value, not the score, without a report', () => {
    expect(summaryLine(line, false)).toEqual({
      instance_id: 'i',
      trajectory_id: 't',
      chosen: true,
      resolved: false,
      error: null,
      value: 0.25,
    });
  });

  it('keeps the whole score for the report, and the verdicts of a verified run', () => {
    const verified = { ...line, verify: null, checks: null };
    expect(summaryLine(verified, true)).toEqual({
      instance_id: 'i',
      trajectory_id: 't',
      chosen: true,
      resolved: false,
      error: null,
      value: 0.25,
      score,
      verify: null,
      checks: null,
    });
  });

  it('says an unscored candidate has no value, and why', () => {
    const error = { code: 'WNW_ERR_SCORE_UPSTREAM', message: 'down' };
    expect(summaryLine({ ...line, score: null, error }, true)).toMatchObject({ value: null, error });
    expect(summaryLine({ ...line, score: null, error }, true)).not.toHaveProperty('score');
  });
});
