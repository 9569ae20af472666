/**
 * The state one solve job's stages share: the request and task, the candidate slots and how
 * they are stored, the job's signals (cancel, stop rule), and the sandbox budget. Every stage
 * takes a SolveContext and a slot; none of them holds state of its own.
 */
import { loadAgentConfig, type AgentConfig } from '../rollout/agent/agent-config.js';
import { toWinnowerError } from '../errors.js';
import { type HarborTask, readHarborTask } from '../formats/harbor/read-task.js';
import type { ValueModel } from '../scoring/value-model.js';
import type { Sandbox, SandboxMount, SandboxSpec } from '../sandbox/types.js';
import { SerialWrites } from '../store/serial-writes.js';
import type { CandidateRecord, CandidateStatus, ErrorRecord } from '../store/types.js';
import type { Score, Task, Trajectory, Usage, VerifyResult } from '../types/index.js';
import type { AgentPrefix } from '../rollout/agent/agent-loop.js';
import type { JobEventBody } from './events.js';
import { planPolicies, policyOf, rolloutConfig, type PlannedPolicy } from './policy-plan.js';
import { CheckEvidence } from './evidence.js';
import { createSandboxBudget, type SandboxBudget } from './sandbox-budget.js';
import { createJobSandboxes, type JobSandboxes } from './shared-setup.js';
import type { SolveDeps } from './solve-deps.js';
import { poolTestsOn, type SolveRequest } from './solve-request.js';

/** One rollout's candidate as the job holds it while it runs. */
export interface Slot {
  index: number;
  /** The planned policy this rollout belongs to (`policies[i]`; 0 for a one-policy job). */
  policy: number;
  /** Its configuration (policy-plan.ts), carried by its trajectory as `meta.config`. */
  config: Record<string, unknown>;
  status: CandidateStatus;
  /** Its rollout ended and, when it finished, its evaluation too (the mixed-job stop rule waits for one per policy). */
  settled?: boolean;
  /** Taken over with its rollout ended (finished or failed) on the replica before: not run again. */
  kept?: boolean;
  trajectory?: Trajectory;
  /** A retry's (`retry_of`) finished rollout of the earlier job: taken as it is, not run again. */
  reused?: Trajectory;
  score?: Score;
  verify?: VerifyResult;
  error?: ErrorRecord;
}

export interface SolveHooks {
  /** The job's own signal: cancel, shutdown. */
  signal: AbortSignal;
  emit: (event: JobEventBody) => void;
  /**
   * A job taken over from another replica: its stored candidates. Those whose rollout ended are
   * kept with their trajectory, score and verification; the rest run again with the same index.
   */
  resume?: CandidateRecord[];
}

export interface SolveContext {
  deps: SolveDeps;
  jobId: string;
  request: SolveRequest;
  task: Task;
  /** The sandbox every stage starts from: the repository at its base commit, offline (a Harbor task's environment: its workdir, resources, network). */
  spec: SandboxSpec;
  /** The Harbor task of a `harbor_task` job: its tests/test.sh and reward verify (docs/harbor.md). */
  harbor?: HarborTask;
  /** How the job's rollouts split over its policies (one entry without `policies`). */
  plan: PlannedPolicy[];
  /** The built-in agent's config of each planned policy (same order as `plan`). */
  agentConfigs: AgentConfig[];
  hooks: SolveHooks;
  /** The job's signal and the stop rule's: what rollouts stop on. Checks after a rollout use `hooks.signal`. */
  signal: AbortSignal;
  /**
   * What the checks (regression base runs, test writers, matrix cells) stop on: the job's signal,
   * and the end of the job (`endChecks`), so none of them outlives it.
   */
  checksSignal: AbortSignal;
  endChecks(): void;
  /** Work the checks run beside the rollouts; the job waits for it to settle before it returns. */
  background: Array<Promise<unknown>>;
  /** The value model when scoring is on. */
  valueModel?: ValueModel;
  verifying: boolean;
  slots: Slot[];
  budget: SandboxBudget;
  /** Where every stage gets its sandbox: the job's spec, after its setup (forked from one run where it can be). */
  sandboxes: JobSandboxes;
  /** The regression check, reproduction tests and matrix so far (fed by `emit`). */
  evidence: CheckEvidence;
  /** Emits a job event and records the evidence it carries. */
  emit(event: JobEventBody): void;
  /** The stop rule's reason once it fired; `stop` fires it. */
  stoppedEarly: string | null;
  stop(reason: string): void;
  /** A mixed job's stop the rule decided on before every policy had a rollout end (stop-rule.ts). */
  pendingStop: { index: number; reason: string } | null;
  /** Milliseconds spent in rollouts, summed over them. */
  rolloutMs: number;
  /** The built-in agent's shared prefix (`fork.at` first-edit or a step), once it ran: what rollouts go on from, if anything. */
  prefix?: PrefixOutcome;
  /** The job's store writes, in order (a step's snapshot never lands after the candidate's end). */
  writes: SerialWrites;
  save(slot: Slot): Promise<void>;
  progress(): Promise<void>;
  /** A sandbox that fails to close after its work is done must not lose that work: noted on the candidate. */
  noteCloseFailure(slot: Slot, error: unknown): void;
}

