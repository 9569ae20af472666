/**
 * The `orchard` provider: sandboxes as Kubernetes pods behind an Orchard Env orchestrator (the
 * scale-out path). Create is asynchronous (POST, then /wait; 408 deletes the sandbox), 503s are
 * retried after Retry-After plus jitter, connection errors with backoff. No I/O until first use.
 *
 * @example
 * const provider = createOrchardProvider({ baseUrl: 'http://orchard:8000', apiKey: process.env.SANDBOX_API_KEY });
 * const sandbox = await provider.create({ image: 'swebench/sweb.eval.x86_64.django__django-11095' });
 * try { await sandbox.exec('python -m pytest -q'); } finally { await sandbox.close(); }
 */
import { randomBytes } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { wnwError, WinnowerError } from '../../../errors.js';
import { HeaderSecret } from '../../../http/header-value.js';
import { BaseProvider, type TrackSandbox } from '../../base-provider.js';
import { snakeCase, userField } from '../../../config-keys.js';
import { patchPolicy, PatchSettingsSchema, SANDBOX_BASE_ENV, type PatchPolicy, type PatchSettings } from '../../patch-policy.js';
import type { CallOptions, ForkOptions, Sandbox, SandboxProvider, SandboxSnapshot, SandboxSpec } from '../../types.js';
import { OrchardCreateResponse, OrchardSandboxInfo, OrchardStatusReply } from './api-types.js';
import { backoffMs, OrchardClient, requestIdSuffix, sleep } from './client.js';
import { checkReplayable, ReplaySnapshot, replayInto } from './replay.js';
import { OrchardSandbox } from './sandbox.js';
import { mapOrchardSandboxStatus } from './map-status.js';

export interface OrchardProviderSettings {
  /** Orchestrator URL (default: env SANDBOX_BASE_URL, else http://localhost:8000). */
  baseUrl?: string;
  /** Sent as X-API-Key (default: env SANDBOX_API_KEY). */
  apiKey?: string;
  /** Where the repository is inside the image (default /testbed, as in SWE-bench images). */
  workdir?: string;
  /** Seconds a new sandbox may take to become ready (default 600). */
  createTimeoutS?: number;
  /**
   * Heartbeat period while a sandbox is open (default 60 000 ms; 0 disables). The first heartbeat
   * enrols a sandbox in the server's heartbeat reaping (a gap over HEARTBEAT_TIMEOUT_SECONDS, 180 s
   * by default, deletes it), so keep this at most a third of that timeout.
   */
  heartbeatIntervalMs?: number;
  /** The server's hard TTL in seconds (SANDBOX_TTL_HOURS, default 2 h): a spec asking for a longer lifetime is refused. */
  ttlS?: number;
  /** Deadline of one request that does not wait on the server (default 30 000 ms). */
  requestTimeoutMs?: number;
  /** Extra attempts after a connection error or a 503 on create (default 4). */
  retries?: number;
  /**
   * Run user commands in an interactive login bash that we start ourselves (`bash --login -i -c`),
   * so the profile and ~/.bashrc run first; default false. Orchard's own `login_shell` is never
   * used: its agent rewrites stderr under it (drops tracebacks and blank lines).
   */
  loginShell?: boolean;
  /** Shell lines run before every user command, e.g. `source /opt/miniconda3/bin/activate testbed` (SWE-bench images). */
  activate?: string;
  /** undici dispatcher to send requests through (default: one keep-alive Agent per provider). */
  dispatcher?: Dispatcher;
  /**
   * Largest answer read from Orchard Env, in bytes (default 128 MiB): a file read, or a job whose
   * output is larger (exec answers may take 8× the exec's output cap), fails instead of filling memory.
   */
  maxResponseBytes?: number;
  /** What a patch leaves out and its cap (src/sandbox/patch-policy.ts). */
  patch?: PatchSettings;
}

const MAX_RETRY_AFTER_MS = 60_000;
/** Longest single server-side wait for readiness; between slices the status message is checked. */
const WAIT_SLICE_S = 10;
/** Kubernetes waiting reasons of a pod whose image will not come (if the server passes them on). */
const IMAGE_PULL_FAILURE = /ErrImagePull|ImagePullBackOff|InvalidImageName|ErrImageNeverPull/;
/** Jitter added to Retry-After: 100 ms plus a tenth of the wait, at most 1 s. */
const MAX_JITTER_MS = 1_000;

