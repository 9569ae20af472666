/**
 * What runs in one rollout's sandbox, behind one shape for both kinds of agent: the built-in bash
 * agent (config/agents, the policy client) or a harness CLI (config/harnesses, its recording
 * proxy). Each gives the mounts its sandbox needs, a `run` that ends in a Trajectory, and a
 * `close` for what it started. `checkRollouts` is the same choice made at submit time, so a bad
 * harness or policy is a 400 naming the field, before any sandbox exists.
 */
import type { AgentConfig } from './agent/agent-config.js';
import { WinnowerError, wnwError } from '../errors.js';
import { type AgentPrefix, runAgent } from './agent/agent-loop.js';
import { createHarnessCatalog, type HarnessCatalog } from './harness/harness-catalog.js';
import { BUILTIN_HARNESS } from './harness/harness-definition.js';
import { prepareHarnessRollout } from './harness/run-harness.js';
import { resolvePolicyOptions } from './policy/policy-factory.js';
import { checkPolicyKind } from './proxy/upstream.js';
import type { PolicyOptions } from './policy/policy-options.js';
import type { Sandbox, SandboxMount } from '../sandbox/types.js';
import type { Task, Trajectory } from '../types/index.js';
import { planPolicies } from '../solve/policy-plan.js';
import type { SolveDeps } from '../solve/solve-deps.js';
import type { AgentOptions, SolveRequest } from '../solve/solve-request.js';

/** What one rollout runs: a policy (absent: the server's default) and the agent fields (a planned policy, or a request). */
export interface RolloutSetup {
  policy?: PolicyOptions | undefined;
  agent: AgentOptions;
}

export interface PreparedRollout {
  mounts: SandboxMount[];
  run(sandbox: Sandbox): Promise<Trajectory>;
  close(): Promise<void>;
}

export interface RolloutContext {
  task: Task;
  agentConfig: AgentConfig;
  trajectoryId: string;
  /** The rollout's index in the job: its seed. */
  index: number;
  /** Its index among its policy's rollouts: which recording a replay uses (default `index`). */
  policyIndex?: number;
  signal: AbortSignal;
  onStep: (partial: Trajectory) => void;
  /** The built-in agent goes on from this shared prefix (its sandbox a fork of the prefix's: src/solve/agent-prefix.ts). */
  resume?: AgentPrefix | undefined;
}

let defaultCatalog: HarnessCatalog | undefined;

/** The deps' catalog, or config/harnesses with the default install folder (read once). */
export const harnessCatalog = (deps: Pick<SolveDeps, 'harnesses'>): HarnessCatalog =>
  deps.harnesses ?? (defaultCatalog ??= createHarnessCatalog());

export async function prepareRollout(deps: SolveDeps, setup: RolloutSetup, context: RolloutContext): Promise<PreparedRollout> {
  const { agent } = setup;
  const recordingIndex = context.policyIndex ?? context.index;
  if (agent.harness === BUILTIN_HARNESS) {
    const policy = deps.createPolicy(setup.policy, recordingIndex);
    return {
      mounts: [],
      run: (sandbox) =>
        runAgent({
          policy,
          sandbox,
          task: context.task,
          config: context.agentConfig,
          trajectoryId: context.trajectoryId,
          seed: context.index,
          signal: context.signal,
          onStep: context.onStep,
          ...(context.resume ? { resume: context.resume } : {}),
        }),
      close: async () => undefined,
    };
  }
  return prepareHarnessRollout({
    harness: harnessCatalog(deps).resolve(agent.harness),
    policy: resolvePolicyOptions(setup.policy, deps.policyDefaults ?? {}),
    task: context.task,
    trajectoryId: context.trajectoryId,
    seed: context.index,
    recordingIndex,
    model: agent.model,
    limits: { max_calls: agent.step_limit, token_limit: agent.token_limit, time_limit_s: agent.time_limit_s },
    signal: context.signal,
    onStep: context.onStep,
  });
}

/**
 * Submit-time, for every planned policy: the harness is defined and installed, and the policy fits
 * it (or the built-in agent). An error names the field relative to the body (`policy.kind`, or
 * `policies.1.policy.kind` in a mixed job).
 */
export function checkRollouts(deps: SolveDeps, request: SolveRequest): void {
  for (const planned of planPolicies(request)) {
    const prefix = planned.field === 'body' ? '' : `${planned.field.slice('body.'.length)}.`;
    withFieldPrefix(prefix, planned.policy === request.policy, () => {
      if (planned.agent.harness === BUILTIN_HARNESS) {
        // The model name a harness is told: the built-in agent has none to tell, and would ignore it.
        if (planned.agent.model !== undefined)
          throw wnwError(
            'WNW_ERR_INPUT_INVALID',
            'agent.model: the model name a harness CLI is told; the built-in agent has none (give agent.harness)',
            {
              details: { field: 'agent.model' },
            },
          );
        for (let index = 0; index < planned.n; index += 1) deps.createPolicy(planned.policy, index);
        return;
      }
      const { definition } = harnessCatalog(deps).resolve(planned.agent.harness);
      checkPolicyKind(definition.protocol, resolvePolicyOptions(planned.policy, deps.policyDefaults ?? {}));
    });
  }
}

/**
 * Runs a check whose errors name fields of one policy (`policy.kind`, `agent.harness`) and, in a
 * mixed job, puts the entry's place before them. `sharedPolicy`: the entry uses the job's own
 * `policy`, so a policy field keeps its top-level name.
 */
function withFieldPrefix(prefix: string, sharedPolicy: boolean, check: () => void): void {
  try {
    check();
  } catch (error) {
    if (!prefix || !WinnowerError.isInstance(error)) throw error;
    const field = error.details.field;
    if (typeof field !== 'string' || (sharedPolicy && field.startsWith('policy'))) throw error;
    const renamed = `${prefix}${field}`;
    const message = error.message.startsWith(field) ? `${renamed}${error.message.slice(field.length)}` : `${renamed}: ${error.message}`;
    throw wnwError(error.code, message, { details: { ...error.details, field: renamed }, cause: error, retryable: error.retryable });
  }
}
