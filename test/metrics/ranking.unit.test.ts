import { describe, expect, it } from 'vitest';
import { WinnowerError } from '../../src/errors.js';
import {
  brierScore,
  calibrationBins,
  computeMetrics,
  expectedCalibrationError,
  headroomClosed,
  meanAt1,
  rocAuc,
  scoreHistogram,
  type MetricRow,
} from '../../src/metrics/ranking.js';

const row = (
  instance_id: string,
  repo: string,
  trajectory_id: string,
  value: number | null,
  resolved: boolean,
  selected = false,
): MetricRow => ({
  instance_id,
  repo,
  trajectory_id,
  value,
  resolved,
  selected,
});

/**
 * Four instances, two repositories:
 *   i1 (x/a): r1 0.9 ✓ selected, r2 0.6 ✗, r3 0.2 ✗    → share 1/3, any ✓, selected ✓
 *   i2 (x/a): r4 0.7 ✗ selected, r5 0.3 ✓              → share 1/2, any ✓, selected ✗
 *   i3 (y/b): r6 0.5 ✗ selected, r7 null ✗             → share 0,   any ✗, selected ✗
 *   i4 (y/b): r8 0.8 ✓ selected, r9 0.8 ✗              → share 1/2, any ✓, selected ✓
 */
const ROWS: MetricRow[] = [
  row('i1', 'x/a', 'r1', 0.9, true, true),
  row('i1', 'x/a', 'r2', 0.6, false),
  row('i1', 'x/a', 'r3', 0.2, false),
  row('i2', 'x/a', 'r4', 0.7, false, true),
  row('i2', 'x/a', 'r5', 0.3, true),
  row('i3', 'y/b', 'r6', 0.5, false, true),
  row('i3', 'y/b', 'r7', null, false),
  row('i4', 'y/b', 'r8', 0.8, true, true),
  row('i4', 'y/b', 'r9', 0.8, false),
];

