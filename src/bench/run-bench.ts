/**
 * `winnower bench` end to end: the target (a running winnower, or one started here on the
 * embedded defaults), the scenario's request, a probe that must answer 2xx, then per connection
 * count a warm-up and a measured run; with `compareBackend`, the same scoring request sent
 * straight to the scorer backend (a fixed-latency stub that winnower itself scores with) in the
 * same run, and the ratio between the two.
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { request } from 'undici';
import { prepareDemoRepo } from '../cli/demo-repo.js';
import { commandsOf, demoDir, demoRecordings } from '../cli/demo-task.js';
import { wnwError } from '../errors.js';
import { runLoad, type LoadOptions, type LoadRequest, type LoadResult } from './load.js';
import { startPolicyStub, type PolicyStub } from './policy-stub.js';
import { scenarioRequest, scoringBody, solveBody, type ScenarioName } from './scenarios.js';
import { startScorerStub, type ScorerStub } from './scorer-stub.js';
import { startSelfServer, type SelfServer } from './self-server.js';

export interface BenchOptions {
  scenario: ScenarioName;
  /** A running winnower; absent: one is started here. */
  url?: string;
  apiKey?: string;
  connections: number[];
  durationS: number;
  amount?: number;
  /** Requests per connection in each run (amount = this × connections), so every level gets as many rounds; instead of a duration. */
  perConnection?: number;
  warmupS: number;
  timeoutS: number;
  /** score / rerank: candidates per request and their length in tokens. */
  candidates: number;
  tokens: number;
  /** Self-started server: the scorer's batching. */
  batching: boolean;
  compareBackend: boolean;
  /** The stub backend's fixed latency (ms). */
  backendLatencyMs: number;
  /** solve: rollouts per job, the policy stub's latency per turn, verification. */
  n: number;
  policyLatencyMs: number;
  verify: boolean;
  progress: boolean;
  /** The CLI entry a self-started server runs (default: this process's). */
  entry?: string;
}

export interface BenchRun {
  connections: number;
  winnower: LoadResult;
  /** With compareBackend: the same scoring request straight to the backend. */
  backend?: LoadResult;
  /** winnower over backend: mean and p99 latency, and requests/s. */
  overhead?: { latency_mean_ratio: number; latency_p99_ratio: number; throughput_ratio: number; added_latency_percent: number };
}

export interface BenchReport {
  scenario: ScenarioName;
  target: string;
  server: Record<string, unknown>;
  request: Record<string, unknown>;
  load: { duration_s?: number; amount?: number; requests_per_connection?: number; warmup_s: number; timeout_s: number };
  runs: BenchRun[];
}

/** The probe: one request that must succeed; for scoring, the tokens the server counted per candidate. */
async function probe(url: string, load: LoadRequest): Promise<{ inputTokens?: number }> {
  const response = await request(new URL(load.path, url), { method: load.method, headers: { 'content-type': 'application/json', ...load.headers }, body: `${load.bodyParts![0]}0${load.bodyParts![1] ?? ''}`, headersTimeout: 0, bodyTimeout: 0 });
  const text = await response.body.text();
  if (response.statusCode >= 300) {
    throw wnwError('WNW_ERR_INPUT_INVALID', `the probe request ${load.method} ${load.path} answered ${response.statusCode}: ${text.slice(0, 600)}`, { details: { status: response.statusCode } });
  }
  const scores = (JSON.parse(text) as { scores?: Array<{ input_tokens?: number }> }).scores;
  const counted = scores?.flatMap((score) => (typeof score.input_tokens === 'number' ? [score.input_tokens] : [])) ?? [];
  return counted.length ? { inputTokens: Math.round(counted.reduce((a, b) => a + b, 0) / counted.length) } : {};
}

function overheadOf(through: LoadResult, direct: LoadResult): NonNullable<BenchRun['overhead']> {
  const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 1000) / 1000 : Number.NaN);
  const mean = ratio(through.latency_ms.mean, direct.latency_ms.mean);
  return { latency_mean_ratio: mean, latency_p99_ratio: ratio(through.latency_ms.p99, direct.latency_ms.p99), throughput_ratio: ratio(through.requests_per_s, direct.requests_per_s), added_latency_percent: Math.round((mean - 1) * 1000) / 10 };
}

