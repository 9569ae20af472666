/**
 * `sandbox.serve` of the config file: the Orchard-Env-compatible API's settings, for
 * `winnower sandbox serve` and for mounting it in `winnower serve` (`mount: /orchard`).
 */
import { z } from 'zod';
import { wnwError } from '../../errors.js';
import { HeaderSecret } from '../../http/header-value.js';
import { requestTimeoutOptions as serverRequestTimeoutOptions } from '../../server/plugins/request-timeout.js';

export const SandboxServeConfigSchema = z.strictObject({
  /** Prefix under which `winnower serve` mounts the API (e.g. `/orchard`); unset: not mounted. */
  mount: z
    .string()
    .regex(/^\/[A-Za-z0-9._~/-]*[^/]$/, 'a path prefix such as /orchard')
    .optional(),
  /** A checkout of this repository (path or git URL) at /workspace, for sandboxes whose image cannot be had (or all: repo_mode). */
  repo: z.string().min(1).optional(),
  /** With `repo`: `fallback` (default) runs the request's image when it can be pulled, `always` never pulls. */
  repo_mode: z.enum(['fallback', 'always']).optional(),
  /** Commands run as root inside the sandbox's user namespace, without capabilities (local provider; default false). */
  as_root: z.boolean().optional(),
  /** Commit of `repo` to start from (default HEAD). */
  commit: z.string().min(1).optional(),
  /** Required as X-API-Key (default: env SANDBOX_API_KEY). */
  api_key: HeaderSecret.min(1).optional(),
  /** Honour `block_network: false` (default false: every sandbox is offline). */
  allow_network: z.boolean().optional(),
  max_sandboxes: z.number().int().positive().optional(),
  /** Hard lifetime of a sandbox from creation (default 7200 s). */
  ttl_s: z.number().positive().optional(),
  /** Gap between heartbeats that deletes a sandbox which has sent one (default 180 s). */
  heartbeat_timeout_s: z.number().positive().optional(),
  /**
   * Longest a client may take to send a whole request, headers and body (default 300 s); past it
   * the server answers 408 and closes the connection. Waiting for an exec's answer is not counted.
   */
  request_timeout_s: z.number().positive().optional(),
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
