/**
 * Forks on Orchard Env, which has no snapshot API (docs/sandboxes.md#snapshots-and-forks): a sandbox
 * records what changed it through winnower (its commands, file writes, patches and markBase), a
 * snapshot is that record at one moment, and a fork is a fresh sandbox of the parent's spec into
 * which the record is replayed, in order. A replay is not a copy: the commands run again, so it
 * costs what they cost, and what they produce is what they produce this time (timestamps,
 * downloads); a command whose exit status differs from the recorded one stops the fork, naming it.
 * Changes made behind winnower's back (another client of the same pod) are not in the record.
 */
import { randomBytes } from 'node:crypto';
import { wnwError } from '../../../errors.js';
import type { Sandbox, SandboxSnapshot, SandboxSpec } from '../../types.js';

/** One recorded change. */
export type ReplayStep =
  | {
      kind: 'exec';
      command: string;
      cwd?: string | undefined;
      env?: Record<string, string> | undefined;
      stdin?: string | undefined;
      timeoutMs: number;
      exitCode: number | null;
    }
  | { kind: 'write'; path: string; content: Uint8Array }
  | { kind: 'patch'; patch: string }
  | { kind: 'mark-base' };

/** What a step weighs in a snapshot's `bytes`: the text and files it carries. */
function stepBytes(step: ReplayStep): number {
  switch (step.kind) {
    case 'exec':
      return Buffer.byteLength(step.command) + Buffer.byteLength(step.stdin ?? '') + JSON.stringify(step.env ?? {}).length;
    case 'write':
      return step.content.byteLength;
    case 'patch':
      return Buffer.byteLength(step.patch);
    case 'mark-base':
      return 0;
  }
}

export class ReplaySnapshot implements SandboxSnapshot {
  readonly id = `replay-${randomBytes(6).toString('hex')}`;
  readonly sandboxId: string;
  readonly bytes: number;
  readonly spec: SandboxSpec;
  readonly #steps: readonly ReplayStep[];
  #released = false;

  constructor(sandboxId: string, spec: SandboxSpec, steps: readonly ReplayStep[]) {
    this.sandboxId = sandboxId;
    this.spec = spec;
    this.#steps = [...steps];
    this.bytes = this.#steps.reduce((sum, step) => sum + stepBytes(step), 0);
  }

  get released(): boolean {
    return this.#released;
  }

  get steps(): readonly ReplayStep[] {
    return this.#steps;
  }

  /** Only the record is held: releasing it drops nothing on the service. */
  async release(): Promise<void> {
    this.#released = true;
  }
}

/** Runs the steps in `sandbox` in order; WNW_ERR_SBX_CREATE naming the first that does not end as recorded. */
export async function replayInto(sandbox: Sandbox, snapshot: ReplaySnapshot, signal: AbortSignal | undefined): Promise<void> {
  for (const [index, step] of snapshot.steps.entries()) {
    signal?.throwIfAborted();
    const call = signal ? { signal } : {};
    if (step.kind === 'write') await sandbox.writeFile(step.path, step.content, call);
    else if (step.kind === 'patch') await sandbox.applyPatch(step.patch, call);
    else if (step.kind === 'mark-base') await sandbox.markBase!(call);
    else {
      const result = await sandbox.exec(step.command, {
        ...call,
        timeoutMs: step.timeoutMs,
        ...(step.cwd === undefined ? {} : { cwd: step.cwd }),
        ...(step.env === undefined ? {} : { env: step.env }),
        ...(step.stdin === undefined ? {} : { stdin: step.stdin }),
      });
      if (result.exitCode !== step.exitCode) {
        const output = `${result.stdout}${result.stderr}`.slice(-500).trim();
        throw wnwError(
          'WNW_ERR_SBX_CREATE',
          `replaying snapshot ${snapshot.id} into sandbox ${sandbox.id} diverged at step ${index} (${step.command.slice(0, 200)}): exit ${result.exitCode}, recorded ${step.exitCode}${output ? `: ${output}` : ''}`,
          { details: { snapshot: snapshot.id, step: index, exit_code: result.exitCode, recorded_exit_code: step.exitCode } },
        );
      }
    }
  }
}

/** The snapshot is one of this provider's and still held, or a coded refusal naming it. */
export function checkReplayable(snapshot: SandboxSnapshot, mine: WeakSet<ReplaySnapshot>): ReplaySnapshot {
  if (!(snapshot instanceof ReplaySnapshot) || !mine.has(snapshot))
    throw wnwError('WNW_ERR_INPUT_INVALID', `snapshot ${snapshot.id} is not one of this orchard provider's`, {
      details: { field: 'snapshot', snapshot: snapshot.id },
    });
  if (snapshot.released)
    throw wnwError('WNW_ERR_INPUT_INVALID', `snapshot ${snapshot.id} was released: fork from a snapshot still held`, {
      details: { field: 'snapshot', snapshot: snapshot.id },
    });
  return snapshot;
}
