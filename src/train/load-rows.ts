/**
 * The load stage of `winnower train`: the labelled candidates of the rollout files (dataset.ts)
 * and, with `fromStore`, the verified ones of past jobs (store-rows.ts); and the model card's
 * summary of where they came from.
 */
import { wnwError } from '../errors.js';
import { groupBy } from '../util/group-by.js';
import { loadDataset, type LabelledCandidate } from './dataset.js';
import type { DataSource } from './model-card.js';
import { trainingRowsFromStore } from './store-rows.js';
import type { TrainOptions } from './train-options.js';

export interface TrainingRows {
  candidates: LabelledCandidate[];
  dropped: Record<string, number>;
  issues: unknown[];
  /** With fromStore: the jobs left out because a retry of theirs (or their retry family's newest job) counts instead (retry-families.ts). */
  supersededJobs?: string[];
}

/** The rollout files' labelled candidates and, with fromStore, the job store's verified ones. */
export async function loadTrainingRows(options: TrainOptions): Promise<TrainingRows> {
  const fromFiles = options.rollouts.length
    ? await loadDataset({
        rollouts: options.rollouts,
        sourceFrom: options.sourceFrom,
        format: options.format,
        labels: options.labels,
        tasks: options.tasks,
        permissiveOnly: options.permissiveOnly,
        onInvalid: options.onInvalid,
        signal: options.signal,
      })
    : { candidates: [], dropped: {}, issues: [] };
  if (!options.fromStore) return fromFiles;
  if (options.permissiveOnly)
    throw wnwError('WNW_ERR_INPUT_INVALID', '--permissive-only: rows from the job store carry no licence', {
      details: { field: 'permissive_only' },
    });
  const { candidates: stored, leftOut } = await trainingRowsFromStore(options.fromStore);
  if (stored.length + fromFiles.candidates.length === 0) {
    throw wnwError('WNW_ERR_INPUT_INVALID', `no verified candidates in the job store at ${options.fromStore} (jobs need verification on)`, {
      details: { field: 'from_store' },
    });
  }
  return { ...fromFiles, candidates: [...fromFiles.candidates, ...stored], supersededJobs: leftOut };
}

/** One entry per origin, licence and permissiveness, largest first within an origin. */
export function dataSources(candidates: LabelledCandidate[]): DataSource[] {
  return [...groupBy(candidates, (c) => `${c.origin}\0${c.license}\0${c.permissive}`).values()]
    .map((members) => ({
      origin: members[0]!.origin,
      license: members[0]!.license,
      permissive: members[0]!.permissive,
      candidates: members.length,
      instances: new Set(members.map((c) => c.trajectory.instance_id)).size,
      runs: [...new Set(members.map((c) => c.trajectory.source))].sort(),
    }))
    .sort((a, b) => (a.origin < b.origin ? -1 : a.origin > b.origin ? 1 : b.candidates - a.candidates));
}
