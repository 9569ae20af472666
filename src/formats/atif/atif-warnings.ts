/** What to tell a user about ATIF-v1.8 input: which candidates carried keys winnower does not know, kept in `meta.atif_unknown`. */
import type { Trajectory } from '../../types/trajectory.js';

/** One line for the candidates whose ATIF had unknown keys, or undefined when none had. */
export function atifUnknownWarning(trajectories: readonly Trajectory[]): { message: string; ids: string[] } | undefined {
  const flagged = trajectories.filter((trajectory) => {
    const unknown = trajectory.meta.atif_unknown;
    return typeof unknown === 'object' && unknown !== null && Object.keys(unknown).length > 0;
  });
  if (flagged.length === 0) return undefined;
  const first = flagged[0]!;
  const keys = Object.keys(first.meta.atif_unknown as Record<string, unknown>);
  return {
    message: `${flagged.length} ATIF-v1.8 candidate(s) hold keys winnower does not know (e.g. ${first.id}: ${keys.slice(0, 3).join(', ')}); they were read without them and kept in meta.atif_unknown`,
    ids: flagged.map((trajectory) => trajectory.id),
  };
}
