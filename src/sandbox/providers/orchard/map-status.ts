/**
 * Orchard Env statuses mapped to small closed unions, the raw value kept beside them.
 * One switch per concept: a sandbox's readiness, a job's outcome.
 */
import type { OrchardJob, OrchardSandboxInfo } from './api-types.js';

export type OrchardSandboxState = 'ready' | 'pending' | 'failed' | 'gone';

/** ready, pending, unschedulable, failed, not_found → ready | pending | failed | gone. */
export function mapOrchardSandboxStatus(info: Pick<OrchardSandboxInfo, 'status' | 'ready'>): { state: OrchardSandboxState; raw: string } {
  const raw = info.status;
  switch (raw) {
    case 'ready':
      return { state: 'ready', raw };
    case 'pending':
    case 'creating':
      return { state: info.ready === true ? 'ready' : 'pending', raw };
    case 'not_found':
    case 'deleted':
      return { state: 'gone', raw };
    default:
      return { state: 'failed', raw };
  }
}

export type OrchardJobOutcome =
  /** queued or running: not final, poll again. */
  | { kind: 'pending'; raw: string }
  /** The command ran to its end (any exit code). */
  | { kind: 'exited'; exitCode: number; raw: string }
  /** The command was killed at its timeout (agent: 124 + note; orchestrator: null + "timed out"). */
  | { kind: 'timed-out'; raw: string }
  /** The command could not be run or its result was lost (`exit_code` null, `error` says why). */
  | { kind: 'error'; message: string; raw: string };

/** The note the in-pod agent appends to stderr when it kills a command at its timeout. */
const AGENT_TIMEOUT_NOTE = /Command timed out after \d+s and was killed\s*$/;
/** What the orchestrator records when its own call to the agent timed out. */
const ORCHESTRATOR_TIMEOUT = /timed out|exceeded timeout/i;

export function mapOrchardJob(job: OrchardJob): OrchardJobOutcome {
  const raw = job.status;
  switch (raw) {
    case 'queued':
    case 'running':
    case 'pending':
      return { kind: 'pending', raw };
    case 'succeeded':
    case 'failed':
      if (job.exit_code === null) {
        const message = job.error ?? 'job failed without an exit code';
        return ORCHESTRATOR_TIMEOUT.test(message) ? { kind: 'timed-out', raw } : { kind: 'error', message, raw };
      }
      // A command may exit 124 by itself (an inner `timeout`): only the agent's note means ours.
      if (job.exit_code === 124 && AGENT_TIMEOUT_NOTE.test(job.stderr)) return { kind: 'timed-out', raw };
      return { kind: 'exited', exitCode: job.exit_code, raw };
    default:
      return { kind: 'error', message: `unknown job status '${raw}'${job.error ? `: ${job.error}` : ''}`, raw };
  }
}
