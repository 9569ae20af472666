/**
 * A job's view of the store while a replica holds its lease: once the job is lost to another
 * replica (its lease lapsed and was taken over), every write is refused, so a replica that lost
 * its hold cannot overwrite what the new holder writes. Reads pass through.
 */
import { wnwError } from '../errors.js';
import type { JobStore } from '../store/types.js';

const WRITES = new Set<keyof JobStore>([
  'createJob',
  'updateJob',
  'deleteJob',
  'purgeFinished',
  'putCandidate',
  'appendEvent',
  'markInterrupted',
]);

export function fencedStore(store: JobStore, lost: () => boolean): JobStore {
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      if (!WRITES.has(name as keyof JobStore)) return value.bind(target);
      return async (...args: unknown[]) => {
        if (lost()) throw wnwError('WNW_ERR_JOB_STATE', 'this replica no longer holds the job: the write is refused');
        return value.apply(target, args);
      };
    },
  });
}
