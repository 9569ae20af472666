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
