/**
 * Where every sandbox of a job comes from (docs/solve.md#shared-setup-and-forks). Without `setup`
 * it is a fresh sandbox of the job's spec. With it, the setup commands run once in a sandbox of
 * their own, which becomes the diff base (`markBase`) and is snapshotted; every rollout,
 * verification and test run then starts from a fork of that snapshot, so the checks run in the
 * state the rollouts saw. Where the provider cannot fork (or `fork: false`), each sandbox runs the
 * setup itself and marks its base, and the job says so. Either way no patch holds the setup's
 * outputs: each candidate's patch is against the post-setup tree. The snapshot is released when
 * the job ends, cancelled or not.
 */
import { toWinnowerError, wnwError } from '../errors.js';
import type { Sandbox, SandboxMount, SandboxProvider, SandboxSnapshot, SandboxSpec } from '../sandbox/types.js';
import type { JobEventBody } from './events.js';
import type { SandboxBudget } from './sandbox-budget.js';
import type { SolveRequest } from './solve-request.js';

/** Time the whole setup may take when the request does not say (`setup_timeout_s`). */
export const DEFAULT_SETUP_TIMEOUT_S = 1800;

/** How the setup reaches the job's sandboxes: `fork` from one run, or run in `each`. */
export type SetupMode = 'fork' | 'each';

/** The setup as a job's result reports it (`result.setup`). */
export interface SetupView {
  mode: SetupMode;
  /** Why this mode: asked for, the default, or why forking was not possible. */
  reason: string;
  commands: number;
  /** Wall time of one run of the setup (the shared one; in `each`, the mean of the runs). */
  setup_ms: number;
  /** Times the setup ran. */
  runs: number;
  /** Sandboxes started from the snapshot. */
  forks: number;
  /** What the snapshot holds on the host (fork mode). */
  snapshot_bytes: number;
  /** Sandbox time saved against each fork running the setup itself: (forks − 1) × setup_ms. */
  saved_sandbox_ms: number;
  /**
   * Estimated wall time saved: the setups that would have run one after another on the job's
   * longest chain of sandboxes (its rollout rounds and a verification after them), less the one.
   */
  saved_wall_ms: number;
}

export interface JobSandboxes {
  /** A sandbox in the job's starting state: the repository at its base, after the setup when there is one. */
  open(options: { mounts?: SandboxMount[]; signal: AbortSignal }): Promise<Sandbox>;
  /** Runs the shared setup now (fork mode); rejects with its error. Nothing to do otherwise. */
  prepare(signal: AbortSignal): Promise<void>;
  /** Releases the snapshot; idempotent. Forks still open keep what they mount. */
  release(): Promise<void>;
  /** The setup's figures so far; null for a job without setup. */
  view(rounds: number): SetupView | null;
}

/** How the job gets its setup into its sandboxes, and why: decided from the request and the provider. */
export function setupMode(request: Pick<SolveRequest, 'setup' | 'fork'>, provider: SandboxProvider): { mode: SetupMode; reason: string } {
  if (request.fork?.at === 'none') return { mode: 'each', reason: 'fork: false: each sandbox runs the setup' };
  if (!provider.fork)
    return {
      mode: 'each',
      reason: `the ${provider.name} provider cannot fork a sandbox (describe().fork), so each sandbox runs the setup`,
    };
  if (provider.forkReplays)
    return {
      mode: 'each',
      reason: `the ${provider.name} provider forks by replaying the setup (describe().fork), which saves nothing, so each sandbox runs the setup`,
    };
  return request.fork ? { mode: 'fork', reason: 'fork.at: setup' } : { mode: 'fork', reason: 'the default with setup commands' };
}

/** Submit-time: an explicit `fork.at: setup` the provider cannot honour is a 400 naming it. */
export function checkSetupFork(request: Pick<SolveRequest, 'setup' | 'fork'>, provider: SandboxProvider): void {
  if (request.fork?.at === 'setup' && (!provider.fork || provider.forkReplays))
    throw wnwError(
      'WNW_ERR_INPUT_INVALID',
      `fork.at: the ${provider.name} sandbox provider ${provider.fork ? 'forks only by replaying the setup, which saves nothing' : 'cannot fork a sandbox'}; leave fork out (each sandbox then runs the setup) or set fork: false`,
      { details: { field: 'fork.at' } },
    );
}

interface SetupParts {
  provider: SandboxProvider;
  spec: SandboxSpec;
  request: Pick<SolveRequest, 'setup' | 'setup_timeout_s' | 'fork'>;
  budget: SandboxBudget;
  emit(event: JobEventBody): void;
}

