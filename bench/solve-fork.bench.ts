/**
 * What forking after a shared setup buys on `/solve`, and what it costs in diversity (issue 29):
 * the demo task with a setup of ≥ 20 s, N = 8, `fork: {at: "setup"}` against `fork: false` (every
 * rollout, verification and regression sandbox runs the setup itself) in the same run, rounds
 * interleaved. The setup is either CPU work (a sha256 chain in python3, sized on this host to take
 * `--setup-s` alone; it stands for an install or a build, which compete for the cores) or a sleep
 * (a download: N sleeps overlap, so forking saves less). It writes a build output into the
 * workspace, and the bench checks that no patch holds it.
 *
 * Diversity: distinct non-empty patches and resolved candidates of each job, on the bench world
 * (the policy stub: rollout i's seed picks the demo recording i mod 4, 200 ms a turn) and on the
 * demo itself (its replay policy and its own n = 4).
 *
 *   npx tsx bench/solve-fork.bench.ts [--n 8] [--setup-s 20] [--setup-kind cpu|sleep] [--repeats 1] [--no-demo]
 *
 * Prints a markdown report and writes it to bench/results/solve-fork[-sleep].md.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startPolicyStub } from '../src/loadgen/policy-stub.js';
import {
  commandsOf,
  createSolveWorld,
  demoRecordings,
  median,
  root,
  type SolveJobView,
  type SolveWorld,
  seconds,
  solveBody,
} from './solve-world.js';

const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '8' },
    'setup-s': { type: 'string', default: '20' },
    'setup-kind': { type: 'string', default: 'cpu' },
    repeats: { type: 'string', default: '1' },
    latency: { type: 'string', default: '200' },
    'no-demo': { type: 'boolean', default: false },
    /** `first-edit` or a step: the agent-prefix fork against no fork (no setup), policy tokens beside the resolved rate. */
    at: { type: 'string' },
  },
});
const N = Number(args.n);
const SETUP_S = Number(args['setup-s']);
const KIND = args['setup-kind'];
const REPEATS = Number(args.repeats);
const LATENCY_MS = Number(args.latency);
if (KIND !== 'cpu' && KIND !== 'sleep') throw new Error('--setup-kind: cpu or sleep');
const AT = args.at === undefined ? undefined : args.at === 'first-edit' ? 'first-edit' : Number(args.at);
if (AT !== undefined && AT !== 'first-edit' && !(Number.isInteger(AT) && AT > 0)) throw new Error('--at: first-edit or a step number');

/** The file the setup writes: a build output no patch may hold. */
const BUILD_OUTPUT = '.build/digest.txt';

/** sha256 rounds that take `SETUP_S` of CPU here, from a one-second sample run on the host. */
function cpuRounds(): number {
  const sample = 1_000_000;
  const out = execFileSync(
    'python3',
    [
      '-c',
      `import hashlib,time\nt=time.process_time();h=b''\nfor _ in range(${sample}): h=hashlib.sha256(h).digest()\nprint(time.process_time()-t)`,
    ],
    { encoding: 'utf8' },
  );
  return Math.round((sample * SETUP_S) / Number(out.trim()));
}

function setupCommands(): string[] {
  const work =
    KIND === 'cpu'
      ? `python3 -c "import hashlib\nh=b''\nfor _ in range(${cpuRounds()}): h=hashlib.sha256(h).digest()\nprint(h.hex())" > ${BUILD_OUTPUT}`
      : `sleep ${SETUP_S} && echo slept > ${BUILD_OUTPUT}`;
  return ['mkdir -p .build', work];
}

interface Run {
  world: string;
  mode: 'fork' | 'each' | 'prefix' | 'none';
  makespanMs: number;
  job: SolveJobView;
}

const MODES: Array<{ mode: Run['mode']; extra: Record<string, unknown> }> =
  AT === undefined
    ? [
        { mode: 'fork', extra: { fork: { at: 'setup' } } },
        { mode: 'each', extra: { fork: false } },
      ]
    : [
        { mode: 'prefix', extra: { fork: { at: AT } } },
        { mode: 'none', extra: {} },
      ];

const patchesOf = (job: SolveJobView): string[] =>
  (job.candidates as Array<{ patch?: string | null }>).map((candidate) => candidate.patch ?? '').filter((patch) => patch.trim() !== '');

