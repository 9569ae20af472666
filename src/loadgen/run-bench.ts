/**
 * `winnower bench` end to end: the target (a running winnower, or one started here on the
 * embedded defaults), the scenario's request, a probe that must answer 2xx, then per connection
 * count a warm-up and a measured run; with `compareBackend`, the same scoring request sent
 * straight to the scorer backend in the same run, and the ratio between the two. The backend is
 * a fixed-latency stub that winnower itself scores with, or the operator's vLLM or SGLang server
 * (`backendUrl`): then a capture-only winnower, pointed at it through a recording pass-through,
 * shows the body winnower sends, and a second winnower, pointed at the backend itself, is the
 * one measured, so the pass-through is on no measured path.
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { request } from 'undici';
import { prepareDemoRepo } from '../cli/demo-repo.js';
import { commandsOf, demoDir, demoRecordings } from '../cli/demo-task.js';
import { wnwError } from '../errors.js';
import { servedModel } from './backend-model.js';
import { CAPTURE_NUMBER, directRequestOf, type DirectRequest } from './direct-request.js';
import { runLoad, type LoadOptions, type LoadRequest, type LoadResult } from './load.js';
import { startPolicyStub, type PolicyStub } from './policy-stub.js';
import { startRecordingProxy } from './recording-proxy.js';
import { scenarioRequest, scoringBody, solveBody, type ScenarioName } from './scenarios.js';
import { startScorerStub, type ScorerStub } from './scorer-stub.js';
import { startSelfServer } from './self-server.js';

import { BACKEND_KINDS, type BackendKind } from './names.js';

export { BACKEND_KINDS, type BackendKind };

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
  /** The stub backend's fixed latency (ms, default 50); not with `backendUrl`. */
  backendLatencyMs?: number;
  /** compareBackend: the operator's scorer backend instead of the stub, with its kind (default vllm), API key and model (default: the first it lists). */
  backendUrl?: string;
  backendKind?: BackendKind;
  backendApiKey?: string;
  backendModel?: string;
  /** solve: rollouts per job, the policy stub's latency per turn, verification. */
  n: number;
  policyLatencyMs: number;
  verify: boolean;
  progress: boolean;
  /** The CLI entry a self-started server runs (default: this process's). */
  entry?: string;
  /** CPUs a self-started server is pinned to (`taskset -c` list); absent: all. */
  serverCpus?: string;
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
  /** With compareBackend: the scoring call sent straight to the backend, and how it was captured. */
  direct?: DirectRequest['summary'] & { captured: string };
  load: { duration_s?: number; amount?: number; requests_per_connection?: number; warmup_s: number; timeout_s: number };
  runs: BenchRun[];
}

/** The probe: one request (with request number `number`) that must succeed; for scoring, the tokens the server counted per candidate. */
async function probe(url: string, load: LoadRequest, number: number): Promise<{ inputTokens?: number }> {
  const response = await request(new URL(load.path, url), {
    method: load.method,
    headers: { 'content-type': 'application/json', ...load.headers },
    body: load.bodyParts!.join(String(number)),
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const text = await response.body.text();
  if (response.statusCode >= 300) {
    throw wnwError(
      'WNW_ERR_INPUT_INVALID',
      `the probe request ${load.method} ${load.path} answered ${response.statusCode}: ${text.slice(0, 600)}`,
      { details: { status: response.statusCode } },
    );
  }
  const scores = (JSON.parse(text) as { scores?: Array<{ input_tokens?: number; error?: { code?: string; message?: string } | null }> })
    .scores;
  // winnower answers 200 with an error in place of a score it could not get: a bench of that would time failures.
  const failed = scores?.find((score) => score.error);
  if (failed) {
    throw wnwError(
      'WNW_ERR_SCORE_UPSTREAM',
      `the probe request ${load.method} ${load.path} answered ${response.statusCode} but its scorer failed (${failed.error!.code}: ${failed.error!.message}); fix the scorer before measuring`,
      { details: { status: response.statusCode } },
    );
  }
  const counted = scores?.flatMap((score) => (typeof score.input_tokens === 'number' ? [score.input_tokens] : [])) ?? [];
  return counted.length ? { inputTokens: Math.round(counted.reduce((a, b) => a + b, 0) / counted.length) } : {};
}

/** The scoring request, probed once on `url`; the length is estimated here, and once the server has counted, one correction brings it near the target. */
async function fittedScoringRequest(
  url: string,
  options: BenchOptions,
  number: () => number,
): Promise<{ load: LoadRequest; inputTokens?: number }> {
  let load = scenarioRequest(options.scenario, scoringBody({ candidates: options.candidates, tokens: options.tokens }), options.apiKey);
  let counted = await probe(url, load, number());
  if (counted.inputTokens !== undefined && Math.abs(counted.inputTokens / options.tokens - 1) > 0.1) {
    load = scenarioRequest(
      options.scenario,
      scoringBody({
        candidates: options.candidates,
        tokens: Math.max(1, Math.round((options.tokens * options.tokens) / counted.inputTokens)),
      }),
      options.apiKey,
    );
    counted = await probe(url, load, number());
  }
  return { load, ...counted };
}

function overheadOf(through: LoadResult, direct: LoadResult): NonNullable<BenchRun['overhead']> {
  const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 1000) / 1000 : Number.NaN);
  const mean = ratio(through.latency_ms.mean, direct.latency_ms.mean);
  return {
    latency_mean_ratio: mean,
    latency_p99_ratio: ratio(through.latency_ms.p99, direct.latency_ms.p99),
    throughput_ratio: ratio(through.requests_per_s, direct.requests_per_s),
    added_latency_percent: Math.round((mean - 1) * 1000) / 10,
  };
}

