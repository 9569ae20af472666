/**
 * Train / validation split grouped by instance: an instance (all its candidates, under every
 * benchmark) is on one side only. Seeded and independent of input order: an instance's side
 * depends only on its id, the seed and the fraction. `holdoutRepos` sends whole repositories to
 * validation instead, for a repository-held-out estimate.
 */
import { hash32 } from '../util/prng.js';

export interface SplitOptions {
  seed: number;
  /** Share of instances in validation (ignored with holdoutRepos). */
  validationFraction: number;
  holdoutRepos?: string[];
}

export interface Splittable {
  trajectory: { instance_id: string };
  repo: string;
}

export function isValidation(item: Splittable, options: SplitOptions): boolean {
  if (options.holdoutRepos?.length) return options.holdoutRepos.includes(item.repo);
  return hash32(item.trajectory.instance_id, options.seed) / 2 ** 32 < options.validationFraction;
}

/** Fold (0 … folds − 1) of an instance for cross-fitting inside the training side. */
export function foldOf(instanceId: string, folds: number, seed: number): number {
  return hash32(instanceId, seed ^ 0x9e3779b9) % folds;
}

export function splitByInstance<T extends Splittable>(items: T[], options: SplitOptions): { train: T[]; validation: T[] } {
  const train: T[] = [];
  const validation: T[] = [];
  for (const item of items) (isValidation(item, options) ? validation : train).push(item);
  return { train, validation };
}

/** A run's family: the part of its source name before the first `/` (`acr/acr-run-1` → `acr`). */
export function sourceFamily(source: string): string {
  const slash = source.indexOf('/');
  return slash > 0 ? source.slice(0, slash) : source;
}

/** Whether `source` is one of `names`, or a run of a family named there. */
export function matchesSource(source: string, names: readonly string[]): boolean {
  return names.some((name) => source === name || sourceFamily(source) === name || source.startsWith(`${name}/`));
}

export interface SourceSplittable extends Splittable {
  trajectory: { instance_id: string; source: string };
  pool: string;
}

/**
 * Source-held-out split: every pool holding a candidate of a held-out source goes to validation
 * whole (the held-out agents' candidates beside whatever else ran on those instances), and the
 * training side keeps only the other pools. Training therefore never sees a held-out source, nor
 * an instance validated on. When the held-out sources ran on every instance (nothing would be
 * left to train on), the instances are halved by a seeded hash instead: one half validates, the
 * other half trains on the candidates of the other sources only.
 */
export function splitBySource<T extends SourceSplittable>(
  items: T[],
  holdout: readonly string[],
  seed = 1,
): { train: T[]; validation: T[] } {
  const held = new Set(items.filter((item) => matchesSource(item.trajectory.source, holdout)).map((item) => item.pool));
  const train: T[] = [];
  const validation: T[] = [];
  const everywhere = items.every((item) => held.has(item.pool));
  for (const item of items) {
    if (!everywhere) (held.has(item.pool) ? validation : train).push(item);
    else if (hash32(item.trajectory.instance_id, seed ^ 0x5bd1e995) / 2 ** 32 < 0.5) validation.push(item);
    else if (!matchesSource(item.trajectory.source, holdout)) train.push(item);
  }
  return { train, validation };
}

/**
 * The source families a leave-one-source-out evaluation rotates over: those whose held-out pools
 * include at least one with both outcomes (a family with none gives no selection to measure).
 */
export function rotatingSources<T extends SourceSplittable & { resolved: boolean }>(items: T[]): string[] {
  const outcomes = new Map<string, Set<boolean>>();
  for (const item of items) {
    const set = outcomes.get(item.pool) ?? new Set<boolean>();
    set.add(item.resolved);
    outcomes.set(item.pool, set);
  }
  const families = new Set<string>();
  for (const item of items) if (outcomes.get(item.pool)!.size === 2) families.add(sourceFamily(item.trajectory.source));
  return [...families].sort();
}
