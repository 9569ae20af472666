/**
 * Mixed-policy best-of-N: how a job's N rollouts split over its policies. Every rollout belongs to
 * one planned policy (the request's single `policy`/`agent`/`n` is the one-entry case), whose
 * configuration — policy model, harness, agent config, temperature, run name — its candidate
 * carries (`meta.config`), so own-history priors are learned and applied per configuration.
 */
import { resolvePolicyOptions, type DefaultPolicy } from '../rollout/policy/policy-factory.js';
import type { PolicyOptions } from '../rollout/policy/policy-options.js';
import { BUILTIN_HARNESS } from '../rollout/harness/harness-definition.js';
import type { AgentOptions, SolveRequest } from './solve-request.js';

export interface PlannedPolicy {
  /** Its position in `policies` (0 for a one-policy request). */
  index: number;
  /** The run name (`policies[i].name`), when given. */
  name?: string;
  n: number;
  /** Its own policy, else the job's (else the server's default, resolved at run time). */
  policy: PolicyOptions | undefined;
  /** The job's agent fields with the entry's over them. */
  agent: AgentOptions;
  /** Its wave sizes (summing to n). */
  waves: number[];
  /** Its first rollout's index in the job; its rollouts are `first .. first + n - 1`. */
  first: number;
  /** Where its fields are in the request body, for errors: `body` or `body.policies.1`. */
  field: string;
}

/** The request's policies in order, each with its rollout indexes; one entry without `policies`. */
export function planPolicies(request: SolveRequest): PlannedPolicy[] {
  if (!request.policies) {
    return [
      {
        index: 0,
        n: request.n,
        policy: request.policy,
        agent: request.agent,
        waves: request.waves ?? [request.n],
        first: 0,
        field: 'body',
      },
    ];
  }
  let first = 0;
  return request.policies.map((entry, index) => {
    const planned: PlannedPolicy = {
      index,
      ...(entry.name !== undefined ? { name: entry.name } : {}),
      n: entry.n,
      policy: entry.policy ?? request.policy,
      agent: { ...request.agent, ...definedOf(entry.agent ?? {}) },
      waves: entry.waves ?? [entry.n],
      first,
      field: `body.policies.${index}`,
    };
    first += entry.n;
    return planned;
  });
}

const definedOf = <T extends object>(fields: T): Partial<T> =>
  Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;

/** The planned policy rollout `index` belongs to. */
export function policyOf(plan: readonly PlannedPolicy[], index: number): PlannedPolicy {
  return plan.find((planned) => index >= planned.first && index < planned.first + planned.n) ?? plan[0]!;
}

/**
 * The job's waves as rollout indexes: wave k holds wave k of every policy, their rollouts
 * interleaved (one of each policy in turn), so that with a `concurrency` below the wave's size
 * every policy still starts rollouts first.
 */
export function jobWaves(plan: readonly PlannedPolicy[]): number[][] {
  const waves: number[][] = [];
  const perPolicy = plan.map((planned) => {
    let next = planned.first;
    return planned.waves.map((size) => {
      const members = Array.from({ length: size }, (_, offset) => next + offset);
      next += size;
      return members;
    });
  });
  const count = Math.max(...perPolicy.map((waveList) => waveList.length));
  for (let wave = 0; wave < count; wave += 1) {
    const lists = perPolicy.map((waveList) => waveList[wave] ?? []);
    const longest = Math.max(...lists.map((members) => members.length));
    const members: number[] = [];
    for (let position = 0; position < longest; position += 1)
      for (const list of lists) if (position < list.length) members.push(list[position]!);
    waves.push(members);
  }
  return waves;
}

/**
 * The configuration a candidate of `planned` carries (`meta.config`, beside its `source`): what
 * own-history priors tell runs apart by. Only what the request set or the policy resolves to, so
 * the same policy and harness in a one-policy job and in a mixed job have the same key.
 */
export function rolloutConfig(planned: PlannedPolicy, defaults: DefaultPolicy): Record<string, unknown> {
  let policy: PolicyOptions | undefined;
  try {
    policy = resolvePolicyOptions(planned.policy, defaults);
  } catch {
    policy = planned.policy; // no policy at all: the rollout fails with that error; its configuration still says what it was
  }
  const builtin = planned.agent.harness === BUILTIN_HARNESS;
  return {
    model: policy === undefined ? null : policy.kind === 'replay' ? 'replay' : policy.model,
    harness: planned.agent.harness,
    // The agent config is the built-in agent's prompts and limits; a harness brings its own.
    ...(builtin ? { agent: planned.agent.config } : {}),
    ...(!builtin && planned.agent.model ? { harness_model: planned.agent.model } : {}),
    ...(policy && policy.kind !== 'replay' && policy.temperature !== undefined ? { temperature: policy.temperature } : {}),
    ...(planned.name !== undefined ? { run: planned.name } : {}),
  };
}
