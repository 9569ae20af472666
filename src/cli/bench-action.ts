/** What `winnower bench` does once its flags are parsed; loaded only when it runs (bench.ts registers it). */
import { wnwError } from '../errors.js';
import { formatReport } from '../loadgen/report.js';
import { runBench, type BackendKind } from '../loadgen/run-bench.js';
import { SCENARIOS, type ScenarioName } from '../loadgen/scenarios.js';
import type { Command } from 'commander';
import type { BenchFlags } from './bench.js';

export async function runBenchCommand(flags: BenchFlags, command: Command): Promise<void> {
  // A run is measured by one of --duration, --amount, --per-connection: a second one would be ignored.
  const measures = (['duration', 'amount', 'perConnection'] as const).filter((key) => command.getOptionValueSource(key) === 'cli');
  if (measures.length > 1) {
    const names = measures.map((key) => (key === 'perConnection' ? '--per-connection' : `--${key}`));
    throw wnwError('WNW_ERR_INPUT_INVALID', `${names.join(' and ')}: a run is measured by one of them; give one`, {
      details: { field: names[1] },
    });
  }
  if (!(SCENARIOS as string[]).includes(flags.scenario)) {
    throw wnwError('WNW_ERR_INPUT_INVALID', `--scenario: ${JSON.stringify(flags.scenario)} is not one of ${SCENARIOS.join(', ')}`, {
      details: { field: 'scenario', valid: SCENARIOS },
    });
  }
  // The environment's key only goes with a --backend-url, so a key exported for other runs is no flag combination to refuse.
  const backendApiKey = flags.backendApiKey ?? (flags.backendUrl ? process.env.WINNOWER_BENCH_BACKEND_API_KEY : undefined);
  const report = await runBench({
    scenario: flags.scenario as ScenarioName,
    ...(flags.url ? { url: flags.url } : {}),
    ...(flags.apiKey ? { apiKey: flags.apiKey } : {}),
    connections: flags.connections,
    durationS: flags.duration,
    ...(flags.amount === undefined ? {} : { amount: flags.amount }),
    ...(flags.perConnection === undefined ? {} : { perConnection: flags.perConnection }),
    warmupS: flags.warmup,
    timeoutS: flags.timeout,
    candidates: flags.candidates,
    tokens: flags.tokens,
    batching: flags.batching,
    compareBackend: flags.compareBackend ?? false,
    ...(flags.backendLatency === undefined ? {} : { backendLatencyMs: flags.backendLatency }),
    ...(flags.backendUrl === undefined ? {} : { backendUrl: flags.backendUrl }),
    ...(flags.backendKind === undefined ? {} : { backendKind: flags.backendKind as BackendKind }),
    ...(backendApiKey ? { backendApiKey } : {}),
    ...(flags.backendModel === undefined ? {} : { backendModel: flags.backendModel }),
    n: flags.n,
    policyLatencyMs: flags.policyLatency,
    verify: flags.verify ?? false,
    progress: flags.progress,
  });
  process.stdout.write(`${flags.json ? JSON.stringify(report) : formatReport(report)}\n`);
}
