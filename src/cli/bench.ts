/** `winnower bench`: requests/s and tail latency of /score, /rerank or /solve with autocannon (src/loadgen). */
import type { Command } from 'commander';
import { nonNegativeNumber, positiveInt, positiveIntList } from './parse-options.js';
import { BENCH_BACKEND_KINDS as BACKEND_KINDS, BENCH_SCENARIOS as SCENARIOS } from './option-values.js';

export interface BenchFlags {
  scenario: string;
  url?: string;
  apiKey?: string;
  connections: number[];
  duration: number;
  amount?: number;
  perConnection?: number;
  warmup: number;
  timeout: number;
  candidates: number;
  tokens: number;
  batching: boolean;
  compareBackend: boolean;
  backendLatency?: number;
  backendUrl?: string;
  backendKind?: string;
  backendApiKey?: string;
  backendModel?: string;
  n: number;
  policyLatency: number;
  verify: boolean;
  json: boolean;
  progress: boolean;
}

export function registerBenchCommand(program: Command): void {
  program
    .command('bench')
    .description('measure requests/s and latency of /score, /rerank or /solve (autocannon), against --url or a server started here')
    .option('--scenario <name>', `${SCENARIOS.join(' | ')}`, 'rerank')
    .option('--url <url>', 'a running winnower (default: start one here on the embedded defaults)')
    .option('--api-key <key>', 'API key for --url (also WINNOWER_BENCH_API_KEY)', process.env.WINNOWER_BENCH_API_KEY)
    .option('-c, --connections <list>', 'concurrent connections; a list runs each in turn (1,16,64)', positiveIntList, [16])
    .option('-d, --duration <s>', 'seconds per measured run', positiveInt, 10)
    .option('-a, --amount <requests>', 'requests per measured run, instead of a duration', positiveInt)
    .option(
      '--per-connection <requests>',
      'requests per connection per measured run (so 64 connections get as many rounds as 1), instead of a duration',
      positiveInt,
    )
    .option('--warmup <s>', 'seconds of unmeasured load before each run (0: none)', nonNegativeNumber, 3)
    .option('--timeout <s>', 'per-request timeout', positiveInt, 120)
    .option('--candidates <n>', 'score/rerank: candidates per request', positiveInt, 8)
    .option(
      '--tokens <n>',
      'score/rerank: tokens per candidate trajectory (approximate; the server-counted figure is reported)',
      positiveInt,
      4096,
    )
    .option('--no-batching', 'self-started server: score each request on its own (no cross-request batching)')
    .option(
      '--compare-backend',
      'also send the same scoring request straight to the scorer backend (a fixed-latency stub winnower scores with, or --backend-url) and print the overhead ratio',
    )
    .option('--backend-latency <ms>', 'latency of the stub backend (default 50)', nonNegativeNumber)
    .option(
      '--backend-url <url>',
      'with --compare-backend: your running vLLM or SGLang server; winnower is started here with its scorer pointed at it',
    )
    .option('--backend-kind <kind>', `the --backend-url server: ${BACKEND_KINDS.join(' | ')} (default vllm)`)
    .option('--backend-api-key <key>', 'API key of --backend-url (also WINNOWER_BENCH_BACKEND_API_KEY)')
    .option('--backend-model <name>', 'model name --backend-url serves (default: the first its /v1/models lists)')
    .option('-n, --n <rollouts>', 'solve: rollouts per job', positiveInt, 2)
    .option('--policy-latency <ms>', 'solve: latency of the policy stub per turn', nonNegativeNumber, 200)
    .option('--verify', 'solve: run the tests of each candidate too')
    .option('--json', 'print the report as one JSON object')
    .option('--no-progress', 'no progress line on stderr')
    .action(async (flags: BenchFlags, command: Command) => (await import('./bench-action.js')).runBenchCommand(flags, command));
}