const refuse = (field: string, message: string) => wnwError('WNW_ERR_INPUT_INVALID', message, { details: { field } });

/** Flag combinations that cannot mean what they say, refused before anything starts. */
function checkOptions(options: BenchOptions): void {
  if (options.serverCpus !== undefined && options.url)
    throw refuse('serverCpus', 'serverCpus pins a server the bench starts itself; a winnower at --url runs where it runs');
  if (options.compareBackend && options.url) {
    if (options.backendUrl) {
      throw refuse(
        'backend-url',
        '--backend-url with --url: the bench compares against a winnower it starts itself, with its scorer pointed at --backend-url, so that it sees the body winnower sends; a winnower at --url scores with a config the bench cannot see, so the two paths would not carry the same request. Leave out --url (run the bench on a host that reaches the backend)',
      );
    }
    throw refuse(
      'compare-backend',
      '--compare-backend starts its own winnower on a fixed-latency backend (or --backend-url), to see what winnower sends it; leave out --url',
    );
  }
  if (options.compareBackend && options.scenario === 'solve')
    throw refuse('compare-backend', '--compare-backend compares scoring requests: use --scenario score or rerank');
  if (options.backendUrl === undefined) {
    const orphan = (['backendKind', 'backendApiKey', 'backendModel'] as const).find((key) => options[key] !== undefined);
    if (orphan)
      throw refuse(
        orphan,
        `--${orphan.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)} describes the backend of --backend-url: add --backend-url`,
      );
    return;
  }
  if (!options.compareBackend)
    throw refuse('backend-url', '--backend-url is the backend --compare-backend measures against: add --compare-backend');
  if (options.backendLatencyMs !== undefined)
    throw refuse(
      'backend-latency',
      "--backend-latency sets the built-in stub backend's latency; with --backend-url the backend's own latency is measured: leave it out",
    );
  if (options.backendKind !== undefined && !BACKEND_KINDS.includes(options.backendKind))
    throw refuse('backend-kind', `--backend-kind: ${JSON.stringify(options.backendKind)} is not one of ${BACKEND_KINDS.join(', ')}`);
  if (!URL.canParse(options.backendUrl) || !/^https?:$/.test(new URL(options.backendUrl).protocol))
    throw refuse('backend-url', `--backend-url: ${JSON.stringify(options.backendUrl)} is not an http(s) URL`);
}

/** The batching settings of a bench run with batching on. */
export const BENCH_BATCHING = { max_batch_size: 16, max_batch_tokens: 262_144, window_ms: 5 } as const;

