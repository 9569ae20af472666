/**
 * The service's Prometheus metrics, in one registry. Nothing else in winnower imports
 * prom-client: the pieces report through small hooks — `scorer` for createScorer's observer,
 * `sandbox` for the sandbox provider's, `onJobEvent` for the job manager, `observeRequest` for the
 * server — and what is a state rather than an event (jobs by status, queue length, sandboxes
 * open) is read when Prometheus scrapes, from the sources given to `watch`.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ScorerObserver } from '../scoring/with-observer.js';
import type { SandboxObserver } from '../sandbox/with-observer.js';
import type { JobEvent } from '../solve/events.js';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const SLOW_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** What the gauges read at scrape time. */
export interface MetricSources {
  jobsByStatus?: () => Record<string, number> | Promise<Record<string, number>>;
  queuedJobs?: () => number;
  openSandboxes?: () => number;
  /** With a shared queue: the jobs whose lease this replica holds. */
  leasesHeld?: () => number;
}

export interface ServiceMetrics {
  readonly registry: Registry;
  readonly scorer: ScorerObserver;
  readonly sandbox: SandboxObserver;
  onJobEvent(event: JobEvent, job: { id: string; kind: string }): void;
  /** This replica took over a job another replica held (shared queue). */
  onTakeover(): void;
  /** A verification outside a job (POST /rerank with verify). */
  observeVerify(status: string): void;
  observeRequest(labels: { method: string; route: string; status: number }, seconds: number): void;
  /** Sets (or replaces) the sources of the state gauges. */
  watch(sources: MetricSources): void;
}

/** `ok`, `aborted` or `error`, from an event's error. */
function outcomeOf(error: unknown): string {
  if (error === undefined) return 'ok';
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'WNW_ERR_OP_ABORTED' || (error as Error | null)?.name === 'AbortError' ? 'aborted' : 'error';
}

export function createServiceMetrics(options: { defaultMetrics?: boolean } = {}): ServiceMetrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  let sources: MetricSources = {};

  const http = new Histogram({
    name: 'winnower_http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const scorerLatency = new Histogram({
    name: 'winnower_scorer_batch_duration_seconds',
    help: 'Duration of one batch sent to the scorer backend, by outcome',
    labelNames: ['backend', 'outcome'],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const batchSize = new Histogram({
    name: 'winnower_scorer_batch_size',
    help: 'Inputs per batch sent to the scorer backend',
    labelNames: ['backend'],
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers,
  });
  const tokens = new Counter({
    name: 'winnower_scorer_tokens_total',
    help: 'Tokens scored by the backend (ids counted, text estimated at 4 characters a token)',
    labelNames: ['backend'],
    registers,
  });
  const inputs = new Counter({
    name: 'winnower_scorer_inputs_total',
    help: 'Inputs asked to be scored, by whether the score cache answered them',
    labelNames: ['backend', 'cache'],
    registers,
  });
  const sandboxCreate = new Histogram({
    name: 'winnower_sandbox_create_duration_seconds',
    help: 'Time to create a sandbox, by provider and outcome',
    labelNames: ['provider', 'outcome'],
    buckets: SLOW_BUCKETS,
    registers,
  });
  const sandboxExec = new Histogram({
    name: 'winnower_sandbox_exec_duration_seconds',
    help: 'Duration of one command in a sandbox, by provider and outcome (ok, timeout, error)',
    labelNames: ['provider', 'outcome'],
    buckets: SLOW_BUCKETS,
    registers,
  });
  const rollouts = new Gauge({ name: 'winnower_rollouts_in_flight', help: 'Rollouts running now', registers });
  const rolloutsDone = new Counter({
    name: 'winnower_rollouts_total',
    help: 'Rollouts ended, by status',
    labelNames: ['status'],
    registers,
  });
  const verifications = new Counter({
    name: 'winnower_verifications_total',
    help: 'Verification outcomes (resolved, unresolved, error, ...)',
    labelNames: ['status'],
    registers,
  });
  new Gauge({
    name: 'winnower_jobs',
    help: 'Jobs in the store by status',
    labelNames: ['status'],
    registers,
    async collect() {
      const counts = (await sources.jobsByStatus?.()) ?? {};
      this.reset();
      for (const [status, count] of Object.entries(counts)) this.set({ status }, count);
    },
  });
  new Gauge({
    name: 'winnower_jobs_queued',
    help: 'Jobs waiting for a slot (with a shared queue: for any replica)',
    registers,
    collect() {
      this.set(sources.queuedJobs?.() ?? 0);
    },
  });
  const takeovers = new Counter({
    name: 'winnower_job_takeovers_total',
    help: 'Jobs this replica took over from another (a lapsed lease or a hand-back at shutdown)',
    registers,
  });
  new Gauge({
    name: 'winnower_job_leases_held',
    help: 'Jobs whose lease this replica holds (shared queue)',
    registers,
    collect() {
      this.set(sources.leasesHeld?.() ?? 0);
    },
  });
  new Gauge({
    name: 'winnower_sandboxes_open',
    help: 'Sandboxes open in this process',
    registers,
    collect() {
      this.set(sources.openSandboxes?.() ?? 0);
    },
  });

  return {
    registry,
    scorer: {
      onBatch(event) {
        scorerLatency.observe({ backend: event.backend, outcome: outcomeOf(event.error) }, event.durationMs / 1000);
        batchSize.observe({ backend: event.backend }, event.inputs);
        if (event.error === undefined) tokens.inc({ backend: event.backend }, event.tokens);
      },
      onCall(event) {
        if (event.error !== undefined) return;
        if (event.cached > 0) inputs.inc({ backend: event.backend, cache: 'hit' }, event.cached);
        if (event.inputs > event.cached) inputs.inc({ backend: event.backend, cache: 'miss' }, event.inputs - event.cached);
      },
    },
    sandbox: {
      onCreate(event) {
        sandboxCreate.observe({ provider: event.provider, outcome: outcomeOf(event.error) }, event.durationMs / 1000);
      },
      onExec(event) {
        const outcome = event.result?.timedOut ? 'timeout' : outcomeOf(event.error);
        sandboxExec.observe({ provider: event.provider, outcome }, event.durationMs / 1000);
      },
    },
    onJobEvent(event) {
      if (event.type === 'rollout-start') rollouts.inc();
      else if (event.type === 'rollout-finish') {
        rollouts.dec();
        rolloutsDone.inc({ status: event.status });
      } else if (event.type === 'verify-finish') verifications.inc({ status: event.status });
    },
    onTakeover() {
      takeovers.inc();
    },
    observeVerify(status) {
      verifications.inc({ status });
    },
    observeRequest(labels, seconds) {
      http.observe({ method: labels.method, route: labels.route, status: labels.status }, seconds);
    },
    watch(next) {
      sources = next;
    },
  };
}
