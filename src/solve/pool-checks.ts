/**
 * The solve job's execution checks (regression check, reproduction tests, pass matrix, tests from
 * the pool) on a pool of existing candidates — `/rerank` with a repository: the same stages
 * (regression.ts, reproduction.ts, pool-tests.ts) on a context whose candidates are all finished from the start, no rollouts.
 */
import type { Task, Trajectory } from '../types/index.js';
import type { ParserName } from '../verify/detect.js';
import type { CandidateChecks, ChecksEvidence } from '../types/checks.js';
import type { JobEventBody } from './events.js';
import { startRegression } from './regression.js';
import { startPoolTests } from './pool-tests.js';
import { startReproduction } from './reproduction.js';
import { createSolveContext } from './solve-context.js';
import type { SolveDeps } from './solve-deps.js';
import { poolTestsOn, SolveRequest, type PoolTestOptions, type RegressionOptions, type ReproductionOptions } from './solve-request.js';

export interface PoolCheckOptions {
  regression?: Partial<RegressionOptions> & { enabled?: boolean };
  /** Test writers by `reproduction.policy` (or the server's default policy). */
  reproduction?: Partial<ReproductionOptions>;
  /** Tests from the pool: on unless `enabled: false` (a pool check has no test list). */
  poolTests?: Partial<PoolTestOptions>;
  concurrency?: number;
  /** The parser of `task.test_command`'s log, as `verify.parser` is for a solve job (docs/verify.md "Choosing a parser"). */
  parser?: ParserName;
  signal: AbortSignal;
  /** Each check's event, as a solve job would stream it. */
  onEvent?: (event: JobEventBody) => void;
}

export interface PoolChecks {
  evidence: ChecksEvidence;
  /** By trajectory id: what selection reads. */
  checks: Map<string, CandidateChecks>;
}

export async function checkPool(
  deps: SolveDeps,
  task: Task,
  trajectories: readonly Trajectory[],
  options: PoolCheckOptions,
): Promise<PoolChecks> {
  const request = SolveRequest.parse({
    instance_id: task.instance_id,
    issue: task.problem_statement || task.instance_id,
    ...(task.repo?.url || task.repo?.path
      ? {
          repo: {
            ...(task.repo.url ? { url: task.repo.url } : { path: task.repo.path }),
            ...(task.repo.base_commit ? { commit: task.repo.base_commit } : {}),
          },
        }
      : {}),
    ...(task.image ? { image: task.image } : {}),
    n: Math.max(1, Math.min(64, trajectories.length)),
    ...(options.reproduction?.policy ? { policy: options.reproduction.policy } : {}),
    ...(options.concurrency ? { max_sandboxes: options.concurrency } : {}),
    verify: {
      enabled: true,
      ...(task.test_command ? { test_command: task.test_command } : {}),
      ...(options.parser ? { parser: options.parser } : {}),
      regression: { enabled: true, ...options.regression },
      ...(options.reproduction ? { reproduction: options.reproduction } : {}),
      pool_tests: { ...options.poolTests, enabled: options.poolTests?.enabled ?? true },
    },
  });
  // No store: a pool check keeps no job; its events go to `onEvent`.
  const context = createSolveContext(deps, 'rerank', request, { signal: options.signal, emit: (event) => options.onEvent?.(event) });
  const slots = trajectories.map((trajectory, index) => ({ index, policy: 0, config: {}, status: 'finished' as const, trajectory }));
  const regression = request.verify.regression.enabled ? startRegression(context) : undefined;
  const reproduction = request.verify.reproduction ? startReproduction(context) : undefined;
  const poolTests = poolTestsOn(request) ? startPoolTests(context) : undefined;
  try {
    await Promise.all(slots.map((slot) => Promise.all([regression?.check(slot), reproduction?.check(slot)])));
    await poolTests?.run(slots);
  } finally {
    context.endChecks();
    await Promise.allSettled(context.background);
  }
  options.signal.throwIfAborted();
  reproduction?.finish();
  const checks = new Map<string, CandidateChecks>();
  for (const slot of slots) {
    const found = context.evidence.forCandidate(slot.index);
    if (found) checks.set(slot.trajectory.id, found);
  }
  return { evidence: context.evidence.view(), checks };
}