// The descriptions are what docs/configuration.md shows (scripts/gen-config-docs.ts), in the config file's spelling.
export const OrchardSettingsSchema = z.strictObject({
  baseUrl: z.url().optional().meta({
    description: 'URL of the Orchard Env server (default: SANDBOX_BASE_URL, else http://localhost:8000).',
    env: 'SANDBOX_BASE_URL',
  }),
  apiKey: HeaderSecret.optional().meta({ description: 'Key sent as X-API-Key (default: SANDBOX_API_KEY).', env: 'SANDBOX_API_KEY' }),
  workdir: z
    .string()
    .startsWith('/')
    .optional()
    .describe('Where the repository is inside the image (default /testbed, as in SWE-bench images).'),
  createTimeoutS: z.number().positive().optional().describe('Time a new sandbox may take to become ready (default 600).'),
  heartbeatIntervalMs: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe(
      "Heartbeat period while a sandbox is open (default 60000; 0: none). The first heartbeat puts the sandbox under the server's heartbeat reaping (deleted after HEARTBEAT_TIMEOUT_SECONDS, 180 by default, without one), so keep it under a third of that timeout.",
    ),
  requestTimeoutMs: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Deadline of one request that does not wait on the server (default 30000).'),
  retries: z.number().int().nonnegative().optional().describe('Extra attempts after a connection error or a 503 on create (default 4).'),
  loginShell: z
    .boolean()
    .optional()
    .describe(
      "Run commands in an interactive login bash that winnower starts (`bash --login -i -c`), so the profile and ~/.bashrc run first (default false). Orchard's own login_shell is never used: its agent rewrites stderr under it.",
    ),
  activate: z
    .string()
    .min(1)
    .optional()
    .describe('Shell lines run before every command, e.g. `source /opt/miniconda3/bin/activate testbed` for SWE-bench images.'),
  ttlS: z
    .number()
    .positive()
    .optional()
    .describe("The server's hard lifetime of a sandbox (SANDBOX_TTL_HOURS there; default 7200): a spec asking for longer is refused."),
  maxResponseBytes: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      'Largest answer read from Orchard Env (default 128 MiB): a bigger file read or job output fails instead of filling memory (an exec answer may be up to 8 times its output cap).',
    ),
  patch: PatchSettingsSchema.optional().meta({
    description: "This provider's patch settings, key by key over sandbox.patch.",
    sameAs: 'sandbox.patch',
  }),
  // An undici dispatcher to send requests through (default: one keep-alive Agent per provider); code only.
  dispatcher: z
    .custom<Dispatcher>((value) => typeof value === 'object' && value !== null && 'dispatch' in value)
    .optional()
    .meta({ codeOnly: true }),
});

/**
 * Creates the provider; reads the environment for defaults but contacts nothing yet.
 * Settings that are not valid throw WNW_ERR_CFG_INVALID naming the field.
 */
export function createOrchardProvider(settings: OrchardProviderSettings = {}): SandboxProvider {
  const parsed = OrchardSettingsSchema.safeParse(settings);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    // Named as the config file spells it (src/config-keys.ts renamed the keys on the way in).
    const field = `sandbox.settings.${userField(issue?.path ?? []) || (issue && 'keys' in issue ? issue.keys.map(snakeCase).join(',') : '')}`;
    throw wnwError('WNW_ERR_CFG_INVALID', `invalid orchard provider setting ${field}: ${issue?.message ?? 'invalid'}`, {
      details: { field, provider: 'orchard' },
    });
  }
  return new OrchardProvider(settings);
}

class OrchardProvider extends BaseProvider<OrchardSandbox> {
  readonly name = 'orchard';
  readonly #settings: Required<Omit<OrchardProviderSettings, 'apiKey' | 'dispatcher' | 'maxResponseBytes' | 'patch' | 'activate'>> &
    Pick<OrchardProviderSettings, 'apiKey' | 'dispatcher' | 'maxResponseBytes' | 'activate'>;
  /** Images whose create already ran into its timeout once (a second 408 is not retryable: docs/design/02-orchard-real-behaviour.md#4). */
  readonly #slowImages = new Set<string>();
  readonly #patch: PatchPolicy;
  /** The snapshots this provider made: only those fork (replay.ts). */
  readonly #snapshots = new WeakSet<ReplaySnapshot>();
  #client: OrchardClient | undefined;

