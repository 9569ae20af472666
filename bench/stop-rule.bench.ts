/**
 * Compute saved by the stop rule on the demo task: N = 8 rollouts in waves of 2, the four demo
 * recordings replayed for real (policy `{kind: 'replay'}`), verification on, with the stop rule
 * {min_value: 0, require_resolved: true} ("the first candidate that passes its tests") against no
 * stop rule on the same waves, and against the default single wave of 8. Three orders of the
 * recordings: the correct fix in the first wave, in the last wave only, and nowhere.
 *
 *   npx tsx bench/stop-rule.bench.ts [--repeats 3]
 *
 * Prints a markdown report and writes it to bench/results/stop-rule.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Trajectory } from '../src/types/trajectory.js';
import { createSolveWorld, demoRecordings, median, root, seconds, solveBody, type SolveJobView, type SolveWorld } from './solve-world.js';

const { values: args } = parseArgs({ options: { repeats: { type: 'string', default: '3' } } });
const REPEATS = Number(args.repeats);
const N = 8;
const WAVES = [2, 2, 2, 2];
const STOP_RULE = { min_value: 0, require_resolved: true };

const recorded = demoRecordings();
const rec = (name: string): Trajectory => recorded[name]!;
const [good, wrong, breaks, givesUp] = [rec('correct-fix'), rec('plausible-wrong-fix'), rec('breaks-other-tests'), rec('gives-up')];
const short = (trajectory: Trajectory) => trajectory.source.replace(/^recorded-/, '');

interface Scenario {
  name: string;
  note: string;
  /** Rollout i replays recordings[i mod length]. */
  recordings: Trajectory[];
}

const SCENARIOS: Scenario[] = [
  { name: 'good early', note: 'correct fix at rollouts 0 and 4 (waves 1 and 3)', recordings: [good, wrong, breaks, givesUp] },
  {
    name: 'good late',
    note: 'correct fix only at rollout 7 (wave 4 of 4)',
    recordings: [wrong, breaks, givesUp, wrong, breaks, givesUp, wrong, good],
  },
  { name: 'no good one', note: 'no correct fix among the 8 (wrong, breaks, gives-up round-robin)', recordings: [wrong, breaks, givesUp] },
];

interface Config {
  name: string;
  extra: Record<string, unknown>;
}

const CONFIGS: Config[] = [
  { name: 'waves of 2, no stop rule', extra: { waves: WAVES } },
  { name: 'waves of 2, stop rule', extra: { waves: WAVES, stop_rule: STOP_RULE } },
  { name: 'one wave of 8, no stop rule', extra: {} },
];

interface Run {
  makespanMs: number;
  job: SolveJobView;
}

async function once(world: SolveWorld, scenario: Scenario, config: Config): Promise<Run> {
  const { job, makespanMs } = await world.solve(
    solveBody(world.repo, { n: N, policy: { kind: 'replay', recordings: scenario.recordings }, ...config.extra }),
  );
  return { job, makespanMs };
}

