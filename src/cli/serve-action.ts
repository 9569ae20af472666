/** What `winnower serve` does once its flags are parsed; loaded only when it runs (serve.ts registers it). */
import { loadConfig } from '../config.js';
import { wnwError } from '../errors.js';
import { createRuntime } from './runtime.js';
import { reloadModel } from '../server/model-reload.js';
import type { ServeCommandFlags } from './serve.js';

/** What a listen error means for the operator, by its errno code. */
const LISTEN_FAILURES: Record<string, string> = {
  EADDRINUSE: 'is in use by another process',
  EACCES: 'may not be opened by this user',
  EADDRNOTAVAIL: 'is not an address of this machine',
};

/** The longest a graceful shutdown may take (jobs get DEFAULT_SHUTDOWN_GRACE_MS of it), then the process exits. */
const SHUTDOWN_LIMIT_MS = 20_000;

export async function runServe(flags: ServeCommandFlags): Promise<void> {
  const config = loadConfig({
    file: flags.config,
    overrides: { server: { host: flags.host, port: flags.port, data_dir: flags.dataDir, store: flags.store } },
  });
  const runtime = await createRuntime(config);
  const { app } = runtime;
  app.log.info(
    {
      sandbox: await runtime.sandboxes.describe(),
      scorer: { backend: runtime.valueModel.current.scorer.backend, model: runtime.valueModel.current.scorer.model },
    },
    'winnower starting',
  );
  if (runtime.interrupted.length)
    app.log.warn({ jobs: runtime.interrupted }, 'jobs interrupted by the previous shutdown are marked interrupted');
  if (config.server.api_keys.length === 0 && config.server.host !== '127.0.0.1' && config.server.host !== 'localhost') {
    app.log.warn('listening beyond loopback without API keys: set WINNOWER_API_KEYS');
  }
  if (config.server.repo_roots.length === 0 && config.server.host !== '127.0.0.1' && config.server.host !== 'localhost') {
    app.log.warn(
      'listening beyond loopback with no repository roots: requests may clone any git repository this user can read; set WINNOWER_REPO_ROOTS',
    );
  }
  if (config.server.host !== '127.0.0.1' && config.server.host !== 'localhost') {
    const open = [
      config.server.policy_hosts.length === 0 && 'server.policy_hosts (WINNOWER_POLICY_HOSTS)',
      config.server.repo_hosts.length === 0 && 'server.repo_hosts (WINNOWER_REPO_HOSTS)',
    ].filter(Boolean);
    if (open.length)
      app.log.warn(
        `listening beyond loopback without ${open.join(' or ')}: requests may make this server call any host; set them to the hosts clients may use`,
      );
  }
  let stopping = false;
  const stop = async (signal: string) => {
    // A second signal while shutting down exits at once, as it would have without a handler.
    if (stopping) process.exit(signal === 'SIGINT' ? 130 : 143);
    stopping = true;
    // The jobs stop first, in this tick: the sandbox registry's own handler for this signal closes
    // their sandboxes right after, and a rollout must read that as its job's stop, not a failure.
    const jobsStopped = runtime.jobs.shutdown();
    app.log.info({ signal }, 'shutting down: cancelling jobs and closing sandboxes');
    // Bounded: past it the process exits anyway, and the exit hooks still kill what runs
    // (sandboxes, host-side git) and remove the sandboxes' folders.
    const force = setTimeout(() => {
      app.log.error({ after_ms: SHUTDOWN_LIMIT_MS }, 'shutdown did not finish in time: exiting anyway');
      process.exit(1);
    }, SHUTDOWN_LIMIT_MS);
    force.unref();
    try {
      await jobsStopped;
      await runtime.close();
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
    process.exit(0);
  };
  // `on`, not `once`: the sandbox registry's handler exits by itself when it sees no other listener.
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  // SIGHUP re-reads the model folder serving now (a newly trained model.onnx, tokenizer and
  // selector.json), as POST /admin/model with no body does: the next request scores and selects
  // with it; a failed reload keeps the current model.
  process.on('SIGHUP', () => {
    reloadModel(app, runtime.valueModel, { via: 'SIGHUP' }).catch((error: unknown) =>
      app.log.error({ err: error }, 'scorer reload on SIGHUP failed: keeping the current model'),
    );
  });
  let address: string;
  try {
    address = await app.listen({ host: config.server.host, port: config.server.port });
  } catch (error) {
    // Nothing started yet but the runtime: close it (the store's files end cleanly), then say what to change.
    await runtime.close().catch(() => {});
    const code = (error as NodeJS.ErrnoException).code;
    const at = `${config.server.host}:${config.server.port}`;
    const why = code !== undefined && Object.hasOwn(LISTEN_FAILURES, code) ? LISTEN_FAILURES[code] : undefined;
    if (why) {
      throw wnwError('WNW_ERR_CFG_INVALID', `server.port: ${at} ${why}; choose another with --port (server.port) or --host (server.host)`, {
        details: { field: code === 'EADDRNOTAVAIL' ? 'server.host' : 'server.port', cause: code },
      });
    }
    throw error;
  }
  // Whatever the log level or format: one plain line saying the server is up and where.
  process.stderr.write(`winnower: listening on ${address} (POST /solve, /rerank, /score; GET /readyz, /openapi.json)\n`);
}