export async function runBench(options: BenchOptions): Promise<BenchReport> {
  if (options.compareBackend && options.url) {
    throw wnwError('WNW_ERR_INPUT_INVALID', '--compare-backend starts its own winnower on a fixed-latency backend, to see what winnower sends it; leave out --url', { details: { field: 'compare-backend' } });
  }
  if (options.compareBackend && options.scenario === 'solve') {
    throw wnwError('WNW_ERR_INPUT_INVALID', '--compare-backend compares scoring requests: use --scenario score or rerank', { details: { field: 'compare-backend' } });
  }
  const closers: Array<() => Promise<void>> = [];
  try {
    let stub: ScorerStub | undefined;
    let policy: PolicyStub | undefined;
    if (options.compareBackend) {
      stub = await startScorerStub({ latencyMs: options.backendLatencyMs });
      closers.push(() => stub!.close());
    }
    if (options.scenario === 'solve') {
      const script = commandsOf(demoRecordings()['correct-fix']!);
      policy = await startPolicyStub({ latencyMs: options.policyLatencyMs, script: () => script });
      closers.push(() => policy!.close());
    }
    const batching = options.batching ? { maxBatchSize: 16, maxBatchTokens: 262_144, windowMs: 5 } : false;
    const scorer = stub ? { backend: 'vllm', model: stub.model, urls: [stub.url], retries: 0, batching } : { backend: 'onnx', batching };
    let server: SelfServer | undefined;
    if (!options.url) {
      server = await startSelfServer({ scorer, maxRunningJobs: Math.max(...options.connections), ...(options.entry ? { entry: options.entry } : {}) });
      closers.push(() => server!.close());
    }
    const url = options.url ?? server!.url;

    let bodyParts: [string, string];
    if (options.scenario === 'solve') {
      const repo = prepareDemoRepo(join(demoDir(), 'repo'));
      closers.push(async () => rmSync(dirname(repo), { recursive: true, force: true }));
      bodyParts = solveBody({ repo, policyUrl: policy!.url, n: options.n, verify: options.verify });
    } else {
      bodyParts = scoringBody({ candidates: options.candidates, tokens: options.tokens });
    }
    let load = scenarioRequest(options.scenario, bodyParts, options.apiKey);
    let counted = await probe(url, load);
    // The length is estimated here; once the server has counted, one correction brings it near the target.
    if (counted.inputTokens !== undefined && Math.abs(counted.inputTokens / options.tokens - 1) > 0.1) {
      bodyParts = scoringBody({ candidates: options.candidates, tokens: Math.max(1, Math.round((options.tokens * options.tokens) / counted.inputTokens)) });
      load = scenarioRequest(options.scenario, bodyParts, options.apiKey);
      counted = await probe(url, load);
    }
    const direct: LoadRequest | undefined = stub ? { method: 'POST', path: '/classify', bodyParts: [stub.lastClassifyBody()!] } : undefined;

    const runs: BenchRun[] = [];
    for (const connections of options.connections) {
      const amount = options.perConnection !== undefined ? options.perConnection * connections : options.amount;
      const base: Omit<LoadOptions, 'label'> = { connections, durationS: options.durationS, ...(amount === undefined ? {} : { amount }), timeoutS: options.timeoutS, progress: options.progress };
      const measure = async (target: string, what: LoadRequest, label: string) => {
        if (options.warmupS > 0) await runLoad(target, what, { ...base, amount: undefined, durationS: options.warmupS, label: `${label} warm-up`, progress: false });
        return runLoad(target, what, { ...base, label });
      };
      const backend = direct ? await measure(stub!.url, direct, `backend c=${connections}`) : undefined;
      const winnower = await measure(url, load, `${options.scenario} c=${connections}`);
      runs.push({ connections, winnower, ...(backend ? { backend, overhead: overheadOf(winnower, backend) } : {}) });
    }
    return {
      scenario: options.scenario,
      target: options.url ?? 'self-started',
      server: options.url ? { url: options.url } : { scorer: stub ? `vllm protocol, fixed ${options.backendLatencyMs} ms backend (bench stub)` : 'onnx, embedded model', batching: options.batching, score_cache: false },
      request:
        options.scenario === 'solve'
          ? { n: options.n, policy_latency_ms: options.policyLatencyMs, verify: options.verify }
          : { candidates: options.candidates, trajectory_tokens: options.tokens, ...(counted.inputTokens === undefined ? {} : { input_tokens_per_candidate: counted.inputTokens }) },
      load: {
        ...(options.perConnection !== undefined ? { requests_per_connection: options.perConnection } : options.amount !== undefined ? { amount: options.amount } : { duration_s: options.durationS }),
        warmup_s: options.warmupS,
        timeout_s: options.timeoutS,
      },
      runs,
    };
  } finally {
    for (const close of closers.reverse()) {
      await close().catch((error: unknown) => console.error(`winnower bench: cleanup failed: ${error instanceof Error ? error.message : String(error)}`));
    }
  }
}
