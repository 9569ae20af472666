/**
 * What runs in one rollout's sandbox, behind one shape for both kinds of agent: the built-in bash
 * agent (config/agents, the policy client) or a harness CLI (config/harnesses, its recording
 * proxy). Each gives the mounts its sandbox needs, a `run` that ends in a Trajectory, and a
 * `close` for what it started. `checkRollouts` is the same choice made at submit time, so a bad
 * harness or policy is a 400 naming the field, before any sandbox exists.
 */
import type { AgentConfig } from '../candidates/agent-config.js';
import { runAgent } from '../candidates/agent-loop.js';
import { createHarnessCatalog, type HarnessCatalog } from '../harness/harness-catalog.js';
import { BUILTIN_HARNESS } from '../harness/harness-definition.js';
import { prepareHarnessRollout } from '../harness/run-harness.js';
import { resolvePolicyOptions } from '../candidates/policy-factory.js';
import { checkPolicyKind } from '../proxy/upstream.js';
import type { Sandbox, SandboxMount } from '../sandbox/types.js';
import type { Task, Trajectory } from '../types/index.js';
import type { SolveDeps } from './solve-deps.js';
import type { SolveRequest } from './solve-request.js';

export interface PreparedRollout {
  mounts: SandboxMount[];
  run(sandbox: Sandbox): Promise<Trajectory>;
  close(): Promise<void>;
}

export interface RolloutContext {
  task: Task;
  agentConfig: AgentConfig;
  trajectoryId: string;
  index: number;
  signal: AbortSignal;
  onStep: (partial: Trajectory) => void;
}

let defaultCatalog: HarnessCatalog | undefined;

/** The deps' catalog, or config/harnesses with the default install folder (read once). */
export const harnessCatalog = (deps: Pick<SolveDeps, 'harnesses'>): HarnessCatalog => deps.harnesses ?? (defaultCatalog ??= createHarnessCatalog());

export async function prepareRollout(deps: SolveDeps, request: SolveRequest, context: RolloutContext): Promise<PreparedRollout> {
  const { agent } = request;
  if (agent.harness === BUILTIN_HARNESS) {
    const policy = deps.createPolicy(request.policy, context.index);
    return {
      mounts: [],
      run: (sandbox) =>
        runAgent({ policy, sandbox, task: context.task, config: context.agentConfig, trajectoryId: context.trajectoryId, seed: context.index, signal: context.signal, onStep: context.onStep }),
      close: async () => undefined,
    };
  }
  return prepareHarnessRollout({
    harness: harnessCatalog(deps).resolve(agent.harness),
    policy: resolvePolicyOptions(request.policy, deps.policyDefaults ?? {}),
    task: context.task,
    trajectoryId: context.trajectoryId,
    seed: context.index,
    model: agent.model,
    limits: { max_calls: agent.step_limit, token_limit: agent.token_limit, time_limit_s: agent.time_limit_s },
    signal: context.signal,
    onStep: context.onStep,
  });
}

/** Submit-time: the harness is defined and installed, and the policy fits it (or the built-in agent). */
export function checkRollouts(deps: SolveDeps, request: SolveRequest): void {
  if (request.agent.harness === BUILTIN_HARNESS) {
    for (let index = 0; index < request.n; index += 1) deps.createPolicy(request.policy, index);
    return;
  }
  const { definition } = harnessCatalog(deps).resolve(request.agent.harness);
  checkPolicyKind(definition.protocol, resolvePolicyOptions(request.policy, deps.policyDefaults ?? {}));
}
