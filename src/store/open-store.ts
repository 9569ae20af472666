/**
 * Opens the store `server.store` names: SQLite in `server.data_dir` (the embedded default), or
 * Postgres with the shared queue on the same pool. `where` is what may be shown of it.
 */
import { createSqliteStore } from './sqlite-store.js';
import { isPostgresUrl, redactStoreUrl } from './store-url.js';
import type { JobQueue, JobStore } from './types.js';

export interface OpenedStore {
  store: JobStore;
  /** The queue several replicas share; absent for SQLite, whose jobs belong to this process. */
  queue?: JobQueue;
  /** The store without credentials: `sqlite:<data_dir>` or the redacted URL. */
  where: string;
  /** One round trip to a networked store (/readyz); absent for SQLite. */
  ping?: () => Promise<void>;
}

export async function openJobStore(server: { store: string; data_dir: string }, replica: string): Promise<OpenedStore> {
  if (!isPostgresUrl(server.store)) return { store: createSqliteStore(server.data_dir), where: `sqlite:${server.data_dir}` };
  // Loaded only for a Postgres store: the driver is a tenth of a server's start-up otherwise.
  const [{ createPostgresStore }, { createPostgresQueue }] = await Promise.all([
    import('./postgres-store.js'),
    import('./postgres-queue.js'),
  ]);
  const store = await createPostgresStore(server.store);
  return {
    store,
    queue: createPostgresQueue(store, server.store, replica),
    where: redactStoreUrl(server.store),
    ping: () => store.ping(),
  };
}
