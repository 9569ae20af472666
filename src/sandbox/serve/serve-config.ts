/**
 * `sandbox.serve` of the config file: the Orchard-Env-compatible API's settings, for
 * `winnower sandbox serve` and for mounting it in `winnower serve` (`mount: /orchard`).
 */
import { z } from 'zod';
import { wnwError } from '../../errors.js';
import { HeaderSecret } from '../../http/header-value.js';
import { requestTimeoutOptions as serverRequestTimeoutOptions } from '../../server/plugins/request-timeout.js';

// The descriptions are what docs/configuration.md shows (scripts/gen-config-docs.ts).
export const SandboxServeConfigSchema = z.strictObject({
  mount: z
    .string()
    .regex(/^\/[A-Za-z0-9._~/-]*[^/]$/, 'a path prefix such as /orchard')
    .optional()
    .describe('Path prefix under which `winnower serve` mounts the API (e.g. `/orchard`); not given: not mounted.'),
  repo: z
    .string()
    .min(1)
    .optional()
    .describe(
      'A checkout of this repository (path or git URL) put at /workspace for sandboxes whose image cannot be had (or for all, see repo_mode).',
    ),
  repo_mode: z
    .enum(['fallback', 'always'])
    .optional()
    .describe("With `repo`: `fallback` (default) runs the request's image when it can be pulled; `always` never pulls."),
  as_root: z
    .boolean()
    .optional()
    .describe("Run commands as root inside the sandbox's user namespace, without capabilities (local provider; default false)."),
  commit: z.string().min(1).optional().describe('Commit of `repo` sandboxes start from (default HEAD).'),
  api_key: HeaderSecret.min(1).optional().meta({ description: 'Key clients must send as X-API-Key.', env: 'SANDBOX_API_KEY' }),
  allow_network: z.boolean().optional().describe("Honour a request's `block_network: false` (default false: every sandbox is offline)."),
  max_sandboxes: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Most sandboxes open at once (default 32); past it a create is refused until one closes.'),
  ttl_s: z.number().positive().optional().describe('Longest a sandbox lives from its creation (default 7200).'),
  heartbeat_timeout_s: z
    .number()
    .positive()
    .optional()
    .describe('Gap between heartbeats after which a sandbox that has sent one is deleted (default 180).'),
  request_timeout_s: z
    .number()
    .positive()
    .optional()
    .describe(
      "Time a client has to send a whole request, headers and body (default 300); past it the answer is 408 and the connection closes. Waiting for an exec's answer does not count.",
    ),
});
export type SandboxServeConfig = z.infer<typeof SandboxServeConfigSchema>;

/** The default of `request_timeout_s` (Node's own default for an HTTP server). */
export const DEFAULT_REQUEST_TIMEOUT_S = 300;

/** Fastify's options for the request timeout: the same mechanism as `winnower serve`'s (src/server/plugins/request-timeout.ts). */
export function requestTimeoutOptions(config: SandboxServeConfig | undefined): ReturnType<typeof serverRequestTimeoutOptions> {
  return serverRequestTimeoutOptions(Math.round((config?.request_timeout_s ?? DEFAULT_REQUEST_TIMEOUT_S) * 1000));
}

/** Whether `host` only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The API key to require: `api_key` of the config, else SANDBOX_API_KEY. Without one, only loopback is allowed. */
export function sandboxApiKey(
  config: SandboxServeConfig | undefined,
  host: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const key = config?.api_key ?? (env.SANDBOX_API_KEY || undefined);
  if (!key && !isLoopback(host)) {
    throw wnwError(
      'WNW_ERR_CFG_INVALID',
      `refusing to serve sandboxes on ${host} without an API key: anyone who reaches it could run code; set SANDBOX_API_KEY or sandbox.serve.api_key, or listen on 127.0.0.1`,
      {
        details: { field: 'sandbox.serve.api_key' },
      },
    );
  }
  return key;
}