describe('computeMetrics on a hand-computed example', () => {
  const report = computeMetrics(ROWS);

  it('overall', () => {
    const overall = report.overall;
    expect(overall).toMatchObject({ instances: 4, candidates: 9, resolved_candidates: 3, scored_candidates: 8, selected_instances: 4 });
    // mean@1 = (1/3 + 1/2 + 0 + 1/2) / 4 = 1/3
    expect(overall.mean_at_1).toBeCloseTo(1 / 3, 12);
    // pass@N = 3 of 4 instances have a resolved candidate
    expect(overall.pass_at_n).toBe(0.75);
    // selected@1 = (1 + 0 + 0 + 1) / 4
    expect(overall.selected_at_1).toBe(0.5);
    // headroom = (0.5 − 1/3) / (0.75 − 1/3) = (1/6) / (5/12) = 0.4
    expect(overall.headroom_closed).toBeCloseTo(0.4, 12);
    // AUC: positives 0.9, 0.3, 0.8; negatives 0.6, 0.2, 0.7, 0.5, 0.8 (r7 unscored, left out)
    //   0.9 beats 5; 0.3 beats 1 (0.2); 0.8 beats 4 and ties 1 (0.5) → 10.5 / (3 × 5) = 0.7
    expect(overall.auc).toBeCloseTo(0.7, 12);
    // Brier: 0.01 + 0.36 + 0.04 + 0.49 + 0.49 + 0.25 + 0.04 + 0.64 = 2.32; / 8 = 0.29
    expect(overall.brier).toBeCloseTo(0.29, 12);
    // ECE: single-point bins |v − y|: 0.2, 0.7, 0.5, 0.6, 0.7, 0.1 each weighted 1/8 → 2.8/8 = 0.35;
    //   bin [0.8, 0.9): 2 points, mean 0.8, observed 0.5 → 2/8 × 0.3 = 0.075; total 0.425
    expect(overall.ece).toBeCloseTo(0.425, 12);
  });

  it('per repository', () => {
    expect(Object.keys(report.by_repo)).toEqual(['x/a', 'y/b']);
    const a = report.by_repo['x/a']!;
    expect(a).toMatchObject({
      instances: 2,
      candidates: 5,
      resolved_candidates: 2,
      scored_candidates: 5,
      pass_at_n: 1,
      selected_at_1: 0.5,
    });
    // mean@1 = (1/3 + 1/2) / 2 = 5/12; headroom = (1/2 − 5/12) / (1 − 5/12) = 1/7
    expect(a.mean_at_1).toBeCloseTo(5 / 12, 12);
    expect(a.headroom_closed).toBeCloseTo(1 / 7, 12);
    // AUC: 0.9 beats 0.6, 0.2, 0.7; 0.3 beats 0.2 → 4 / 6
    expect(a.auc).toBeCloseTo(4 / 6, 12);
    // Brier: (0.01 + 0.36 + 0.04 + 0.49 + 0.49) / 5 = 0.278
    expect(a.brier).toBeCloseTo(0.278, 12);
    // ECE: every point alone in its bin: (0.1 + 0.6 + 0.2 + 0.7 + 0.7) / 5 = 0.46
    expect(a.ece).toBeCloseTo(0.46, 12);

    const b = report.by_repo['y/b']!;
    expect(b).toMatchObject({
      instances: 2,
      candidates: 4,
      resolved_candidates: 1,
      scored_candidates: 3,
      pass_at_n: 0.5,
      selected_at_1: 0.5,
    });
    // mean@1 = (0 + 1/2) / 2 = 0.25; headroom = (0.5 − 0.25) / (0.5 − 0.25) = 1
    expect(b.mean_at_1).toBe(0.25);
    expect(b.headroom_closed).toBe(1);
    // AUC: 0.8 beats 0.5, ties 0.8 → 1.5 / 2
    expect(b.auc).toBe(0.75);
    // Brier: (0.25 + 0.04 + 0.64) / 3 = 0.31
    expect(b.brier).toBeCloseTo(0.31, 12);
    // ECE: 1/3 × |0.5 − 0| + 2/3 × |0.8 − 0.5| = 1/6 + 0.2
    expect(b.ece).toBeCloseTo(1 / 6 + 0.2, 12);
  });

  it('calibration bins and histogram', () => {
    expect(report.calibration).toHaveLength(10);
    expect(report.calibration[8]).toMatchObject({ lower: 0.8, upper: 0.9, count: 2, observed: 0.5 });
    expect(report.calibration[8]!.mean_value).toBeCloseTo(0.8, 12);
    expect(report.calibration[0]).toEqual({ lower: 0, upper: 0.1, count: 0, mean_value: null, observed: null });
    expect(report.histogram).toHaveLength(20);
    expect(report.histogram.reduce((total, bin) => total + bin.resolved, 0)).toBe(3);
    expect(report.histogram.reduce((total, bin) => total + bin.unresolved, 0)).toBe(5);
    expect(report.histogram[16]).toMatchObject({ resolved: 1, unresolved: 1 });
  });
});