/** The built-in agent's shared prefix, ready to fork rollouts from (agent-prefix.ts). */
export interface SharedPrefix {
  /** Opens a rollout's sandbox: a fork of the prefix's, with the rollout's own mounts. */
  open(options: { mounts?: SandboxMount[]; signal: AbortSignal }): Promise<Sandbox>;
  state: AgentPrefix;
  release(): Promise<void>;
}

/** What the prefix came to, for the result (`compute`) and the events. */
export interface PrefixOutcome {
  shared: SharedPrefix | undefined;
  reason: string;
  /** The prefix rollout's policy usage and steps (spent whether or not it could be shared), and its wall time. */
  usage: Usage;
  steps: number;
  durationMs: number;
}

export function taskFromRequest(request: SolveRequest): Task {
  return {
    instance_id: request.instance_id,
    problem_statement: request.issue,
    repo: request.repo ? { url: request.repo.url, path: request.repo.path, base_commit: request.repo.commit } : undefined,
    image: request.image,
    test_command: request.verify.test_command,
    fail_to_pass: request.verify.fail_to_pass,
    pass_to_pass: request.verify.pass_to_pass,
    test_patch: request.verify.test_patch,
    meta: {},
  };
}

/** What a Harbor task's environment sets of a sandbox: its workdir, CPUs, memory, network and environment. */
export function harborSpec({ environment }: HarborTask): Partial<SandboxSpec> {
  return {
    network: environment.network,
    ...(environment.workdir ? { workdir: environment.workdir } : {}),
    ...(environment.cpus !== undefined ? { cpu: environment.cpus } : {}),
    ...(environment.memoryMb !== undefined ? { memoryMb: environment.memoryMb } : {}),
    ...(Object.keys(environment.env).length > 0 ? { env: environment.env } : {}),
  };
}

