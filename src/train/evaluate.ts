/**
 * The evaluation table of `winnower train`: every selector on the same validation pools, with
 * mean@1, pass@N, selected@1 and headroom closed (95% bootstrap intervals over pools), and AUC /
 * ECE for the selectors that produce probabilities. Trivial selectors are scored by expectation
 * (a tie or a random pick counts the mean of the tied candidates), so no run is luckier than
 * another.
 */
import { expectedCalibrationError, headroomClosed, rocAuc, type LabelledScore } from '../metrics/ranking.js';
import { prng } from '../util/prng.js';

export interface EvalCandidate {
  id: string;
  resolved: boolean;
  usable: boolean;
  changedLines: number;
  /** Normalized-patch cluster key; null when not usable. */
  clusterKey: string | null;
}

export interface EvalPool {
  pool: string;
  benchmark: string;
  candidates: EvalCandidate[];
  /** Per selector: the probability-like value of each candidate (same order), when it has one. */
  values: Record<string, Array<number | null>>;
  /** Per selector that picks one candidate itself (learned, value): the chosen id, or null. */
  chosen: Record<string, string | null>;
}

export const TRIVIAL_SELECTORS = ['random', 'longest', 'shortest', 'majority'] as const;

export interface Interval {
  value: number | null;
  low: number | null;
  high: number | null;
}

export interface SelectorRow {
  selector: string;
  selected_at_1: Interval;
  headroom_closed: Interval;
  auc: Interval | null;
  /**
   * Within-pool AUC over usable (non-empty) candidates: the share of (resolved, unresolved) pairs
   * of one pool that the selector's ranking score orders right, ties counting half; null for a
   * selector with no score per candidate (random). Optional in tables stored before it existed.
   */
  within_auc?: Interval | null;
  ece: number | null;
}

export interface ScopeTable {
  scope: string;
  pools: number;
  candidates: number;
  mean_at_1: number | null;
  pass_at_n: number | null;
  rows: SelectorRow[];
}

/** Expected share resolved when choosing uniformly among `picked`. */
function expected(picked: EvalCandidate[]): number {
  return picked.length ? picked.filter((c) => c.resolved).length / picked.length : 0;
}

function extremes(usable: EvalCandidate[], key: (c: EvalCandidate) => number): EvalCandidate[] {
  if (usable.length === 0) return [];
  const best = Math.max(...usable.map(key));
  return usable.filter((c) => key(c) === best);
}

/**
 * The per-candidate ranking score a selector orders a pool's usable candidates by (higher first),
 * or null when it has none (random). Model selectors use their values.
 */
export function poolScores(pool: EvalPool, selector: string): Array<number | null> | null {
  switch (selector) {
    case 'random':
      return null;
    case 'longest':
      return pool.candidates.map((c) => c.changedLines);
    case 'shortest':
      return pool.candidates.map((c) => -c.changedLines);
    case 'majority': {
      const sizes = new Map<string, number>();
      for (const c of pool.candidates) if (c.usable) sizes.set(c.clusterKey!, (sizes.get(c.clusterKey!) ?? 0) + 1);
      return pool.candidates.map((c) => (c.usable ? sizes.get(c.clusterKey!)! : null));
    }
  }
  return pool.values[selector] ?? null;
}

/** Concordant and total (resolved, unresolved) pairs of usable candidates within one pool. */
function withinPairs(pool: EvalPool, selector: string): { concordant: number; pairs: number } | null {
  const scores = poolScores(pool, selector);
  if (!scores) return null;
  const usable = pool.candidates.map((c, i) => ({ c, v: scores[i] })).filter((x) => x.c.usable && x.v !== null && x.v !== undefined);
  let concordant = 0;
  let pairs = 0;
  for (const good of usable) {
    if (!good.c.resolved) continue;
    for (const bad of usable) {
      if (bad.c.resolved) continue;
      pairs++;
      concordant += good.v! > bad.v! ? 1 : good.v! === bad.v! ? 0.5 : 0;
    }
  }
  return { concordant, pairs };
}

/** Within-pool AUC over `pools` (see SelectorRow.within_auc); null without any mixed pair. */
export function withinPoolAuc(pools: EvalPool[], selector: string): number | null {
  let concordant = 0;
  let pairs = 0;
  for (const pool of pools) {
    const counted = withinPairs(pool, selector);
    if (!counted) return null;
    concordant += counted.concordant;
    pairs += counted.pairs;
  }
  return pairs ? concordant / pairs : null;
}