export async function runBench(options: BenchOptions): Promise<BenchReport> {
  checkOptions(options);
  const closers: Array<() => Promise<void>> = [];
  // One source of request numbers for every request of the run, so no text is sent twice (no prefix or score cache answers a later phase).
  let counter = 0;
  const number = () => (counter += 1);
  try {
    let stub: ScorerStub | undefined;
    let policy: PolicyStub | undefined;
    const batching = options.batching ? BENCH_BATCHING : false;
    const backendLatencyMs = options.backendLatencyMs ?? 50;
    let scorer: Record<string, unknown> = { backend: 'onnx', batching };
    let scorerAt: (url: string) => Record<string, unknown> = () => scorer;
    let scorerName = 'onnx, embedded model';
    if (options.compareBackend && options.backendUrl) {
      const kind = options.backendKind ?? 'vllm';
      const model = options.backendModel ?? (await servedModel(options.backendUrl, options.backendApiKey));
      scorerAt = (url) => ({
        backend: kind,
        model,
        urls: [url],
        retries: 0,
        batching,
        ...(options.backendApiKey ? { api_key: options.backendApiKey } : {}),
      });
      scorer = scorerAt(options.backendUrl);
      scorerName = `${kind} at ${options.backendUrl}, model ${model}`;
    } else if (options.compareBackend) {
      stub = await startScorerStub({ latencyMs: backendLatencyMs });
      closers.push(() => stub!.close());
      scorer = { backend: 'vllm', model: stub.model, urls: [stub.url], retries: 0, batching };
      scorerName = `vllm protocol, fixed ${backendLatencyMs} ms backend (bench stub)`;
    }
    if (options.scenario === 'solve') {
      const script = commandsOf(demoRecordings()['correct-fix']!);
      policy = await startPolicyStub({ latencyMs: options.policyLatencyMs, script: () => script });
      closers.push(() => policy!.close());
    }
    const startServer = async (settings: Record<string, unknown>) => {
      const started = await startSelfServer({
        scorer: settings,
        maxRunningJobs: Math.max(...options.connections),
        ...(options.entry ? { entry: options.entry } : {}),
        ...(options.serverCpus !== undefined ? { cpus: options.serverCpus } : {}),
      });
      closers.push(() => started.close());
      return started;
    };

    let direct: DirectRequest | undefined;
    let captured = '';
    let load: LoadRequest;
    let inputTokens: number | undefined;
    let url: string;
    if (options.backendUrl) {
      // The capture: a winnower whose scorer calls the backend through the recording pass-through, for one request of a known number.
      const recorder = await startRecordingProxy(options.backendUrl);
      closers.push(() => recorder.close());
      const capturing = await startServer(scorerAt(recorder.url));
      ({ load, inputTokens } = await fittedScoringRequest(capturing.url, options, number));
      recorder.clear();
      await probe(capturing.url, load, CAPTURE_NUMBER);
      direct = directRequestOf(recorder.posts(), options.scenario);
      captured = 'recorded from a capture-only winnower through a pass-through; the measured winnower calls the backend directly';
      await capturing.close();
      await recorder.close();
      // The measured winnower; its first request (vLLM's model and feature probes) is made here, not in a measured run.
      url = (await startServer(scorer)).url;
      await probe(url, load, number());
    } else {
      url = options.url ?? (await startServer(scorer)).url;
      if (options.scenario === 'solve') {
        const repo = prepareDemoRepo(join(demoDir(), 'repo'));
        closers.push(async () => rmSync(dirname(repo), { recursive: true, force: true }));
        load = scenarioRequest(
          options.scenario,
          solveBody({ repo, policyUrl: policy!.url, n: options.n, verify: options.verify }),
          options.apiKey,
        );
        await probe(url, load, number());
      } else {
        ({ load, inputTokens } = await fittedScoringRequest(url, options, number));
      }
      if (stub) {
        await probe(url, load, CAPTURE_NUMBER);
        const body = stub.lastClassifyBody();
        direct = directRequestOf(body === undefined ? [] : [{ method: 'POST', path: '/classify', headers: {}, body }], options.scenario);
        captured = 'recorded by the stub backend itself';
      }
    }
    const directUrl = stub ? stub.url : options.backendUrl;

    const runs: BenchRun[] = [];
    for (const connections of options.connections) {
      const amount = options.perConnection !== undefined ? options.perConnection * connections : options.amount;
      const base: Omit<LoadOptions, 'label'> = {
        connections,
        durationS: options.durationS,
        ...(amount === undefined ? {} : { amount }),
        timeoutS: options.timeoutS,
        progress: options.progress,
        nextNumber: number,
      };
      const measure = async (target: string, what: LoadRequest, label: string) => {
        if (options.warmupS > 0)
          await runLoad(target, what, {
            ...base,
            amount: undefined,
            durationS: options.warmupS,
            label: `${label} warm-up`,
            progress: false,
          });
        return runLoad(target, what, { ...base, label });
      };
      const backend = direct ? await measure(directUrl!, direct.load, `backend c=${connections}`) : undefined;
      const winnower = await measure(url, load, `${options.scenario} c=${connections}`);
      runs.push({ connections, winnower, ...(backend ? { backend, overhead: overheadOf(winnower, backend) } : {}) });
    }
    return {
      scenario: options.scenario,
      target: options.url ?? 'self-started',
      server: options.url ? { url: options.url } : { scorer: scorerName, batching: options.batching, score_cache: false },
      request:
        options.scenario === 'solve'
          ? { n: options.n, policy_latency_ms: options.policyLatencyMs, verify: options.verify }
          : {
              candidates: options.candidates,
              trajectory_tokens: options.tokens,
              ...(inputTokens === undefined ? {} : { input_tokens_per_candidate: inputTokens }),
            },
      ...(direct ? { direct: { ...direct.summary, captured } } : {}),
      load: {
        ...(options.perConnection !== undefined
          ? { requests_per_connection: options.perConnection }
          : options.amount !== undefined
            ? { amount: options.amount }
            : { duration_s: options.durationS }),
        warmup_s: options.warmupS,
        timeout_s: options.timeoutS,
      },
      runs,
    };
  } finally {
    for (const close of closers.reverse()) {
      await close().catch((error: unknown) =>
        console.error(`winnower bench: cleanup failed: ${error instanceof Error ? error.message : String(error)}`),
      );
    }
  }
}