/** `reuse`: a retry's finished rollouts of the earlier job, by index (src/server/guards/retry-of.ts). */
export function createSolveContext(
  deps: SolveDeps,
  jobId: string,
  request: SolveRequest,
  hooks: SolveHooks,
  reuse?: ReadonlyMap<number, Trajectory>,
): SolveContext {
  const task = taskFromRequest(request);
  // Read again (it was checked at submit): the job runs the folder's tests as they are now.
  const harbor = request.harbor_task ? readHarborTask(request.harbor_task, { field: 'harbor_task', env: deps.harborEnv ?? {} }) : undefined;
  const stopController = new AbortController();
  const checksController = new AbortController();
  const plan = planPolicies(request);
  const configs = plan.map((planned) => rolloutConfig(planned, deps.policyDefaults ?? {}));
  const slots: Slot[] = Array.from({ length: request.n }, (_, index) => {
    const policy = policyOf(plan, index).index;
    const reused = reuse?.get(index);
    return { index, policy, config: configs[policy]!, status: 'pending', ...(reused ? { reused } : {}) };
  });
  for (const stored of hooks.resume ?? []) {
    const slot = slots[stored.index];
    if (!slot || (stored.status !== 'finished' && stored.status !== 'failed')) continue;
    Object.assign(slot, {
      status: stored.status,
      kept: true,
      ...(stored.trajectory ? { trajectory: stored.trajectory } : {}),
      ...(stored.score ? { score: stored.score } : {}),
      ...(stored.verify ? { verify: stored.verify } : {}),
      ...(stored.error ? { error: stored.error } : {}),
    });
  }
  const budget = createSandboxBudget(request.max_sandboxes);
  const count = (status: CandidateStatus) => slots.filter((slot) => slot.status === status).length;
  const context: SolveContext = {
    deps,
    jobId,
    request,
    task,
    spec: { repo: task.repo, image: task.image, network: false, label: jobId, ...(harbor ? harborSpec(harbor) : {}) },
    ...(harbor ? { harbor } : {}),
    plan,
    agentConfigs: plan.map(({ agent }) =>
      loadAgentConfig(agent.config, {
        ...(agent.step_limit ? { step_limit: agent.step_limit } : {}),
        ...(agent.time_limit_s ? { time_limit_s: agent.time_limit_s } : {}),
        ...(agent.command_timeout_s ? { command_timeout_s: agent.command_timeout_s } : {}),
      }),
    ),
    hooks,
    signal: AbortSignal.any([hooks.signal, stopController.signal]),
    checksSignal: AbortSignal.any([hooks.signal, checksController.signal]),
    endChecks: () => checksController.abort(new Error('the job ended')),
    background: [],
    ...(request.scoring.enabled && deps.valueModel ? { valueModel: deps.valueModel } : {}),
    verifying: request.verify.enabled,
    slots,
    budget,
    // Replaced below, once `emit` exists (the setup announces its mode).
    sandboxes: undefined as unknown as JobSandboxes,
    evidence: new CheckEvidence({
      regression: request.verify.enabled && request.verify.regression.enabled,
      reproduction: request.verify.enabled && request.verify.reproduction !== undefined,
      poolTests: poolTestsOn(request),
    }),
    emit(event) {
      context.evidence.apply(event);
      hooks.emit(event);
    },
    stoppedEarly: null,
    pendingStop: null,
    stop(reason) {
      if (context.stoppedEarly) return;
      context.stoppedEarly = reason;
      stopController.abort(new Error(`stop rule: ${reason}`));
    },
    rolloutMs: 0,
    writes: new SerialWrites(),
    async save(slot) {
      // Read now, written in turn: the candidate as it is at this call.
      const update = {
        status: slot.status,
        trajectory: slot.trajectory ?? null,
        score: slot.score ?? null,
        verify: slot.verify ?? null,
        error: slot.error ?? null,
        // Kept with the candidate, so training and exports know it is the earlier job's run (docs/solve.md#retrying-what-failed).
        ...(slot.reused && request.retry_of !== undefined ? { reused_from: { job_id: request.retry_of, index: slot.index } } : {}),
      };
      await context.writes.run(() => deps.store.putCandidate(jobId, slot.index, update));
    },
    async progress() {
      // Counted now, written in turn: the counters are those of this moment.
      const progress = {
        rollouts_total: request.n,
        rollouts_running: count('running'),
        rollouts_finished: count('finished'),
        rollouts_failed: count('failed'),
        scored: slots.filter((slot) => slot.score).length,
        verified: slots.filter((slot) => slot.verify).length,
      };
      await context.writes.run(() => deps.store.updateJob(jobId, { progress }));
    },
    noteCloseFailure(slot, error) {
      const failure = toWinnowerError(error);
      const note = `sandbox close failed: ${failure.code}: ${failure.message}`;
      slot.error = slot.error ? { ...slot.error, message: `${slot.error.message}; ${note}` } : { code: failure.code, message: note };
    },
  };
  context.sandboxes = createJobSandboxes({ provider: deps.sandboxes, spec: context.spec, request, budget, emit: context.emit });
  return context;
}