async function main(): Promise<void> {
  const lines: string[] = [];
  const say = (line = ''): void => {
    lines.push(line);
    console.log(line);
  };
  const world = await createSolveWorld();
  const loadStart = loadavg();
  const runs = new Map<string, Run[]>();
  const key = (scenario: Scenario, config: Config) => `${scenario.name}|${config.name}`;
  try {
    await once(world, SCENARIOS[0]!, { name: 'warm-up', extra: { n: 1 } });
    for (let round = 0; round < REPEATS; round += 1) {
      for (const scenario of SCENARIOS) {
        for (const config of CONFIGS) {
          const run = await once(world, scenario, config);
          runs.set(key(scenario, config), [...(runs.get(key(scenario, config)) ?? []), run]);
          const r = run.job.result!;
          console.error(
            `round ${round + 1}/${REPEATS} ${scenario.name} / ${config.name}: ${seconds(run.makespanMs)}, ${r.rollouts.finished} finished, ${r.rollouts.cancelled} cancelled, ${r.rollouts.skipped} skipped, chosen ${r.chosen?.index ?? 'none'}`,
          );
        }
      }
    }
  } finally {
    await world.close();
  }
  const loadEnd = loadavg();

  say('# Stop rule: compute saved on the demo task — benchmark');
  say();
  say(
    `Host: ${cpus().length} vCPU (${cpus()[0]?.model ?? 'cpu'}), Linux ${release()}, Node ${process.version}; a noisy shared box (other work ran alongside); load average ${loadStart.map((v) => v.toFixed(2)).join(' ')} at start, ${loadEnd.map((v) => v.toFixed(2)).join(' ')} at end.`,
  );
  say(`Command: \`npx tsx bench/stop-rule.bench.ts --repeats ${REPEATS}\`.`);
  say();
  say(
    `Set-up: the real server (\`POST /solve?wait=true\` over HTTP), local bubblewrap sandboxes, the bundled ONNX value model, SQLite store; the demo task with verification on (default verify concurrency 4). N = ${N}; policy \`{kind: 'replay', recordings}\` — rollout i replays recording i mod length, its commands re-run for real in a fresh sandbox (no generation latency: a rollout is only sandbox work, so the savings in policy calls would weigh more with a real policy). Stop rule \`${JSON.stringify(STOP_RULE)}\`: stop at the first candidate that passes its tests; it cancels rollouts still running and skips waves not started. Since a wave waits for its candidates' verification, a stop-rule run with waves is sequential by wave. Makespan and sandbox times: medians of ${REPEATS} interleaved rounds; counts from the median run (they were the same in every round unless marked).`,
  );
  say();
  say('Scenarios (recording order):');
  for (const scenario of SCENARIOS) say(`- **${scenario.name}** — ${scenario.note}: [${scenario.recordings.map(short).join(', ')}]`);
  say();
  say(
    '| scenario | schedule | rollouts run (finished / cancelled / skipped) | policy calls | Σ rollout sandbox time (compute.rollout_ms) | Σ verification time | makespan | saved_rollouts | saved_fraction | policy calls vs no stop rule | chosen | stopped early |',
  );
  say('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const scenario of SCENARIOS) {
    const baseline = runs.get(key(scenario, CONFIGS[0]!))!;
    const baselineCalls = median(baseline.map((run) => run.job.result!.compute.policy_calls));
    for (const config of CONFIGS) {
      const samples = runs.get(key(scenario, config))!;
      const makespan = median(samples.map((run) => run.makespanMs));
      const sorted = [...samples].sort((a, b) => a.makespanMs - b.makespanMs);
      const middle = sorted[Math.floor((sorted.length - 1) / 2)]!;
      const result = middle.job.result!;
      const { rollouts, compute } = result;
      const counts = (run: Run) => {
        const r = run.job.result!.rollouts;
        return `${r.finished + r.failed}/${r.cancelled}/${r.skipped}`;
      };
      const varied = new Set(samples.map(counts)).size > 1 ? ` (varied: ${samples.map(counts).join(', ')})` : '';
      const calls = compute.policy_calls;
      const verifyMs = (run: Run) => run.job.candidates.reduce((sum, candidate) => sum + (candidate.verify?.duration_ms ?? 0), 0);
      const chosen = result.chosen
        ? `${result.chosen.index} (${short(scenario.recordings[result.chosen.index % scenario.recordings.length]!)}, ${result.chosen.verify_status ?? '—'})`
        : 'none';
      say(
        `| ${scenario.name} | ${config.name} | ${rollouts.finished + rollouts.failed + rollouts.cancelled} (${rollouts.finished + rollouts.failed} / ${rollouts.cancelled} / ${rollouts.skipped})${varied} | ${calls} | ${seconds(median(samples.map((run) => run.job.result!.compute.rollout_ms)))} | ${seconds(median(samples.map(verifyMs)))} | ${seconds(makespan)} | ${compute.saved_rollouts} | ${(compute.saved_fraction * 100).toFixed(0)}% | ${baselineCalls ? `${(((baselineCalls - calls) / baselineCalls) * 100).toFixed(0)}% fewer` : '—'} | ${chosen} | ${result.stopped_early ? 'yes' : 'no'} |`,
      );
    }
  }
  say();
  say(
    "Reading: `saved_rollouts` counts the rollouts skipped (waves not started) plus those cancelled by the stop rule; `saved_fraction` = saved_rollouts / N. `compute.rollout_ms` sums each rollout's wall time (sandbox create → close), which stretches under CPU contention (8 at once on 2 vCPU), so compare sandbox time between rows with the same schedule. Σ verification time sums the verifier's own durations (patches applied and tests run in a fresh sandbox; its create and close not included). Waves without a stop rule only serialize the work; the stop rule pays for itself when a resolving candidate comes early, and costs the wave barriers (makespan vs one wave of 8) when it comes late or never.",
  );
  say();
  const report = lines.join('\n') + '\n';
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(join(root, 'bench', 'results', 'stop-rule.md'), report);
  console.error('wrote bench/results/stop-rule.md');
}

await main();
