/**
 * This process's id in the shared queue: host name (a pod's name on Kubernetes), pid and a random
 * suffix, so a restarted container (pid 1 again) is never taken for the replica it replaces.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

export function replicaId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}