describe('single metrics', () => {
  it('AUC: ties count one half; all tied is 0.5; perfect and inverted orders; null with one class', () => {
    expect(
      rocAuc([
        { value: 0.5, resolved: true },
        { value: 0.5, resolved: false },
        { value: 0.5, resolved: false },
      ]),
    ).toBe(0.5);
    // positives 0.4, 0.4; negatives 0.4, 0.1: each positive beats 0.1 (1) and ties 0.4 (0.5) → 3 / 4
    expect(
      rocAuc([
        { value: 0.4, resolved: true },
        { value: 0.4, resolved: true },
        { value: 0.4, resolved: false },
        { value: 0.1, resolved: false },
      ]),
    ).toBe(0.75);
    expect(
      rocAuc([
        { value: 0.9, resolved: true },
        { value: 0.1, resolved: false },
      ]),
    ).toBe(1);
    expect(
      rocAuc([
        { value: 0.1, resolved: true },
        { value: 0.9, resolved: false },
      ]),
    ).toBe(0);
    expect(rocAuc([{ value: 0.9, resolved: true }])).toBeNull();
    expect(rocAuc([])).toBeNull();
  });

  it('ECE: 0 when each bin is calibrated; weighted by bin size; 1.0 falls in the last bin', () => {
    // bin [0.2, 0.3): four at 0.25, one resolved → |0.25 − 0.25| = 0
    const calibrated = [0, 1, 2, 3].map((index) => ({ value: 0.25, resolved: index === 0 }));
    expect(expectedCalibrationError(calibrated)).toBe(0);
    // one point 1.0 ✗ (last bin, error 1) and three 0.05 ✗ (first bin, error 0.05): (1 + 3 × 0.05) / 4
    const skewed = [{ value: 1, resolved: false }, ...[1, 2, 3].map(() => ({ value: 0.05, resolved: false }))];
    expect(expectedCalibrationError(skewed)).toBeCloseTo(1.15 / 4, 12);
    expect(calibrationBins(skewed)[9]).toMatchObject({ count: 1, mean_value: 1, observed: 0 });
    expect(expectedCalibrationError([])).toBeNull();
  });

  it('a value on a bin edge falls in the bin it opens, whatever the bin count', () => {
    // 0.29 × 100 and 0.58 × 50 are 28.999…96 in floating point.
    expect(calibrationBins([{ value: 0.29, resolved: true }], 100)[29]).toMatchObject({ lower: 0.29, count: 1 });
    expect(scoreHistogram([{ value: 0.58, resolved: true }], 50)[29]).toMatchObject({ lower: 0.58, resolved: 1 });
    for (const bins of [7, 10, 20, 50, 100]) {
      for (let index = 0; index < bins; index++) {
        expect(calibrationBins([{ value: index / bins, resolved: false }], bins)[index]!.count, `${index}/${bins}`).toBe(1);
      }
    }
  });

  it('Brier: mean squared error against the label', () => {
    // (0.2 − 0)² + (0.6 − 1)² = 0.04 + 0.16 → 0.1
    expect(
      brierScore([
        { value: 0.2, resolved: false },
        { value: 0.6, resolved: true },
      ]),
    ).toBeCloseTo(0.1, 12);
    expect(brierScore([])).toBeNull();
  });

  it('headroom closed is null when pass@N equals mean@1 (nothing or everything resolved)', () => {
    const allResolved = [row('i', 'r', 'a', 0.9, true, true), row('i', 'r', 'b', 0.1, true)];
    expect(computeMetrics(allResolved).overall).toMatchObject({
      mean_at_1: 1,
      pass_at_n: 1,
      selected_at_1: 1,
      headroom_closed: null,
      auc: null,
    });
    const noneResolved = [row('i', 'r', 'a', 0.9, false, true)];
    expect(computeMetrics(noneResolved).overall.headroom_closed).toBeNull();
    expect(headroomClosed(0.5, null, 0.7)).toBeNull();
    expect(headroomClosed(0.5, 0.25, 0.75)).toBe(0.5);
  });

  it('an instance with no selection counts as not resolved; no rows gives nulls', () => {
    const rows = [row('i1', 'r', 'a', 0.5, true), row('i2', 'r', 'b', 0.5, true, true)];
    expect(computeMetrics(rows).overall).toMatchObject({ selected_at_1: 0.5, selected_instances: 1 });
    expect(computeMetrics([]).overall).toMatchObject({
      instances: 0,
      mean_at_1: null,
      pass_at_n: null,
      selected_at_1: null,
      headroom_closed: null,
      auc: null,
      ece: null,
      brier: null,
    });
    expect(meanAt1([])).toBeNull();
  });

  it('histogram splits by label', () => {
    const histogram = scoreHistogram(
      [
        { value: 0.01, resolved: true },
        { value: 0.99, resolved: false },
        { value: 1, resolved: false },
      ],
      4,
    );
    expect(histogram.map((bin) => [bin.resolved, bin.unresolved])).toEqual([
      [1, 0],
      [0, 0],
      [0, 0],
      [0, 2],
    ]);
  });

  it('rejects two selections in an instance and an instance under two repositories', () => {
    const code = (rows: MetricRow[]): string | undefined => {
      try {
        computeMetrics(rows);
      } catch (error) {
        return WinnowerError.isInstance(error) ? error.code : 'other';
      }
      return undefined;
    };
    expect(code([row('i', 'r', 'a', 0.1, true, true), row('i', 'r', 'b', 0.2, false, true)])).toBe('WNW_ERR_INPUT_INVALID');
    expect(code([row('i', 'r', 'a', 0.1, true), row('i', 's', 'b', 0.2, false)])).toBe('WNW_ERR_INPUT_INVALID');
  });
});
