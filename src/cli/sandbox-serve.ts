/**
 * `winnower sandbox serve`: the Orchard Env REST API (src/sandbox/serve/orchard-api.ts) over a
 * winnower sandbox provider (local bubblewrap by default), so Orchard's SDK, smoke test and
 * training loops run on one machine: point SANDBOX_BASE_URL at it.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import Fastify from 'fastify';
import { loadConfig, type WinnowerConfig } from '../config.js';
import { wnwError } from '../errors.js';
import { loggerOptions } from '../observability/logger-options.js';
import { createSandboxProvider, SANDBOX_PROVIDERS } from '../sandbox/registry.js';
import { orchardEnvApi, type OrchardEnvApiOptions } from '../sandbox/serve/orchard-api.js';
import { requestTimeoutOptions, sandboxApiKey, type SandboxServeConfig } from '../sandbox/serve/serve-config.js';
import type { SandboxProvider } from '../sandbox/types.js';
import type { RepoSource } from '../types/task.js';
import { port, positiveInt, positiveNumber } from './parse-options.js';
import { isGitUrl } from './sandbox-run.js';

interface ServeFlags {
  host: string;
  port: number;
  provider?: string;
  repo?: string;
  repoAlways?: boolean;
  asRoot?: boolean;
  commit?: string;
  allowNetwork?: boolean;
  maxSandboxes?: number;
  ttl?: number;
  heartbeatTimeout?: number;
  requestTimeout?: number;
  config?: string;
}

/** `sandbox.serve` of the config as the API's options over `provider` (the key is checked by the caller). */
export function orchardApiOptions(serve: SandboxServeConfig | undefined, provider: SandboxProvider, apiKey: string | undefined): OrchardEnvApiOptions {
  if (serve?.as_root && provider.name !== 'local') {
    throw wnwError('WNW_ERR_CFG_INVALID', `--as-root (sandbox.serve.as_root) needs the local provider; this server uses ${provider.name}`, { details: { field: 'sandbox.serve.as_root' } });
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
export function mountedSandboxApi(config: WinnowerConfig, provider: SandboxProvider): { prefix: string; options: OrchardEnvApiOptions } | undefined {
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

export function registerSandboxServeCommand(sandbox: Command): void {
  sandbox
    .command('serve')
    .description('serve the Orchard Env REST API over a winnower sandbox provider (key: SANDBOX_API_KEY; without one, loopback only)')
    .option('--host <host>', 'listen address', '127.0.0.1')
    .option('--port <port>', 'listen port', port, 8000)
    .option('--provider <name>', `sandbox provider behind the API: ${SANDBOX_PROVIDERS.join(' | ')} (default: config or WINNOWER_SANDBOX, else local)`)
    .option('--repo <path|url>', 'a sandbox whose image cannot be pulled gets a checkout of this repository at /workspace instead, on the host\'s /usr (the answer\'s "source" says which)')
    .option('--repo-always', 'with --repo: never pull the request\'s image, every sandbox is the checkout')
    .option('--commit <commit>', 'commit of --repo to start from (default: HEAD)')
    .option('--allow-network', 'honour block_network: false (default: every sandbox is offline; on the local provider a network-enabled sandbox shares the host\'s network, loopback included)')
    .option('--as-root', 'commands run as root inside the sandbox\'s user namespace, without capabilities (for images that expect root, e.g. apt-get; local provider)')
    .option('--max-sandboxes <n>', 'sandboxes open at once; past it, create answers 503', positiveInt)
    .option('--ttl <seconds>', 'hard lifetime of a sandbox from creation (default 7200)', positiveNumber)
    .option('--heartbeat-timeout <seconds>', 'gap between heartbeats that deletes a sandbox which has sent one (default 180)', positiveNumber)
    .option('--request-timeout <seconds>', 'longest a client may take to send a whole request, headers and body; past it: 408 and the connection closed (default 300; waiting for an answer is not counted)', positiveNumber)
    .option('-c, --config <file>', 'config file: sandbox.provider, sandbox.settings, sandbox.serve (also WINNOWER_CONFIG)')
    .action(async (flags: ServeFlags) => {
      const config = loadConfig({ file: flags.config, overrides: { sandbox: { ...(flags.provider ? { provider: flags.provider } : {}), serve: serveOverrides(flags) } } });
      await serveSandboxes(config, flags.host, flags.port);
    });
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
  const app = Fastify({ logger: loggerOptions(config.log_level, config.log_format), bodyLimit: 128 * 1024 * 1024, ...requestTimeoutOptions(serve) });
  await app.register(orchardEnvApi, orchardApiOptions(serve, provider, apiKey));
  app.log.info({ provider: await provider.describe(), repo: serve?.repo ?? null, repo_mode: serve?.repo ? (serve.repo_mode ?? 'fallback') : null, as_root: serve?.as_root ?? false, auth: apiKey ? 'X-API-Key' : 'none (loopback only)' }, 'winnower sandbox serve starting');
  if (serve?.allow_network && config.sandbox.provider === 'local') {
    app.log.warn('--allow-network: a sandbox created with block_network: false shares this host\'s network namespace, loopback services (this server included) reachable');
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