  constructor(settings: OrchardProviderSettings) {
    super();
    const apiKey = settings.apiKey ?? process.env.SANDBOX_API_KEY;
    this.#patch = patchPolicy(settings.patch);
    this.#settings = {
      baseUrl: settings.baseUrl ?? process.env.SANDBOX_BASE_URL ?? 'http://localhost:8000',
      workdir: settings.workdir ?? '/testbed',
      createTimeoutS: settings.createTimeoutS ?? 600,
      heartbeatIntervalMs: settings.heartbeatIntervalMs ?? 60_000,
      requestTimeoutMs: settings.requestTimeoutMs ?? 30_000,
      retries: settings.retries ?? 4,
      loginShell: settings.loginShell ?? false,
      ttlS: settings.ttlS ?? 7_200,
      ...(settings.activate ? { activate: settings.activate } : {}),
      ...(apiKey ? { apiKey } : {}),
      ...(settings.dispatcher ? { dispatcher: settings.dispatcher } : {}),
      ...(settings.maxResponseBytes ? { maxResponseBytes: settings.maxResponseBytes } : {}),
    };
  }

  get #api(): OrchardClient {
    this.#client ??= new OrchardClient({
      baseUrl: this.#settings.baseUrl,
      requestTimeoutMs: this.#settings.requestTimeoutMs,
      retries: this.#settings.retries,
      ...(this.#settings.apiKey ? { apiKey: this.#settings.apiKey } : {}),
      ...(this.#settings.dispatcher ? { dispatcher: this.#settings.dispatcher } : {}),
      ...(this.#settings.maxResponseBytes ? { maxResponseBytes: this.#settings.maxResponseBytes } : {}),
    });
    return this.#client;
  }

  async describe(): Promise<Record<string, unknown>> {
    let health: string;
    try {
      const reply = await this.#api.call({ method: 'GET', path: '/health', schema: OrchardStatusReply, retry: 'none', timeoutMs: 5_000 });
      health = reply.data.status;
    } catch (error) {
      health = `unreachable: ${error instanceof Error ? error.message : String(error)}`;
    }
    return {
      provider: this.name,
      isolation: 'one Kubernetes pod per sandbox (Orchard Env)',
      baseUrl: this.#settings.baseUrl,
      apiKey: this.#settings.apiKey ? 'set' : 'not set',
      workdir: this.#settings.workdir,
      network: 'blocked unless the spec asks (block_network)',
      limits: 'cpu and memory per pod from the spec',
      fork: 'replay: Orchard Env has no snapshot API, so a snapshot is the record of the commands, file writes and patches a sandbox received, and a fork replays it into a fresh sandbox (docs/sandboxes.md#snapshots-and-forks)',
      createTimeoutS: this.#settings.createTimeoutS,
      heartbeatIntervalMs: this.#settings.heartbeatIntervalMs,
      ttlS: this.#settings.ttlS,
      loginShell: this.#settings.loginShell,
      activate: this.#settings.activate ?? null,
      health,
    };
  }

  /** A fork costs what the parent's recorded changes cost to run again (replay.ts). */
  readonly forkReplays = true;

  /** A fresh sandbox of the snapshot's spec with its record replayed in order (replay.ts); closed if the replay fails. */
  async fork(snapshot: SandboxSnapshot, options: ForkOptions = {}): Promise<Sandbox> {
    const from = checkReplayable(snapshot, this.#snapshots);
    const spec: SandboxSpec = options.mounts?.length ? { ...from.spec, mounts: options.mounts } : from.spec;
    return this.adopt(async (track) => {
      const sandbox = await this.createSandbox(spec, options, track);
      await replayInto(sandbox, from, options.signal);
      return sandbox;
    });
  }

  protected async createSandbox(spec: SandboxSpec, options: CallOptions, track: TrackSandbox<OrchardSandbox>): Promise<OrchardSandbox> {
    if (!spec.image) {
      throw wnwError(
        'WNW_ERR_SBX_UNSUPPORTED',
        'the orchard provider runs container images: set spec.image (SWE-bench images keep the repository in /testbed)',
        {
          details: { field: 'image', provider: this.name },
        },
      );
    }
    if (spec.lifetimeS !== undefined && spec.lifetimeS > this.#settings.ttlS) {
      throw wnwError(
        'WNW_ERR_SBX_UNSUPPORTED',
        `Orchard Env deletes every sandbox ${this.#settings.ttlS} s after creation (SANDBOX_TTL_HOURS); spec.lifetimeS ${spec.lifetimeS} is longer`,
        {
          details: { field: 'lifetimeS', provider: this.name, ttlS: this.#settings.ttlS },
        },
      );
    }
    // Orchard Env has no host bind mounts; a harness that needs its CLI mounted would die with 127 inside.
    if (spec.mounts?.length) {
      throw wnwError(
        'WNW_ERR_SBX_UNSUPPORTED',
        "the orchard provider cannot bind host paths into a pod (spec.mounts), and a harness rollout needs them for its CLI and the model proxy's socket: run harnesses on the local or docker provider",
        {
          details: { field: 'mounts', provider: this.name },
        },
      );
    }
    const body: Record<string, unknown> = {
      image: spec.image,
      block_network: spec.network !== true,
      // An integer field on the server: pydantic v2 answers 422 to 1.5 (docs/design/02-orchard-real-behaviour.md#14).
      timeout: Math.ceil(this.#settings.createTimeoutS),
    };
    if (spec.cpu !== undefined) body.cpu = Number.isInteger(spec.cpu) ? String(spec.cpu) : `${Math.max(1, Math.round(spec.cpu * 1000))}m`;
    if (spec.memoryMb !== undefined) body.memory = `${Math.max(1, Math.round(spec.memoryMb))}Mi`;

    const id = await this.#submitCreate(body, options.signal);
    let tracked = false;
    try {
      await this.#waitReady(id, spec.image, options.signal);
      const created: OrchardSandbox = new OrchardSandbox({
        client: this.#api,
        id,
        workdir: spec.workdir ?? this.#settings.workdir,
        env: { ...SANDBOX_BASE_ENV, ...spec.env },
        patch: this.#patch,
        heartbeatIntervalMs: this.#settings.heartbeatIntervalMs,
        loginShell: this.#settings.loginShell,
        ...(this.#settings.activate ? { activate: this.#settings.activate } : {}),
        ...(spec.repo?.base_commit ? { baseCommit: spec.repo.base_commit } : {}),
        onClosed: () => this.untrack(created),
        takeSnapshot: (steps) => {
          const snapshot = new ReplaySnapshot(id, spec, steps);
          this.#snapshots.add(snapshot);
          return snapshot;
        },
      });
      track(created);
      tracked = true;
      await created.start(options.signal);
      return created;
    } catch (error) {
      // Once tracked, the base closes the sandbox (a DELETE of its pod).
      if (!tracked) await this.#deleteAfterFailure(id, error);
      throw error;
    }
  }

  protected override onCleanupError(error: unknown, closeError: unknown): void {
    attachDeleteError(error, closeError);
  }

  protected async closeShared(): Promise<void> {
    await this.#client?.close();
  }

  /** POST /sandboxes under a fresh id per attempt; 503 waits Retry-After plus jitter. */
  async #submitCreate(body: Record<string, unknown>, signal: AbortSignal | undefined): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      const sandboxId = `wnw-${randomBytes(6).toString('hex')}`;
      try {
        const reply = await this.#api.call({
          method: 'POST',
          path: '/sandboxes',
          body: { ...body, sandbox_id: sandboxId },
          schema: OrchardCreateResponse,
          retry: 'none',
          signal,
        });
        return reply.data.sandbox_id;
      } catch (error) {
        if (!WinnowerError.isInstance(error)) throw error;
        const retry = attempt <= this.#settings.retries;
        if (retry && error.details.status === 503) {
          const waitMs = retryAfterMs(error.details.retryAfter);
          await sleep(waitMs + Math.random() * Math.min(MAX_JITTER_MS, 100 + waitMs / 10), signal);
        } else if (error.details.status === undefined) {
          // No answer (dropped connection, deadline, cancellation): the pod may have been created
          // anyway; remove it under its id before trying again or giving up.
          await this.#deleteAfterFailure(sandboxId, error);
          if (!retry || error.details.connection !== true) throw error;
          await sleep(backoffMs(attempt), signal);
        } else {
          throw error;
        }
      }
    }
  }

  /**
   * GET /sandboxes/{id}/wait, in slices, until ready. Between slices the status message is read:
   * a pod stuck pulling its image stays `pending` (the server never fails it: docs/design/02-orchard-real-behaviour.md#4), so a pull error
   * there fails the create at once with its reason. 408 at the end, failed or gone →
   * WNW_ERR_SBX_CREATE; a second 408 for the same image is not retryable.
   */
  async #waitReady(id: string, image: string, signal: AbortSignal | undefined): Promise<void> {
    const limitS = this.#settings.createTimeoutS;
    const deadline = Date.now() + limitS * 1000;
    const details = { sandbox: id, image };
    let lastRequestId: string | undefined;
    let slice = 0;
    for (;;) {
      const remainingS = Math.ceil((deadline - Date.now()) / 1000);
      if (remainingS <= 0) throw this.#notReady(id, image, lastRequestId);
      // Slices of 1, 2, 4 ... s: a pull error shows within seconds, a slow start costs few requests.
      const sliceS = Math.min(remainingS, WAIT_SLICE_S, 2 ** slice++);
      let reply;
      try {
        reply = await this.#api.call({
          method: 'GET',
          path: `/sandboxes/${encodeURIComponent(id)}/wait`,
          query: { timeout: sliceS },
          schema: OrchardSandboxInfo,
          retry: 'connection',
          timeoutMs: sliceS * 1000 + this.#api.requestTimeoutMs,
          signal,
          errors: { 404: { code: 'WNW_ERR_SBX_CREATE', message: `sandbox ${id} (${image}) disappeared while starting`, details } },
        });
      } catch (error) {
        if (!WinnowerError.isInstance(error) || error.details.status !== 408) throw error;
        lastRequestId = error.details.requestId as string | undefined;
        if (Date.now() >= deadline) throw this.#notReady(id, image, lastRequestId);
        reply = await this.#api.call({
          method: 'GET',
          path: `/sandboxes/${encodeURIComponent(id)}`,
          schema: OrchardSandboxInfo,
          retry: 'connection',
          signal,
        });
      }
      lastRequestId = reply.requestId;
      const { state, raw } = mapOrchardSandboxStatus(reply.data);
      if (state === 'ready') return;
      const message = reply.data.status_message ?? '';
      if (state === 'failed' || state === 'gone' || IMAGE_PULL_FAILURE.test(message)) {
        const why = message ? `: ${message}` : '';
        throw wnwError('WNW_ERR_SBX_CREATE', `sandbox ${id} (${image}) is ${raw}${why}${requestIdSuffix(reply.requestId)}`, {
          details: { sandbox: id, image, status: raw, statusMessage: message, requestId: reply.requestId },
        });
      }
      // Answered before ready (another replica, a slice that ended): ask again shortly.
      await sleep(250, signal);
    }
  }

  #notReady(id: string, image: string, requestId: string | undefined): WinnowerError {
    const again = this.#slowImages.has(image);
    this.#slowImages.add(image);
    const hint = again ? '; it timed out before too: check the image name and that the cluster can pull it' : '';
    return wnwError(
      'WNW_ERR_SBX_CREATE',
      `sandbox ${id} (${image}) not ready within ${this.#settings.createTimeoutS} s${hint}${requestIdSuffix(requestId)}`,
      {
        details: { sandbox: id, image, status: 408, requestId },
        retryable: !again,
      },
    );
  }

  /** DELETE after a failed create; a failure to delete is attached to the original error. */
  async #deleteAfterFailure(id: string, original: unknown): Promise<void> {
    try {
      await this.#api.call({
        method: 'DELETE',
        path: `/sandboxes/${encodeURIComponent(id)}`,
        schema: OrchardStatusReply,
        retry: 'connection',
      });
    } catch (error) {
      attachDeleteError(original, error);
    }
  }
}

function attachDeleteError(original: unknown, error: unknown): void {
  if (WinnowerError.isInstance(original)) original.details.deleteError = error instanceof Error ? error.message : String(error);
}

function retryAfterMs(header: unknown): number {
  const seconds = typeof header === 'string' ? Number(header) : Number.NaN;
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(MAX_RETRY_AFTER_MS, seconds * 1000);
  const date = typeof header === 'string' ? Date.parse(header) : Number.NaN;
  if (Number.isFinite(date)) return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, date - Date.now()));
  return 5_000;
}
