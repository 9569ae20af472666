/**
 * `winnower sandbox serve`: the Orchard Env REST API (src/sandbox/serve/plugin.ts) over a
 * winnower sandbox provider (local bubblewrap by default), so Orchard's SDK, smoke test and
 * training loops run on one machine: point SANDBOX_BASE_URL at it.
 */
import type { Command } from 'commander';
import { port, positiveInt, positiveNumber } from './parse-options.js';
import { SANDBOX_PROVIDER_NAMES as SANDBOX_PROVIDERS } from './option-values.js';

export interface ServeFlags {
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

export function registerSandboxServeCommand(sandbox: Command): void {
  sandbox
    .command('serve')
    .description('serve the Orchard Env REST API over a winnower sandbox provider (key: SANDBOX_API_KEY; without one, loopback only)')
    .option('--host <host>', 'listen address', '127.0.0.1')
    .option('--port <port>', 'listen port', port, 8000)
    .option(
      '--provider <name>',
      `sandbox provider behind the API: ${SANDBOX_PROVIDERS.join(' | ')} (default: config or WINNOWER_SANDBOX, else local)`,
    )
    .option(
      '--repo <path|url>',
      'a sandbox whose image cannot be pulled gets a checkout of this repository at /workspace instead, on the host\'s /usr (the answer\'s "source" says which)',
    )
    .option('--repo-always', "with --repo: never pull the request's image, every sandbox is the checkout")
    .option('--commit <commit>', 'commit of --repo to start from (default: HEAD)')
    .option(
      '--allow-network',
      "honour block_network: false (default: every sandbox is offline; on the local provider a network-enabled sandbox shares the host's network, loopback included)",
    )
    .option(
      '--as-root',
      "commands run as root inside the sandbox's user namespace, without capabilities (for images that expect root, e.g. apt-get; local provider)",
    )
    .option('--max-sandboxes <n>', 'sandboxes open at once; past it, create answers 503', positiveInt)
    .option('--ttl <seconds>', 'hard lifetime of a sandbox from creation (default 7200)', positiveNumber)
    .option(
      '--heartbeat-timeout <seconds>',
      'gap between heartbeats that deletes a sandbox which has sent one (default 180)',
      positiveNumber,
    )
    .option(
      '--request-timeout <seconds>',
      'longest a client may take to send a whole request, headers and body; past it: 408 and the connection closed (default 300; waiting for an answer is not counted)',
      positiveNumber,
    )
    .option('-c, --config <file>', 'config file: sandbox.provider, sandbox.settings, sandbox.serve (also WINNOWER_CONFIG)')
    .action(async (flags: ServeFlags) => (await import('./sandbox-serve-action.js')).runSandboxServe(flags));
}
