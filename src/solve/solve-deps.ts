/**
 * What a solve job needs from the server: sandboxes, the value model, the policy factory, the
 * store, the harnesses. Its own module so the stages can take it without importing the pipeline.
 */
import type { WinnowerError } from '../errors.js';
import type { JudgeOptions } from '../judge/judge-options.js';
import type { DefaultPolicy } from '../rollout/policy/policy-factory.js';
import type { Policy } from '../rollout/policy/types.js';
import type { HarnessCatalog } from '../rollout/harness/harness-catalog.js';
import type { ValueModel } from '../scoring/value-model.js';
import type { SandboxProvider } from '../sandbox/types.js';
import type { JobStore } from '../store/types.js';
import type { SolveRequest } from './solve-request.js';

export interface SolveDeps {
  sandboxes: SandboxProvider;
  /**
   * Absent when no value model is configured: selection then uses consensus or tests. One model
   * for the whole job: the server pins the one serving when the job starts (src/server/solve-job.ts).
   */
  valueModel?: ValueModel;
  /** The policy for rollout `index` (distinct seed per rollout). */
  createPolicy(policy: SolveRequest['policy'], index: number): Policy;
  store: JobStore;
  /** The harnesses this server can run (default: config/harnesses and the installed CLIs). */
  harnesses?: HarnessCatalog;
  /**
   * The server's readiness verdict on the value model: an error when a probe found it hung or
   * failing (src/server/scorer-readiness.ts). Scoring then stops at once and selection degrades,
   * instead of every candidate waiting out the scorer's own deadline.
   */
  scorerDown?(): Promise<WinnowerError | undefined>;
  /** The server's default policy, which harness rollouts without `policy` call through their proxy. */
  policyDefaults?: DefaultPolicy;
  /** The server's default pairwise judge (config `judge`), for requests with strategy judge or hybrid that name none. */
  judge?: JudgeOptions;
  /**
   * Where a Harbor task's `${VAR}` templates are filled from: the user's own environment for
   * `winnower solve` and `run`; absent on a server, whose environment (its keys) is not a
   * request's to read, so only the templates' defaults apply (docs/harbor.md#tasktoml).
   */
  harborEnv?: NodeJS.ProcessEnv;
}
