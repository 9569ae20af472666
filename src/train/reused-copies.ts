/**
 * Rows of an exported job store (`winnower jobs export`) that repeat a run: a retry's candidate
 * taken from the earlier job is exported under both jobs, marked `meta.reused_from` under the retry
 * (docs/formats.md#reused-candidates). `train --rollouts` reads each run once, as `--from-store` does.
 */
import type { Trajectory } from '../types/index.js';

/** The run a row is: its stored id, the export's `<job_id>/` prefix taken off a reused row's id. */
function runOf(trajectory: Trajectory): string {
  const job = trajectory.meta.job_id;
  const prefix = typeof job === 'string' ? `${job}/` : undefined;
  return trajectory.meta.reused_from && prefix && trajectory.id.startsWith(prefix) ? trajectory.id.slice(prefix.length) : trajectory.id;
}

/** The reused rows whose run is already among `trajectories` (as another job's row, or as an earlier reused copy). */
export function reusedCopies(trajectories: readonly Trajectory[]): Set<Trajectory> {
  const own = new Set(trajectories.filter((trajectory) => !trajectory.meta.reused_from).map((trajectory) => trajectory.id));
  const seen = new Set<string>();
  const copies = new Set<Trajectory>();
  for (const trajectory of trajectories) {
    if (!trajectory.meta.reused_from) continue;
    const run = runOf(trajectory);
    if (own.has(run) || seen.has(run)) copies.add(trajectory);
    seen.add(run);
  }
  return copies;
}