/** Expected selected@1 of one selector on one pool. */
export function poolSelected(pool: EvalPool, selector: string): number {
  const usable = pool.candidates.filter((c) => c.usable);
  switch (selector) {
    case 'random':
      return expected(usable);
    case 'longest':
      return expected(extremes(usable, (c) => c.changedLines));
    case 'shortest':
      return expected(extremes(usable, (c) => -c.changedLines));
    case 'majority': {
      const sizes = new Map<string, number>();
      for (const c of usable) sizes.set(c.clusterKey!, (sizes.get(c.clusterKey!) ?? 0) + 1);
      return expected(extremes(usable, (c) => sizes.get(c.clusterKey!)!));
    }
  }
  if (selector in pool.chosen) {
    const chosen = pool.chosen[selector];
    return chosen ? Number(pool.candidates.find((c) => c.id === chosen)?.resolved ?? false) : 0;
  }
  const values = pool.values[selector];
  if (!values) throw new Error(`no values for selector ${selector}`);
  const scored = pool.candidates.map((c, i) => ({ c, v: values[i] })).filter((x) => x.c.usable && x.v !== null && x.v !== undefined);
  if (scored.length === 0) return expected(usable);
  const best = Math.max(...scored.map((x) => x.v!));
  return expected(scored.filter((x) => x.v === best).map((x) => x.c));
}

interface PoolFacts {
  mean: number;
  pass: number;
}

function facts(pool: EvalPool): PoolFacts {
  const n = pool.candidates.length;
  return { mean: n ? pool.candidates.filter((c) => c.resolved).length / n : 0, pass: Number(pool.candidates.some((c) => c.resolved)) };
}

function quantile(sorted: number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (position - low);
}

function points(pools: EvalPool[], selector: string): LabelledScore[] {
  return pools.flatMap((pool) =>
    pool.candidates.flatMap((c, i) => {
      const v = pool.values[selector]?.[i];
      return v === null || v === undefined ? [] : [{ value: v, resolved: c.resolved }];
    }),
  );
}

export interface EvaluateOptions {
  selectors: string[];
  /** Selectors whose values are probabilities (AUC and ECE reported). */
  probabilistic: string[];
  bootstrap?: number;
  seed?: number;
}

/** One table: the given pools under every selector. */
export function evaluateScope(scope: string, pools: EvalPool[], options: EvaluateOptions): ScopeTable {
  const resamples = options.bootstrap ?? 1000;
  const random = prng(options.seed ?? 1);
  const poolFacts = pools.map(facts);
  const selected = new Map(options.selectors.map((selector) => [selector, pools.map((pool) => poolSelected(pool, selector))]));
  const n = pools.length;
  const meanOf = (values: number[], idx: number[]) => idx.reduce((sum, i) => sum + values[i]!, 0) / (idx.length || 1);
  const means = poolFacts.map((f) => f.mean);
  const passes = poolFacts.map((f) => f.pass);
  const all = pools.map((_, i) => i);
  const samples = Array.from({ length: n ? resamples : 0 }, () => Array.from({ length: n }, () => Math.floor(random() * n)));

  const rows = options.selectors.map((selector): SelectorRow => {
    const values = selected.get(selector)!;
    const point = n ? meanOf(values, all) : null;
    const headroom = n ? headroomClosed(point, meanOf(means, all), meanOf(passes, all)) : null;
    const sel: number[] = [];
    const head: number[] = [];
    for (const sample of samples) {
      sel.push(meanOf(values, sample));
      const h = headroomClosed(meanOf(values, sample), meanOf(means, sample), meanOf(passes, sample));
      if (h !== null) head.push(h);
    }
    sel.sort((a, b) => a - b);
    head.sort((a, b) => a - b);
    let auc: Interval | null = null;
    let ece: number | null = null;
    if (options.probabilistic.includes(selector)) {
      const pts = points(pools, selector);
      const aucs: number[] = [];
      for (const sample of samples.slice(0, Math.min(samples.length, 300))) {
        const a = rocAuc(
          points(
            sample.map((i) => pools[i]!),
            selector,
          ),
        );
        if (a !== null) aucs.push(a);
      }
      aucs.sort((a, b) => a - b);
      auc = { value: rocAuc(pts), low: quantile(aucs, 0.025), high: quantile(aucs, 0.975) };
      ece = expectedCalibrationError(pts);
    }
    let within: Interval | null = null;
    const withinPoint = n ? withinPoolAuc(pools, selector) : null;
    if (withinPoint !== null) {
      const draws: number[] = [];
      for (const sample of samples.slice(0, Math.min(samples.length, 300))) {
        const a = withinPoolAuc(
          sample.map((i) => pools[i]!),
          selector,
        );
        if (a !== null) draws.push(a);
      }
      draws.sort((a, b) => a - b);
      within = { value: withinPoint, low: quantile(draws, 0.025), high: quantile(draws, 0.975) };
    }
    return {
      selector,
      selected_at_1: { value: point, low: quantile(sel, 0.025), high: quantile(sel, 0.975) },
      headroom_closed: { value: headroom, low: quantile(head, 0.025), high: quantile(head, 0.975) },
      auc,
      within_auc: within,
      ece,
    };
  });
  return {
    scope,
    pools: n,
    candidates: pools.reduce((sum, pool) => sum + pool.candidates.length, 0),
    mean_at_1: n ? meanOf(means, all) : null,
    pass_at_n: n ? meanOf(passes, all) : null,
    rows,
  };
}