async function main(): Promise<void> {
  const lines: string[] = [];
  const say = (line = ''): void => {
    lines.push(line);
    console.log(line);
  };
  const recordings = demoRecordings();
  const names = Object.keys(recordings);
  const scripts = names.map((name) => commandsOf(recordings[name]!));
  const policy = await startPolicyStub({ script: (seed) => scripts[seed % scripts.length]!, latencyMs: LATENCY_MS });
  const setup = AT === undefined ? setupCommands() : undefined;
  const worlds = [
    { name: 'bench world', n: N, policy: { kind: 'openai', url: policy.url, model: 'bench-stub' } },
    // The demo's replay policy answers whatever the conversation, so /solve refuses it with a prefix fork point.
    ...(args['no-demo'] || AT !== undefined
      ? []
      : [{ name: 'demo', n: 4, policy: { kind: 'replay', recordings: names.map((name) => recordings[name]) } }]),
  ];
  const world: SolveWorld = await createSolveWorld({ scorerCache: false });
  const loadStart = loadavg();
  const runs: Run[] = [];
  try {
    // Warm-up: the first sandbox clones the repository and builds the base snapshot.
    await world.solve(solveBody(world.repo, { n: 1, policy: worlds[0]!.policy }));
    for (let round = 0; round < REPEATS; round += 1) {
      for (const w of worlds) {
        for (const { mode, extra } of MODES) {
          const { job, makespanMs } = await world.solve(
            solveBody(world.repo, { n: w.n, policy: w.policy, ...(setup ? { setup } : {}), ...extra }),
          );
          runs.push({ world: w.name, mode, makespanMs, job });
          console.error(`round ${round + 1}/${REPEATS} ${w.name} ${mode}: ${seconds(makespanMs)}, setup runs ${job.result?.setup?.runs}`);
        }
      }
    }
  } finally {
    await world.close();
    await policy.close();
  }
  const loadEnd = loadavg();

  if (AT !== undefined) return reportPrefix(say, lines, runs, worlds, names, loadStart, loadEnd);
  say(`# /solve with a shared setup: forked vs run in each sandbox — benchmark`);
  say();
  say(
    `Host: ${cpus().length} vCPU (${cpus()[0]?.model ?? 'cpu'}), Linux ${release()}, Node ${process.version}; a shared box (other work ran alongside); load average ${loadStart.map((v) => v.toFixed(2)).join(' ')} at start, ${loadEnd.map((v) => v.toFixed(2)).join(' ')} at end.`,
  );
  say(
    `Command: \`npx tsx bench/solve-fork.bench.ts --n ${N} --setup-s ${SETUP_S} --setup-kind ${KIND} --repeats ${REPEATS}${args['no-demo'] ? ' --no-demo' : ''}\`.`,
  );
  say();
  say(
    `Set-up: the real server (\`POST /solve?wait=true\`), local bubblewrap sandboxes, the bundled ONNX value model, SQLite; the demo task with verification and the regression check on (the defaults). Setup: ${KIND === 'cpu' ? `CPU work, a sha256 chain in python3 sized to ${SETUP_S} s of CPU on this host alone` : `\`sleep ${SETUP_S}\``}, writing \`${BUILD_OUTPUT}\` into the workspace. \`fork\`: \`fork: {at: "setup"}\` (the setup runs once, every sandbox is a fork of its snapshot); \`each\`: \`fork: false\` (every sandbox of the job runs the setup). Bench world: the policy stub (${LATENCY_MS} ms a turn), rollout i's seed picks the demo recording i mod ${names.length} (${names.join(', ')}); demo: the demo's replay policy, n = 4. ${REPEATS} round(s), modes interleaved; medians.`,
  );
  say();
  say(
    '| world | mode | N | makespan | fork / each | setup runs | forks | one setup run | Σ rollout time | saved sandbox time (result.setup) | distinct patches | resolved | patches holding the setup output |',
  );
  say('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  const verdicts: string[] = [];
  for (const w of worlds) {
    const each = median(runs.filter((r) => r.world === w.name && r.mode === 'each').map((r) => r.makespanMs));
    for (const { mode } of MODES) {
      const samples = runs.filter((r) => r.world === w.name && r.mode === mode);
      const makespan = median(samples.map((r) => r.makespanMs));
      const last = samples.at(-1)!.job;
      const result = last.result!;
      const patches = patchesOf(last);
      const distinct = new Set(patches).size;
      const resolved = last.candidates.filter((candidate) => candidate.verify?.resolved).length;
      const holding = patches.filter((patch) => patch.includes(BUILD_OUTPUT)).length;
      const ratio = mode === 'fork' ? `**${(makespan / each).toFixed(2)}×**` : '1.00×';
      say(
        `| ${w.name} | ${mode} | ${w.n} | ${seconds(makespan)} | ${ratio} | ${result.setup?.runs ?? '—'} | ${result.setup?.forks ?? '—'} | ${seconds(result.setup?.setup_ms ?? 0)} | ${seconds(result.compute.rollout_ms)} | ${seconds(result.setup?.saved_sandbox_ms ?? 0)} | ${distinct} of ${patches.length} non-empty | ${resolved} of ${w.n} | ${holding} |`,
      );
      if (mode === 'fork') verdicts.push(`${w.name}: makespan fork / each = ${(makespan / each).toFixed(2)}× at N = ${w.n}`);
    }
  }
  say();
  say(`${verdicts.join('; ')} (issue 29's budget: ≤ 0.4× with a setup of ≥ 20 s at N = 8).`);
  say();
  say(
    "Reading: forked, the setup runs once and every sandbox (the rollouts, the regression check's base runs, then each candidate's verification and regression check) starts from its snapshot; run in each, it runs once per sandbox (`setup runs`) and the CPU-bound setups queue for the cores, so the saving grows with N and with how much of the setup is CPU. A sleep-like setup (a download) overlaps across sandboxes and saves less (`--setup-kind sleep`). Diversity is the same in both modes: only the environment is shared, every rollout starts its own conversation with its own seed, so the distinct patches and the resolved count are those of the policy; the setup output is in no patch, since the post-setup tree is every diff's base.",
  );
  say();
  const report = `${lines.join('\n')}\n`;
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  const file = `solve-fork${KIND === 'sleep' ? '-sleep' : ''}.md`;
  writeFileSync(join(root, 'bench', 'results', file), report);
  console.error(`wrote bench/results/${file}`);
}

