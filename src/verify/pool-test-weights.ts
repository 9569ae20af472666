/**
 * The ranking of tests from the pool (docs/checks.md#tests-from-the-pool), from the pool matrix
 * alone. A pool test is valid when it failed on the base commit for the reason and at
 * least one candidate passes it. Valid tests with the same pass vector over the candidates agree:
 * they form a cluster, and each test of a cluster weighs the number of distinct candidates that
 * wrote one of them (dual execution agreement, as CodeT scores generated tests). A candidate's
 * score is the sum of the weights of the valid tests others wrote that it passes, and
 * `failed_weight` the sum of those it fails: its own tests are counted apart, since a patch
 * passing the test its own writer made for it is no evidence. Selection ranks by the failures
 * (docs/selection.md#hybrid): by the passes, the one test a writer cannot gain from is its own, so
 * writing a test would cost the writer that test's weight.
 */
import type { CandidatePoolScore, PoolCell, PoolCluster } from '../types/checks.js';

export interface PoolWeighing {
  /** Writers whose test is valid. */
  valid: Set<number>;
  /** Writers whose test failed on base for the reason but that no candidate passes. */
  unpassed: Set<number>;
  clusters: PoolCluster[];
  /** By candidate index: every candidate with a cell. */
  scores: Map<number, CandidatePoolScore>;
}

export function weighPoolTests(validOnBase: Iterable<number>, cells: readonly PoolCell[]): PoolWeighing {
  const onBase = new Set(validOnBase);
  const passers = new Map<number, number[]>();
  for (const writer of onBase) passers.set(writer, []);
  for (const cell of cells) if (cell.outcome === 'passed' && onBase.has(cell.writer)) passers.get(cell.writer)!.push(cell.index);
  const valid = new Set<number>();
  const unpassed = new Set<number>();
  const byVector = new Map<string, { writers: Set<number>; passes: number[] }>();
  for (const [writer, passes] of passers) {
    if (passes.length === 0) {
      unpassed.add(writer);
      continue;
    }
    valid.add(writer);
    const sorted = [...new Set(passes)].sort((a, b) => a - b);
    const key = sorted.join(',');
    const cluster = byVector.get(key) ?? { writers: new Set<number>(), passes: sorted };
    cluster.writers.add(writer);
    byVector.set(key, cluster);
  }
  const clusters: PoolCluster[] = [...byVector.values()]
    .map((cluster) => ({ writers: [...cluster.writers].sort((a, b) => a - b), passes: cluster.passes, weight: cluster.writers.size }))
    .sort((a, b) => b.weight - a.weight || a.writers[0]! - b.writers[0]!);
  const weightOf = new Map<number, number>();
  for (const cluster of clusters) for (const writer of cluster.writers) weightOf.set(writer, cluster.weight);
  const scores = new Map<number, CandidatePoolScore>();
  for (const cell of cells) {
    const score = scores.get(cell.index) ?? { score: 0, passed: 0, total: 0, own_passed: 0, own_total: 0, failed_weight: 0 };
    scores.set(cell.index, score);
    if (!valid.has(cell.writer) || cell.outcome === 'not_run') continue;
    const passed = cell.outcome === 'passed';
    if (cell.own) {
      score.own_total += 1;
      if (passed) score.own_passed += 1;
    } else {
      score.total += 1;
      if (passed) {
        score.passed += 1;
        score.score += weightOf.get(cell.writer)!;
      } else score.failed_weight = (score.failed_weight ?? 0) + weightOf.get(cell.writer)!;
    }
  }
  return { valid, unpassed, clusters, scores };
}