/** All pools, the mixed-label ones, and each benchmark; `prefix` names the split ("held-out instances: "). */
export function evaluateAll(pools: EvalPool[], options: EvaluateOptions, prefix = ''): ScopeTable[] {
  const mixed = pools.filter((pool) => pool.candidates.some((c) => c.resolved) && pool.candidates.some((c) => !c.resolved));
  const benchmarks = [...new Set(pools.map((pool) => pool.benchmark))].sort();
  return [
    evaluateScope(`${prefix}all`, pools, options),
    evaluateScope(`${prefix}mixed-label`, mixed, options),
    ...(benchmarks.length > 1
      ? benchmarks.map((b) =>
          evaluateScope(
            `${prefix}benchmark ${b}`,
            pools.filter((pool) => pool.benchmark === b),
            options,
          ),
        )
      : []),
  ];
}

/** The trivial selector with the highest selected@1 in `table` (ties: the first listed). */
export function bestTrivial(table: ScopeTable): SelectorRow | null {
  let best: SelectorRow | null = null;
  for (const row of table.rows) {
    if (!(TRIVIAL_SELECTORS as readonly string[]).includes(row.selector) || row.selected_at_1.value === null) continue;
    if (!best || row.selected_at_1.value > best.selected_at_1.value!) best = row;
  }
  return best;
}

/**
 * Whether `selector`'s selected@1 in `table` is above the best trivial selector's (`strict`), or
 * at or above it. A selector that only ties the best trivial one (e.g. a learned selector with no
 * weight left, ranking by its smaller-patch tie-break) does not beat it.
 */
export function beatsTrivial(table: ScopeTable, selector: string, strict = true): boolean {
  const row = table.rows.find((r) => r.selector === selector);
  const best = bestTrivial(table);
  if (!row || !best || row.selected_at_1.value === null) return false;
  const margin = row.selected_at_1.value - best.selected_at_1.value!;
  return strict ? margin > 1e-9 : margin >= -1e-9;
}

const pct = (x: number | null) => (x === null ? '  n/a' : `${(100 * x).toFixed(1)}`);
const num = (x: number | null) => (x === null ? 'n/a' : x.toFixed(3));
const interval = (i: Interval, format: (x: number | null) => string) => `${format(i.value)} [${format(i.low)}, ${format(i.high)}]`;

/** The tables as Markdown. */
export function formatTables(tables: ScopeTable[]): string {
  return tables
    .map((table) => {
      const head = `### ${table.scope}: ${table.pools} pools, ${table.candidates} candidates, mean@1 ${pct(table.mean_at_1)}%, pass@N ${pct(table.pass_at_n)}%\n\n`;
      const rows = table.rows.map(
        (row) =>
          `| ${row.selector} | ${interval(row.selected_at_1, pct)} | ${interval(row.headroom_closed, pct)} | ${row.within_auc ? interval(row.within_auc, num) : ''} | ${row.auc ? interval(row.auc, num) : ''} | ${row.ece === null ? '' : num(row.ece)} |`,
      );
      return `${head}| selector | selected@1 % [95% CI] | headroom closed % [95% CI] | within-pool AUC [95% CI] | AUC [95% CI] | ECE |\n|---|---|---|---|---|---|\n${rows.join('\n')}\n`;
    })
    .join('\n');
}
