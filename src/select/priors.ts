/**
 * Own-history priors: how often each agent configuration (and each configuration on each
 * repository) resolved its labelled tasks, stored in selector.json by `winnower train` and used by
 * the `robust` strategy to rank candidates of configurations with a better record first. A
 * configuration is the candidate's `source` (run or policy name) plus its `config` object
 * (`meta.config`: model, harness, temperature, ...), so two runs of one policy under different
 * settings are told apart. Rates are shrunk toward the overall rate (pseudo-counts), so a
 * configuration seen a few times stays near it and an unseen one gets exactly it.
 */
import type { PriorCount, Priors, Trajectory } from '../types/index.js';

/** Pseudo-counts: a configuration's rate is shrunk toward the overall rate by this many tasks. */
export const CONFIG_SHRINK = 5;

export { PriorCount, Priors } from '../types/selector.js';

/** Keys sorted at every level, so equal configurations serialize equally. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value as Record<string, unknown>)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${stableJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The candidate's configuration object (`meta.config`), or null when it carries none. */
export function configOf(trajectory: Pick<Trajectory, 'meta'>): Record<string, unknown> | null {
  const config = trajectory.meta?.config;
  return config && typeof config === 'object' && !Array.isArray(config) ? (config as Record<string, unknown>) : null;
}

/** `source` alone, or `source {config as sorted JSON}`. */
export function configKey(trajectory: Pick<Trajectory, 'source' | 'meta'>): string {
  const config = configOf(trajectory);
  return config && Object.keys(config).length ? `${trajectory.source} ${stableJson(config)}` : trajectory.source;
}

export interface LabelledRow {
  trajectory: Pick<Trajectory, 'source' | 'meta'>;
  repo: string;
  resolved: boolean;
}

/** Counts per configuration and per configuration × repository. */
export function fitPriors(rows: LabelledRow[]): Priors {
  const configs: Record<string, PriorCount> = {};
  const repos: Record<string, PriorCount> = {};
  const add = (table: Record<string, PriorCount>, key: string, resolved: boolean) => {
    const count = (table[key] ??= { n: 0, resolved: 0 });
    count.n++;
    if (resolved) count.resolved++;
  };
  for (const row of rows) {
    const key = configKey(row.trajectory);
    add(configs, key, row.resolved);
    add(repos, `${key}\u0000${row.repo}`, row.resolved);
  }
  const sorted = (table: Record<string, PriorCount>) =>
    Object.fromEntries(Object.entries(table).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return {
    overall: rows.length ? rows.filter((row) => row.resolved).length / rows.length : 0,
    configs: sorted(configs),
    repos: sorted(repos),
  };
}

/** The shrunk resolve rate of the candidate's configuration (the overall rate when unseen). */
export function configPrior(priors: Priors, trajectory: Pick<Trajectory, 'source' | 'meta'>): number {
  const count = priors.configs[configKey(trajectory)];
  if (!count) return priors.overall;
  return (count.resolved + CONFIG_SHRINK * priors.overall) / (count.n + CONFIG_SHRINK);
}