export function createJobSandboxes(parts: SetupParts): JobSandboxes {
  const { provider, spec, request, budget, emit } = parts;
  const commands = request.setup ?? [];
  const specWith = (mounts: SandboxMount[] | undefined): SandboxSpec => (mounts?.length ? { ...spec, mounts } : spec);
  if (commands.length === 0)
    return {
      open: ({ mounts, signal }) => provider.create(specWith(mounts), { signal }),
      prepare: async () => undefined,
      release: async () => undefined,
      view: () => null,
    };

  const { mode, reason } = setupMode(request, provider);
  const timeoutMs = (request.setup_timeout_s ?? DEFAULT_SETUP_TIMEOUT_S) * 1000;
  let runs = 0;
  let runMs = 0;
  let forks = 0;
  let snapshot: SandboxSnapshot | undefined;
  let prepared: Promise<SandboxSnapshot> | undefined;
  let released = false;
  emit({ type: 'setup-start', mode, reason, commands: commands.length });

  /** The setup in `sandbox`, then its base marked: the post-setup tree every patch is taken against. */
  const runSetup = async (sandbox: Sandbox, signal: AbortSignal): Promise<void> => {
    const started = Date.now();
    for (const [index, command] of commands.entries()) {
      const left = timeoutMs - (Date.now() - started);
      const result = await sandbox.exec(command, { timeoutMs: Math.max(1, left), signal });
      signal.throwIfAborted();
      if (result.timedOut || result.exitCode !== 0) {
        const how = result.timedOut ? `did not finish within setup_timeout_s (${timeoutMs / 1000} s)` : `exited ${result.exitCode}`;
        const output = `${result.stdout}${result.stderr}`.slice(-2000);
        throw wnwError('WNW_ERR_SETUP_FAILED', `setup.${index} ${how}: ${output.trim() || '(no output)'}`, {
          details: { field: `setup.${index}`, exit_code: result.exitCode, timed_out: result.timedOut },
        });
      }
    }
    if (!sandbox.markBase)
      throw wnwError(
        'WNW_ERR_SBX_UNSUPPORTED',
        `the ${sandbox.provider} provider cannot keep a setup's outputs out of patches (markBase)`,
        {
          details: { field: 'setup' },
        },
      );
    await sandbox.markBase({ signal });
    runs += 1;
    runMs += Date.now() - started;
  };

  const shared = (signal: AbortSignal): Promise<SandboxSnapshot> => {
    prepared ??= budget.hold(async () => {
      const started = Date.now();
      const sandbox = await provider.create(spec, { signal });
      try {
        await runSetup(sandbox, signal);
        if (!sandbox.snapshot)
          throw wnwError('WNW_ERR_SBX_UNSUPPORTED', `the ${sandbox.provider} provider forks but its sandbox cannot be snapshotted`, {
            details: { field: 'fork' },
          });
        snapshot = await sandbox.snapshot({ signal });
        // Released meanwhile (the job ended while the setup ran): nothing may keep it.
        if (released) await snapshot.release();
        emit({ type: 'setup-finish', mode, duration_ms: Date.now() - started, snapshot_bytes: snapshot.bytes });
        return snapshot;
      } catch (error) {
        const failure = toWinnowerError(error);
        emit({ type: 'setup-finish', mode, duration_ms: Date.now() - started, error: `${failure.code}: ${failure.message}` });
        throw failure;
      } finally {
        await sandbox.close().catch(() => undefined);
      }
    });
    return prepared;
  };

  return {
    async open({ mounts, signal }) {
      if (mode === 'fork') {
        const from = await shared(signal);
        const sandbox = await provider.fork!(from, { signal, ...(mounts?.length ? { mounts } : {}) });
        forks += 1;
        return sandbox;
      }
      const sandbox = await provider.create(specWith(mounts), { signal });
      try {
        await runSetup(sandbox, signal);
        return sandbox;
      } catch (error) {
        await sandbox.close().catch(() => undefined);
        throw error;
      }
    },
    async prepare(signal) {
      if (mode === 'fork') await shared(signal);
    },
    async release() {
      released = true;
      await prepared?.catch(() => undefined);
      await snapshot?.release();
    },
    view(rounds) {
      const setupMs = runs > 0 ? Math.round(runMs / runs) : 0;
      return {
        mode,
        reason,
        commands: commands.length,
        setup_ms: setupMs,
        runs,
        forks,
        snapshot_bytes: snapshot?.bytes ?? 0,
        saved_sandbox_ms: mode === 'fork' ? Math.max(0, forks - 1) * setupMs : 0,
        saved_wall_ms: mode === 'fork' ? Math.max(0, rounds - 1) * setupMs : 0,
      };
    },
  };
}