/** The agent-prefix report: policy calls and tokens per job, forked at AT against no fork, with diversity and the resolved rate. */
function reportPrefix(
  say: (line?: string) => void,
  lines: string[],
  runs: Run[],
  worlds: Array<{ name: string; n: number }>,
  names: string[],
  loadStart: number[],
  loadEnd: number[],
): void {
  say(`# /solve forked from a shared agent prefix (fork.at ${JSON.stringify(AT)}) vs independent rollouts — benchmark`);
  say();
  say(
    `Host: ${cpus().length} vCPU (${cpus()[0]?.model ?? 'cpu'}), Linux ${release()}, Node ${process.version}; a shared box; load average ${loadStart.map((v) => v.toFixed(2)).join(' ')} at start, ${loadEnd.map((v) => v.toFixed(2)).join(' ')} at end.`,
  );
  say(`Command: \`npx tsx bench/solve-fork.bench.ts --at ${AT} --n ${N} --repeats ${REPEATS}${args['no-demo'] ? ' --no-demo' : ''}\`.`);
  say();
  say(
    `Set-up: as the setup bench, without a setup. \`prefix\`: \`fork: {at: ${JSON.stringify(AT)}}\` (one prefix rollout with seed 0 until its fork point, every rollout going on from a fork of it); \`none\`: N independent rollouts. Bench world: the policy stub (${LATENCY_MS} ms a turn), rollout i's seed picks the demo recording i mod ${names.length} (${names.join(', ')}), and its usage is the stub's (prompt tokens 100 + 50 × turn, 20 completion tokens a turn: a conversation that grows), so the prefix is the seed-0 recording (${names[0]}) up to its first edit. No demo row: the demo's replay policy replays its recording from its first turn whatever the conversation, so \`/solve\` refuses it with a prefix fork point; through \`winnower policy serve\` (which answers by the conversation's turn) the demo's recordings are picked by seed, which is this bench world. ${REPEATS} round(s), modes interleaved; medians.`,
  );
  say();
  say(
    '| world | mode | N | makespan | policy calls | policy tokens | tokens prefix / none | prefix steps | saved tokens (compute) | distinct patches | resolved |',
  );
  say('|---|---|---|---|---|---|---|---|---|---|---|');
  const verdicts: string[] = [];
  for (const w of worlds) {
    const none = median(runs.filter((r) => r.world === w.name && r.mode === 'none').map((r) => r.job.result!.compute.tokens));
    for (const { mode } of MODES) {
      const samples = runs.filter((r) => r.world === w.name && r.mode === mode);
      const last = samples.at(-1)!.job;
      const compute = last.result!.compute as Record<string, number>;
      const tokens = median(samples.map((r) => r.job.result!.compute.tokens));
      const patches = patchesOf(last);
      const resolved = last.candidates.filter((candidate) => candidate.verify?.resolved).length;
      const ratio = mode !== 'prefix' ? '1.00×' : none > 0 ? `**${(tokens / none).toFixed(2)}×**` : '—';
      say(
        `| ${w.name} | ${mode} | ${w.n} | ${seconds(median(samples.map((r) => r.makespanMs)))} | ${compute.policy_calls} | ${tokens} | ${ratio} | ${compute.prefix_steps ?? '—'} | ${compute.fork_saved_tokens ?? '—'} | ${new Set(patches).size} of ${patches.length} non-empty | ${resolved} of ${w.n} |`,
      );
      if (mode === 'prefix') verdicts.push(`${w.name}: policy tokens prefix / none = ${(tokens / none).toFixed(2)}× at N = ${w.n}`);
    }
  }
  say();
  say(`${verdicts.join('; ')} (issue 29's budget: ≤ 0.6× at N = 8 on the bench world, with the resolved rate beside it).`);
  say();
  say(
    "Reading: the prefix is paid once and every continuation starts at its fork point, so the saving is the prefix's share of a rollout's tokens (larger when an agent explores longer before it edits, and more again on a server with prefix caching, which also skips the prefill of the shared messages). The price is diversity: every candidate inherits the prefix's first edit, so candidates differ only in what comes after it; compare the distinct patches and the resolved count with the independent rollouts. Fork at the first edit when the opening moves are exploration every rollout would repeat and the edits are where the policy varies; keep independent rollouts (or fork at `setup` only) when the first edit is the decision.",
  );
  say();
  const report = `${lines.join('\n')}\n`;
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(join(root, 'bench', 'results', 'solve-fork-prefix.md'), report);
  console.error('wrote bench/results/solve-fork-prefix.md');
}

await main();
