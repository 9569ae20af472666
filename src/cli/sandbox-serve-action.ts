/**
 * What `winnower sandbox serve` does once its flags are parsed, loaded only when it runs
 * (sandbox-serve.ts registers it); also the Orchard Env API options `winnower serve` mounts.
 */
import { resolve } from 'node:path';
import Fastify from 'fastify';
import { loadConfig, type WinnowerConfig } from '../config.js';
import { wnwError } from '../errors.js';
import { loggerOptions } from '../observability/logger-options.js';
import { createSandboxProvider } from '../sandbox/registry.js';
import { orchardEnvApi, type OrchardEnvApiOptions } from '../sandbox/serve/plugin.js';
import { requestTimeoutOptions, sandboxApiKey, type SandboxServeConfig } from '../sandbox/serve/serve-config.js';
import type { SandboxProvider } from '../sandbox/types.js';
import type { RepoSource } from '../types/task.js';
import { isGitUrl } from './sandbox-run.js';
import type { ServeFlags } from './sandbox-serve.js';

/** `sandbox.serve` of the config as the API's options over `provider` (the key is checked by the caller). */
export function orchardApiOptions(
  serve: SandboxServeConfig | undefined,
  provider: SandboxProvider,
  apiKey: string | undefined,
): OrchardEnvApiOptions {
  if (serve?.as_root && provider.name !== 'local') {
    throw wnwError('WNW_ERR_CFG_INVALID', `--as-root (sandbox.serve.as_root) needs the local provider; this server uses ${provider.name}`, {
      details: { field: 'sandbox.serve.as_root' },
    });
  }
  return {
    provider,
    ...(serve?.repo ? { repo: repoSource(serve.repo, serve.commit) } : {}),
    ...(serve?.repo_mode ? { repoMode: serve.repo_mode } : {}),
    ...(serve?.as_root ? { asRoot: true } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(serve?.allow_network !== undefined ? { allowNetwork: serve.allow_network } : {}),
    ...(serve?.max_sandboxes ? { maxSandboxes: serve.max_sandboxes } : {}),
    ...(serve?.ttl_s ? { ttlS: serve.ttl_s } : {}),
    ...(serve?.heartbeat_timeout_s ? { heartbeatTimeoutS: serve.heartbeat_timeout_s } : {}),
  };
}

/**
 * The API to mount in `winnower serve` when `sandbox.serve.mount` is set, over the server's own
 * provider. Behind the server's API keys when it has some; otherwise behind SANDBOX_API_KEY (or
 * `sandbox.serve.api_key`), and refused beyond loopback without one.
 */
export function mountedSandboxApi(
  config: WinnowerConfig,
  provider: SandboxProvider,
): { prefix: string; options: OrchardEnvApiOptions } | undefined {
  const serve = config.sandbox.serve;
  if (!serve?.mount) return undefined;
  const apiKey = config.server.api_keys.length > 0 ? undefined : sandboxApiKey(serve, config.server.host);
  return { prefix: serve.mount, options: orchardApiOptions(serve, provider, apiKey) };
}

/** `--repo <path|url>` and `--commit` as a spec's repository (a path made absolute). */
export function repoSource(repo: string, commit: string | undefined): RepoSource {
  const base = commit ? { base_commit: commit } : {};
  return isGitUrl(repo) ? { url: repo, ...base } : { path: resolve(repo), ...base };
}

function serveOverrides(flags: ServeFlags): Record<string, unknown> {
  return {
    repo: flags.repo,
    repo_mode: flags.repoAlways ? 'always' : undefined,
    as_root: flags.asRoot,
    commit: flags.commit,
    allow_network: flags.allowNetwork,
    max_sandboxes: flags.maxSandboxes,
    ttl_s: flags.ttl,
    heartbeat_timeout_s: flags.heartbeatTimeout,
    request_timeout_s: flags.requestTimeout,
  };
}

async function serveSandboxes(config: WinnowerConfig, host: string, listenPort: number): Promise<void> {
  const serve = config.sandbox.serve;
  const apiKey = sandboxApiKey(serve, host);
  const provider = await createSandboxProvider(config.sandbox.provider, config.sandbox.settings, config.sandbox.patch);
  const app = Fastify({
    logger: loggerOptions(config.log_level, config.log_format),
    bodyLimit: 128 * 1024 * 1024,
    ...requestTimeoutOptions(serve),
  });
  await app.register(orchardEnvApi, orchardApiOptions(serve, provider, apiKey));
  app.log.info(
    {
      provider: await provider.describe(),
      repo: serve?.repo ?? null,
      repo_mode: serve?.repo ? (serve.repo_mode ?? 'fallback') : null,
      as_root: serve?.as_root ?? false,
      auth: apiKey ? 'X-API-Key' : 'none (loopback only)',
    },
    'winnower sandbox serve starting',
  );
  if (serve?.allow_network && config.sandbox.provider === 'local') {
    app.log.warn(
      "--allow-network: a sandbox created with block_network: false shares this host's network namespace, loopback services (this server included) reachable",
    );
  }
  let stopping = false;
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) process.exit(signal === 'SIGINT' ? 130 : 143);
    stopping = true;
    app.log.info({ signal }, 'shutting down: deleting every sandbox');
    try {
      await app.close();
      await provider.close();
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  await app.listen({ host, port: listenPort });
}

export async function runSandboxServe(flags: ServeFlags): Promise<void> {
  const config = loadConfig({
    file: flags.config,
    overrides: { sandbox: { ...(flags.provider ? { provider: flags.provider } : {}), serve: serveOverrides(flags) } },
  });
  await serveSandboxes(config, flags.host, flags.port);
}
