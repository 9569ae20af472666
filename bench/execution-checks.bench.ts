/**
 * What the execution checks cost on the demo task (issue 20): N = 4 rollouts (the four demo
 * recordings replayed for real), scoring on, against the same job with no test list but the
 * regression check and 3 reproduction tests (the recorded test writers of examples/demo), in
 * alternating order on the same server. Budget: the checks add at most 2x the rollouts' wall time.
 * Per candidate: its regression run and its matrix cells, in sandbox-seconds.
 *
 *   npx tsx bench/execution-checks.bench.ts [--repeats 3]
 *
 * Prints a markdown report and writes it to bench/results/execution-checks.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { demoDir } from '../src/cli/demo-task.js';
import type { ChecksEvidence } from '../src/types/checks.js';
import { createSolveWorld, demoRecordings, demoTask, mean, median, root, seconds, type SolveWorld } from './solve-world.js';

const { values: args } = parseArgs({ options: { repeats: { type: 'string', default: '3' } } });
const REPEATS = Number(args.repeats);
const N = 4;
const recordings = Object.values(demoRecordings());
const writers = Object.values(demoRecordings(join(demoDir(), 'test-writers')));

function body(repo: string, checks: boolean): Record<string, unknown> {
  const task = demoTask();
  return {
    instance_id: task.instance_id,
    issue: task.problem_statement,
    repo: { path: repo },
    n: N,
    policy: { kind: 'replay', recordings },
    agent: { config: 'default', time_limit_s: 300, command_timeout_s: 60 },
    verify: checks
      ? { enabled: true, reproduction: { n: 3, policy: { kind: 'replay', recordings: writers }, budget_s: 300, timeout_s: 120 } }
      : { enabled: false },
  };
}

interface Run {
  makespanMs: number;
  /** From job-start to the last rollout-finish. */
  rolloutsMs: number;
  checks?: ChecksEvidence;
  chosen: string | undefined;
}

async function once(world: SolveWorld, checks: boolean): Promise<Run> {
  const { job, makespanMs, events, startedAt } = await world.solve(body(world.repo, checks));
  const lastRollout = Math.max(...events.filter((event) => event.type === 'rollout-finish').map((event) => event.at));
  const chosen = job.result?.chosen ? recordings[job.result.chosen.index % recordings.length]!.source : undefined;
  return { makespanMs, rolloutsMs: lastRollout - startedAt, ...(checks ? { checks: job.result!.checks } : {}), chosen };
}

async function main(): Promise<void> {
  const world = await createSolveWorld();
  const plain: Run[] = [];
  const checked: Run[] = [];
  const loadStart = loadavg();
  try {
    // One warm-up of each (snapshot, model load), not counted.
    await once(world, false);
    await once(world, true);
    for (let repeat = 0; repeat < REPEATS; repeat += 1) {
      // Alternating order: drift on a shared machine hits both alike.
      if (repeat % 2 === 0) {
        plain.push(await once(world, false));
        checked.push(await once(world, true));
      } else {
        checked.push(await once(world, true));
        plain.push(await once(world, false));
      }
    }
  } finally {
    await world.close();
  }
  const loadEnd = loadavg();
  const lines: string[] = [];
  const say = (line = '') => {
    lines.push(line);
    console.log(line);
  };
  const rollouts = median(plain.map((run) => run.makespanMs));
  const withChecks = median(checked.map((run) => run.makespanMs));
  const added = withChecks - rollouts;
  say('# Execution checks on the demo task (regression check + 3 reproduction tests, N = 4)');
  say();
  say(`Command: \`npx tsx bench/execution-checks.bench.ts --repeats ${REPEATS}\``);
  say(
    `Host: ${cpus().length} vCPU (${cpus()[0]?.model ?? 'cpu'}), Linux ${release()}, Node ${process.version}; a shared box (other work ran alongside); load average ${loadStart.map((v) => v.toFixed(2)).join(' ')} at start, ${loadEnd.map((v) => v.toFixed(2)).join(' ')} at end.`,
  );
  say();
  say(
    'Both jobs: the four demo recordings replayed for real in local sandboxes, ONNX value model on. "rollouts alone": `verify.enabled: false`. "with checks": no test list; the regression check (suite found by detection, base twice) and 3 recorded test writers (`examples/demo/test-writers`), every candidate × valid test in its own sandbox.',
  );
  say();
  say('| job | makespan runs | median | chosen |');
  say('|---|---|---|---|');
  say(
    `| rollouts alone | ${plain.map((run) => seconds(run.makespanMs, 1)).join(', ')} | ${seconds(rollouts)} | ${plain.map((run) => run.chosen).join(', ')} |`,
  );
  say(
    `| with checks | ${checked.map((run) => seconds(run.makespanMs, 1)).join(', ')} | ${seconds(withChecks)} | ${checked.map((run) => run.chosen).join(', ')} |`,
  );
  say();
  say(
    `Added wall time: ${seconds(added)} = **${(added / rollouts).toFixed(2)}×** the rollouts' wall time (budget: ≤ 2×); with checks / alone = ${(withChecks / rollouts).toFixed(2)}.`,
  );
  say(
    `Rollout phase inside the checked job (job start to last rollout-finish, median): ${seconds(median(checked.map((run) => run.rolloutsMs)))} vs ${seconds(median(plain.map((run) => run.rolloutsMs)))} alone (the base runs and test writers share the CPUs with the rollouts).`,
  );
  say();
  const evidence = checked.map((run) => run.checks!);
  const baseMs = mean(evidence.map((checks) => checks.regression?.base?.duration_ms ?? 0));
  const perCandidate = (index: number) => {
    const regression = mean(evidence.map((checks) => checks.regression?.candidates.find((c) => c.index === index)?.duration_ms ?? 0));
    const cells = mean(
      evidence.map((checks) =>
        (checks.reproduction?.matrix ?? []).filter((cell) => cell.index === index).reduce((sum, cell) => sum + cell.duration_ms, 0),
      ),
    );
    return { regression, cells };
  };
  say('Cost per candidate (sandbox-seconds, mean over the checked runs; a candidate with no patch is not checked):');
  say();
  say('| candidate | recording | regression run | matrix cells (2 valid tests) | total |');
  say('|---|---|---|---|---|');
  for (let index = 0; index < N; index += 1) {
    const { regression, cells } = perCandidate(index);
    say(
      `| ${index} | ${recordings[index % recordings.length]!.source.replace(/^recorded-/, '')} | ${seconds(regression, 1)} | ${seconds(cells, 1)} | ${seconds(regression + cells, 1)} |`,
    );
  }
  const writerMs = mean(evidence.map((checks) => (checks.reproduction?.tests ?? []).reduce((sum, test) => sum + test.sandbox_ms, 0)));
  say();
  say(
    `Shared by the job: the base runs ${seconds(baseMs, 1)} (two runs), the 3 test writers with their validation on base ${seconds(writerMs, 1)}; all checks: ${seconds(mean(evidence.map((checks) => checks.cost.sandbox_ms)), 1)} sandbox-seconds per job; policy tokens ${mean(evidence.map((checks) => checks.cost.policy_tokens))} (replayed writers: no tokens; a real policy's writers cost what ${3} short rollouts cost).`,
  );
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(join(root, 'bench', 'results', 'execution-checks.md'), `${lines.join('\n')}\n`);
}

await main();
