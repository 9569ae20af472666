/**
 * Execution-backed selection on real-shaped repositories (issue 33, item 7): the fixture world of
 * real-repos-world.ts (Django-, SymPy- and src-layout pytest-shaped repositories, one instance
 * each, pools of the kinds real agents produce) run through `winnower rerank` itself, as a user
 * runs it (a child process per configuration): scoring alone (`robust`, `value`), given-tests
 * verification (`--verify --repos`), and the checks a user without tests has (`--verify
 * --no-given-tests`). The trivial selectors (random non-empty, majority, shortest, longest) and
 * "regression alone" (the check's verdict, ties at random) are read off the same candidates with
 * the evaluation table of `winnower train` (src/train/evaluate.ts: selected@1, headroom closed,
 * 95% bootstrap intervals over instances). The tests from the pool (`verify.pool_tests`) run in
 * the `--no-given-tests` configuration; one without them isolates the regression check.
 *
 *   npx tsx bench/real-repos.bench.ts [--quick] [--seed 1] [--instances 48] [--bootstrap 1000] [--keep] [--losses] [--out FILE] [--only robust,value,both]
 *
 * Prints a markdown report and writes it to bench/results/real-repos.md, or to --out (--quick
 * writes nothing). --losses prints, to stderr, every instance a checking run lost with each
 * candidate's checks evidence (real-repos-losses.ts); the report always counts the losses by cause.
 * --only runs just the named configurations (CONFIGS' names), as for the held-out seeds. --from DIR
 * runs nothing: it reads the runs a --keep run left in DIR (same --seed and --instances) and
 * reports them again (wall times are then unknown).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { prepare } from '../src/select/prepare.js';
import { type EvalPool, evaluateScope, type ScopeTable, TRIVIAL_SELECTORS } from '../src/train/evaluate.js';
import { Trajectory } from '../src/types/trajectory.js';
import { lossesOf, lossReport, poolKey } from './real-repos-losses.js';
import { buildWorld, MIX, type World, type WorldCandidate } from './real-repos-world.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    seed: { type: 'string', default: '1' },
    instances: { type: 'string' },
    bootstrap: { type: 'string', default: '1000' },
    keep: { type: 'boolean', default: false },
    losses: { type: 'boolean', default: false },
    out: { type: 'string' },
    only: { type: 'string' },
    from: { type: 'string' },
  },
});
const seed = Number(args.seed);
const instanceCount = Number(args.instances ?? (args.quick ? 6 : 48));
const bootstrap = Number(args.bootstrap);

interface ScoreLine {
  instance_id: string;
  source: string;
  chosen: boolean;
  score?: { value: number } | null;
  verify?: {
    status: string;
    duration_ms: number;
    procedure_note?: string;
    fail_to_pass: { failed: number; missing: number };
    pass_to_pass: { failed: number; missing: number };
  } | null;
  checks?: {
    regressions: number | null;
    pool?: { score: number; passed: number; total: number; own_passed: number; own_total: number; failed_weight?: number };
  } | null;
  tamper?: Array<{ kind: string }>;
}

interface Run {
  name: string;
  flags: string[];
  wallMs: number;
  stdout: string;
  scores: ScoreLine[];
  /** Summed sandbox time per instance, from the checks file (0 without --verify). */
  sandboxMs: number;
  /** The checks file's lines: where that time went. */
  evidence: Evidence[];
}

/** What a line of `<out>.checks.jsonl` holds that the cost split reads. */
interface Evidence {
  sandbox_ms: number;
  base: { duration_ms: number } | null;
  checks: {
    regression: { base: { duration_ms: number } | null; candidates: Array<{ duration_ms: number; sandbox_ms?: number }> } | null;
    pool_tests?: { tests: Array<{ valid: boolean; sandbox_ms: number }>; sandbox_ms: Array<{ sandbox_ms: number }>; error?: string } | null;
  } | null;
}

const jsonl = (rows: unknown[]) => `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`;
const readJsonl = <T>(file: string): T[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as T)
    : [];

/** `winnower rerank` as a user runs it: a child process on the working tree. */
function rerank(dir: string, name: string, files: Record<string, string>, flags: string[]): Promise<Run> {
  const out = join(dir, name, 'predictions.jsonl');
  mkdirSync(join(dir, name), { recursive: true });
  const argv = [
    '--import',
    'tsx',
    join(root, 'src/cli/main.ts'),
    'rerank',
    '--candidates',
    files.candidates!,
    '--tasks',
    files.tasks!,
    '--labels',
    files.labels!,
    '--out',
    out,
    '--no-progress',
    '--concurrency',
    '2',
    ...flags,
  ];
  const started = Date.now();
  return new Promise((resolve, reject) => {
    execFile(process.execPath, argv, { cwd: root, maxBuffer: 64 * 1024 * 1024, timeout: 3_600_000 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`winnower rerank ${flags.join(' ')} failed: ${stderr.slice(-2000)}`));
        return;
      }
      const checks = readJsonl<Evidence>(join(dir, name, 'predictions.checks.jsonl'));
      resolve({
        name,
        flags,
        wallMs: Date.now() - started,
        stdout,
        scores: readJsonl<ScoreLine>(join(dir, name, 'predictions.scores.jsonl')),
        sandboxMs: checks.reduce((sum, line) => sum + line.sandbox_ms, 0),
        evidence: checks,
      });
    });
  });
}

/** A run a --keep run left in `dir`, or undefined when it did not finish there. */
function readKept(dir: string, config: { name: string; flags: string[] | null }): Run | undefined {
  const scores = readJsonl<ScoreLine>(join(dir, config.name, 'predictions.scores.jsonl'));
  if (!existsSync(join(dir, config.name, 'predictions.jsonl')) || scores.length === 0) return undefined;
  const checks = readJsonl<Evidence>(join(dir, config.name, 'predictions.checks.jsonl'));
  return {
    name: config.name,
    flags: config.flags ?? [],
    wallMs: 0,
    stdout: '',
    scores,
    sandboxMs: checks.reduce((sum, line) => sum + line.sandbox_ms, 0),
    evidence: checks,
  };
}

/** One `winnower rerank` configuration, a row of the table; `flags: null` is a row whose check is not on main yet. */
interface Config {
  name: string;
  label: string;
  flags: string[] | null;
  /** Runs code (`--verify`): its rows sit below the scoring-only ones, with their cost. */
  execution: boolean;
}

/**
 * The rows, each through the product. The tests from the pool are on by default with --verify;
 * `--no-regression` runs them without the regression check; "pool tests alone" (ties at random)
 * is read off the run with both.
 */
const CONFIGS = (verify: string[]): Config[] => [
  { name: 'robust', label: 'robust (scoring alone, the default)', flags: ['--strategy', 'robust'], execution: false },
  { name: 'value', label: 'value model alone', flags: ['--strategy', 'value'], execution: false },
  // Every instance has given tests and no --checks: the regression check does not run, so its budget is refused.
  { name: 'given', label: 'given tests (`--verify`, hybrid)', flags: withoutFlag(verify, '--regression-budget'), execution: true },
  {
    name: 'no-tests',
    label: 'regression + tamper + value model (`--verify --no-given-tests --no-pool-tests`, hybrid)',
    flags: [...verify, '--no-given-tests', '--no-pool-tests'],
    execution: true,
  },
  {
    name: 'both',
    label: 'regression + pool tests + tamper + value model (`--verify --no-given-tests`, hybrid)',
    flags: [...verify, '--no-given-tests'],
    execution: true,
  },
  {
    name: 'pool-tests',
    label: 'pool tests + tamper + value model, no regression check (`--verify --no-given-tests --no-regression`, hybrid)',
    // --regression-budget shapes only the regression check, so it is refused beside --no-regression.
    flags: [...withoutFlag(verify, '--regression-budget'), '--no-given-tests', '--no-regression'],
    execution: true,
  },
];

/** `flags` without `name` and the value after it. */
function withoutFlag(flags: string[], name: string): string[] {
  const at = flags.indexOf(name);
  return at < 0 ? flags : [...flags.slice(0, at), ...flags.slice(at + 2)];
}

/** A check's own verdict read off a run's scores (ties at random): a candidate's value, higher better, null when not checked. */
interface Alone {
  label: string;
  run: string;
  value: (line: ScoreLine | undefined) => number | null;
}

const clean = (line: ScoreLine | undefined): number | null =>
  line?.checks?.regressions === null || line?.checks?.regressions === undefined ? null : line.checks.regressions === 0 ? 1 : 0;

const ALONE: Alone[] = [
  { label: 'regression alone (no test list; ties at random)', run: 'no-tests', value: clean },
  // Minus the weight of the others' valid pool tests a candidate fails, as selection ranks (src/select/checks.ts); null: no valid pool test ran against it.
  { label: 'pool tests alone (ties at random)', run: 'both', value: (line) => (line?.checks?.pool ? poolKey(line) : null) },
  {
    label: 'regression, then pool tests (ties at random)',
    run: 'both',
    value: (line) => {
      const ok = clean(line);
      return ok === null ? null : ok * 1e6 + poolKey(line);
    },
  },
];

const key = (instance: string, source: string) => `${instance}\u0000${source}`;

/** The pools as the evaluation table reads them: labels and patch shape from the product's own preparation. */
function evalPools(world: World, runs: Run[], alone: Alone[]): EvalPool[] {
  const byRun = runs.map((run) => ({ run, lines: new Map(run.scores.map((line) => [key(line.instance_id, line.source), line])) }));
  return world.instances.map((instance) => {
    const members = world.candidates.filter((c) => c.instance_id === instance.instance_id);
    const prepared = prepare(
      members.map((c) => ({
        trajectory: Trajectory.parse({ id: c.source, instance_id: c.instance_id, source: c.source, patch: c.patch }),
      })),
      instance.instance_id,
    );
    const chosen: Record<string, string | null> = {};
    for (const { run, lines } of byRun)
      chosen[run.name] = members.find((c) => lines.get(key(c.instance_id, c.source))?.chosen)?.source ?? null;
    const values: Record<string, Array<number | null>> = {};
    for (const entry of alone) {
      const lines = byRun.find((r) => r.run.name === entry.run)!.lines;
      values[entry.label] = members.map((c) => entry.value(lines.get(key(c.instance_id, c.source))));
    }
    return {
      pool: instance.instance_id,
      benchmark: instance.shape,
      candidates: prepared.candidates.map((p, i) => ({
        id: p.id,
        resolved: members[i]!.resolved,
        usable: p.usable,
        changedLines: p.changedLines,
        clusterKey: p.normalized?.key ?? null,
      })),
      values,
      chosen,
    };
  });
}

const pct = (value: number | null) => (value === null ? '–' : `${(value * 100).toFixed(0)}%`);
const interval = (i: { value: number | null; low: number | null; high: number | null }) =>
  i.value === null ? '–' : `${pct(i.value)} [${pct(i.low)}, ${pct(i.high)}]`;

/** Why given-tests verification and the constructed label differ on a candidate. */
function explain(c: WorldCandidate, line: ScoreLine): string {
  const v = line.verify;
  if (!v) return 'not graded (the instance could not run)';
  const parts = [
    `verdict ${v.status}`,
    `F2P failed ${v.fail_to_pass.failed}, missing ${v.fail_to_pass.missing}`,
    `P2P failed ${v.pass_to_pass.failed}, missing ${v.pass_to_pass.missing}`,
  ];
  if (v.procedure_note) parts.push(v.procedure_note);
  return `${c.kind} (own test: ${c.test}): ${parts.join('; ')}`;
}

async function main(): Promise<void> {
  const loadStart = loadavg();
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'wnw-real-repos-'));
  const world = buildWorld({ root: join(dir, 'world'), seed, instances: instanceCount });
  const files = { candidates: join(dir, 'candidates.jsonl'), tasks: join(dir, 'tasks.jsonl'), labels: join(dir, 'labels.jsonl') };
  writeFileSync(files.tasks, jsonl(world.instances.map((instance) => instance.task)));
  writeFileSync(
    files.candidates,
    jsonl(world.candidates.map((c) => ({ instance_id: c.instance_id, model_name_or_path: c.source, model_patch: c.patch }))),
  );
  writeFileSync(files.labels, jsonl(world.candidates.map((c) => ({ instance_id: c.instance_id, source: c.source, resolved: c.resolved }))));
  const verify = ['--verify', '--repos', world.reposDir, '--sandboxes', '2', '--verify-timeout', '120', '--regression-budget', '120'];
  const only = args.only?.split(',');
  const configs = CONFIGS(verify).filter((config) => !only || only.includes(config.name));
  // One at a time: the machine is small, and the sandbox-seconds of one run are not inflated by another's.
  const runs: Run[] = [];
  for (const config of configs) {
    if (!config.flags) continue;
    if (args.from) {
      const kept = readKept(args.from, config);
      if (kept) runs.push(kept);
      continue;
    }
    console.error(`real-repos: winnower rerank ${config.flags.join(' ')}`);
    runs.push(await rerank(dir, config.name, files, config.flags));
  }
  const ran = (name: string) => runs.find((r) => r.name === name);
  const alone = ALONE.filter((entry) => ran(entry.run));
  const pools = evalPools(world, runs, alone);
  const rename: Record<string, string> = {
    random: 'random non-empty',
    ...Object.fromEntries(configs.map((config) => [config.name, config.label])),
    ...Object.fromEntries(alone.map((entry) => [entry.label, entry.label])),
  };
  const selectors = [
    ...TRIVIAL_SELECTORS,
    ...configs.filter((config) => !config.execution && config.flags).map((config) => config.name),
    ...configs
      .filter((config) => config.execution && config.flags)
      .flatMap((config) => [...alone.filter((entry) => entry.run === config.name).map((entry) => entry.label), config.name]),
  ];
  const pending = [
    ...ALONE.filter((entry) => !ran(entry.run)).map((entry) => entry.label),
    ...configs.filter((config) => !config.flags).map((config) => config.label),
  ];
  const options = { selectors, probabilistic: [], bootstrap, seed: 1 };
  const mixed = pools.filter((pool) => pool.candidates.some((c) => c.resolved) && pool.candidates.some((c) => !c.resolved));
  const tables: ScopeTable[] = [evaluateScope('all instances', pools, options), evaluateScope('mixed-label instances', mixed, options)];
  const perCandidate = (r: Run) => (r.sandboxMs / 1000 / world.candidates.length).toFixed(2);
  const costOf: Record<string, string> = {
    ...Object.fromEntries(runs.map((r) => [r.name, perCandidate(r)])),
    ...Object.fromEntries(alone.map((entry) => [entry.label, perCandidate(ran(entry.run)!)])),
  };
  const run = (name: string) => ran(name)!;

  const lines: string[] = [];
  const say = (line = '') => lines.push(line);
  const loadEnd = loadavg();
  say('# Execution-backed selection on real-shaped repositories');
  say();
  say(`Command: \`${['npx tsx bench/real-repos.bench.ts', ...process.argv.slice(2)].join(' ')}\``);
  say(
    `Host: ${cpus().length} vCPU (${cpus()[0]?.model ?? 'cpu'}), Linux ${release()}, Node ${process.version}; a shared machine (other work ran alongside); load average ${loadStart.map((v) => v.toFixed(2)).join(' ')} at start, ${loadEnd.map((v) => v.toFixed(2)).join(' ')} at end; ${((Date.now() - started) / 1000).toFixed(0)} s wall in all.`,
  );
  say();
  const shapes = ['django', 'sympy', 'pytest']
    .map((shape) => `${world.instances.filter((i) => i.shape === shape).length} ${shape}`)
    .join(', ');
  say(
    `The world (bench/real-repos-world.ts, seed ${seed}): ${world.instances.length} instances (${shapes}-shaped; Django's \`tests/runtests.py\`, SymPy's \`bin/test\`, a src-layout pytest project, each run by its built-in recipe), ${world.candidates.length} candidates, ${mixed.length} mixed-label instances, ${pools.filter((p) => p.candidates.every((c) => !c.resolved)).length} with no resolved candidate, ${pools.filter((p) => p.candidates.every((c) => c.resolved)).length} with all resolved.`,
  );
  say();
  say('## Selection');
  say();
  say(
    "selected@1 and headroom closed ((selected@1 − mean@1) / (pass@N − mean@1)), 95% bootstrap intervals over instances; trivial selectors by expectation over their ties. Sandbox-seconds per candidate: the run's summed sandbox time (base runs included) over its candidates.",
  );
  for (const table of tables) {
    say();
    say(
      `### ${table.scope} (${table.pools} instances, ${table.candidates} candidates; mean@1 ${pct(table.mean_at_1)}, pass@N ${pct(table.pass_at_n)})`,
    );
    say();
    say('| selector | selected@1 | headroom closed | sandbox-s / candidate |');
    say('|---|---|---|---|');
    for (const row of table.rows)
      say(
        `| ${rename[row.selector] ?? row.selector} | ${interval(row.selected_at_1)} | ${interval(row.headroom_closed)} | ${costOf[row.selector] ?? '0.00'} |`,
      );
    for (const label of pending) say(`| ${label} | not run | – | – |`);
  }
  say();
  say('Where the sandbox time went (sandbox-seconds, mean per instance or per candidate run):');
  say();
  say('| check | base run(s) per instance | per candidate run | all, per candidate |');
  say('|---|---|---|---|');
  const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length / 1000 : 0);
  const givenRun = ran('given');
  if (givenRun) {
    const bases = givenRun.evidence.flatMap((line) => (line.base ? [line.base.duration_ms] : []));
    const each = givenRun.scores.flatMap((line) => (line.verify ? [line.verify.duration_ms] : []));
    say(`| given tests (one base run) | ${mean(bases).toFixed(2)} | ${mean(each).toFixed(2)} | ${perCandidate(givenRun)} |`);
  }
  const regressionRun = ran('no-tests');
  if (regressionRun) {
    const regressions = regressionRun.evidence.flatMap((line) => (line.checks?.regression ? [line.checks.regression] : []));
    const bases = regressions.flatMap((r) => (r.base ? [r.base.duration_ms] : []));
    // A candidate's sandbox time where recorded; its wall time (waits included) in older evidence.
    const each = regressions.flatMap((r) => r.candidates.map((c) => c.sandbox_ms ?? c.duration_ms));
    say(
      `| regression check (two base runs, flaky tests found by their difference) | ${mean(bases).toFixed(2)} | ${mean(each).toFixed(2)} | ${perCandidate(regressionRun)} |`,
    );
  }
  const bothRun = ran('both');
  if (bothRun) {
    const pools = bothRun.evidence.flatMap((line) => (line.checks?.pool_tests ? [line.checks.pool_tests] : []));
    const bases = pools.map((p) => p.tests.reduce((sum, t) => sum + t.sandbox_ms, 0));
    const rows = pools.flatMap((p) => p.sandbox_ms.map((row) => row.sandbox_ms));
    const tests = pools.flatMap((p) => p.tests);
    say(
      `| pool tests (${tests.length} extracted, ${tests.filter((t) => t.valid).length} valid; base runs of the written tests, then each candidate's row of the matrix) | ${mean(bases).toFixed(2)} | ${mean(rows).toFixed(2)} | ${((bothRun.sandboxMs - (regressionRun?.sandboxMs ?? 0)) / 1000 / world.candidates.length).toFixed(2)} (the run with both, less the regression-only run) |`,
    );
  }
  say('| tamper flags (the diff is read, nothing runs) | 0 | 0 | 0 |');
  say();
  say(
    `Wall time per run: ${runs.map((r) => `${r.name} ${(r.wallMs / 1000).toFixed(0)} s`).join(', ')} (the verifying runs with \`--sandboxes 2 --concurrency 2\`).`,
  );

  // Agreement of given-tests verification with the labels, per candidate.
  if (ran('given')) {
    const given = new Map(run('given').scores.map((line) => [key(line.instance_id, line.source), line]));
    const graded = world.candidates.filter((c) => given.get(key(c.instance_id, c.source))?.verify);
    const disagree = graded.filter((c) => (given.get(key(c.instance_id, c.source))!.verify!.status === 'resolved') !== c.resolved);
    say();
    say('## Given-tests verification against the labels');
    say();
    say(
      `Verdicts equal the constructed label on ${graded.length - disagree.length}/${graded.length} graded candidates (${pct(graded.length ? (graded.length - disagree.length) / graded.length : null)}); ${world.candidates.length - graded.length} not graded. The product's own line: ${
        run('given')
          .stdout.split('\n')
          .find((line) => line.includes('agrees with the labels')) ?? '(none)'
      }`,
    );
    if (disagree.length) {
      say();
      say('| instance | candidate | label | why |');
      say('|---|---|---|---|');
      for (const c of disagree)
        say(
          `| ${c.instance_id} | ${c.source} | ${c.resolved ? 'resolved' : 'unresolved'} | ${explain(c, given.get(key(c.instance_id, c.source))!)} |`,
        );
    }
  }

  // What the regression check and the tamper flags saw, per kind.
  const noTests = new Map((ran('no-tests') ?? ran('both'))!.scores.map((line) => [key(line.instance_id, line.source), line]));
  const kinds = [...new Set(world.candidates.map((c) => c.kind))].sort();
  say();
  say('## What the checks without a test list saw, by candidate kind');
  say();
  say('| kind | candidates | resolved | regression run | ≥ 1 regression | tamper-flagged |');
  say('|---|---|---|---|---|---|');
  for (const kind of kinds) {
    const of = world.candidates.filter((c) => c.kind === kind);
    const lineOf = (c: WorldCandidate) => noTests.get(key(c.instance_id, c.source));
    const ran = of.filter((c) => (lineOf(c)?.checks?.regressions ?? null) !== null);
    say(
      `| ${kind} | ${of.length} | ${of.filter((c) => c.resolved).length} | ${ran.length} | ${ran.filter((c) => (lineOf(c)!.checks!.regressions ?? 0) > 0).length} | ${of.filter((c) => (lineOf(c)?.tamper?.length ?? 0) > 0).length} |`,
    );
  }

  say();
  say('## Where the checking runs lose');
  say();
  say(
    'Instances with a resolved candidate where the run chose an unresolved one, by cause (bench/real-repos-losses.ts; `--losses` prints each with its candidates\' evidence): "tie on the checks" when the chosen candidate equals a resolved one on every check and the tie-break chose, "pool score ranks it higher" when it passes more of the others\' tests than every clean resolved one.',
  );
  for (const r of runs.filter((r) => ['no-tests', 'both', 'pool-tests'].includes(r.name))) {
    const losses = lossesOf(world.instances, world.candidates, r.scores);
    say();
    for (const line of lossReport(r.name, losses, false)) say(line);
    if (args.losses) console.error(lossReport(r.name, losses, true).join('\n'));
  }
  say();
  say('## The mix, and where it comes from');
  say();
  const nonEmpty = world.candidates.filter((c) => c.kind !== 'empty');
  say(
    `Pool sizes ${MIX.poolSize[0]}–${MIX.poolSize[1]}, uniform. Pool outcome drawn as none resolved ${pct(MIX.pools.none)}, all resolved ${pct(MIX.pools.all)}, mixed ${pct(MIX.pools.mixed)}: the shares among the pools of ≥ 4 candidates in ../shared/data/train (measured: ${trainShares()}). In mixed pools each candidate is resolved with probability ${MIX.mixedResolved} (at least one of each). Empty patches ${pct(MIX.empty)} of unresolved candidates (the train data has 0.9% empty rows). Candidates that add or change a test: ${pct(MIX.addsTest)} of non-empty ones, issue 33's figure for real multi-agent pools; here ${pct(nonEmpty.filter((c) => c.test !== 'none').length / (nonEmpty.length || 1))}. Of the tests a correct fix writes, ${pct(MIX.discriminatingTest)} assert the case the plausible wrong fix gets wrong; a wrong fix's own test asserts the case it handles (the right fix passes it too). Resolved candidates with a large unrelated change (a 150–300 line reproduction script, a rewritten module header): ${pct(MIX.hugeResolved)}. Unresolved non-empty kinds: plausible wrong fix ${pct(MIX.wrongKinds.wrong)}, right fix that breaks a sibling's test ${pct(MIX.wrongKinds.breaks)}, the same with the sibling's test deleted or skipped (tampering) ${pct(MIX.wrongKinds.tamper)}, wrong fix with a large unrelated change ${pct(MIX.wrongKinds.huge)}: no measured source for this split, so it is even-handed and stated rather than tuned.`,
  );
  say();
  say('Kinds drawn: ' + kinds.map((kind) => `${kind} ${world.candidates.filter((c) => c.kind === kind).length}`).join(', ') + '.');
  say();
  say('## ../shared/data/train');
  say();
  say(
    "Not measured there: no pool's repository can be rebuilt from its candidates' patches. A unified diff carries three lines of context around each hunk, so the patches of a pool together cover a few dozen lines of files that are hundreds to thousands of lines long; the rest of each touched file, every untouched module the tests import, the test files, and the runner are absent, and `base_commit` names commits of repositories this machine cannot fetch. A repository assembled from the hunks would not import, so any figure from it would measure the reconstruction, not the checks. The train rows stay what they are used for in bench/results/train-sources.md: selection without running code.",
  );
  const report = lines.join('\n');
  console.log(report);
  if (args.out) writeFileSync(args.out, `${report}\n`);
  else if (!args.quick) {
    mkdirSync(join(root, 'bench', 'results'), { recursive: true });
    writeFileSync(join(root, 'bench', 'results', 'real-repos.md'), `${report}\n`);
  }
  // --keep leaves every run's predictions, scores and checks files for a look at the evidence.
  if (args.keep) console.error(`real-repos: runs kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

/** The none / all / mixed shares of train pools of ≥ 4 candidates, or why they are not measured. */
function trainShares(): string {
  const file = join(root, '..', 'shared', 'data', 'train', 'candidates.jsonl');
  if (!existsSync(file)) return `${file} is missing`;
  const pools = new Map<string, boolean[]>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const row = JSON.parse(line) as { benchmark: string; instance_id: string; resolved: boolean };
    const id = `${row.benchmark}/${row.instance_id}`;
    pools.set(id, [...(pools.get(id) ?? []), row.resolved]);
  }
  const big = [...pools.values()].filter((labels) => labels.length >= 4);
  const share = (test: (labels: boolean[]) => boolean) => pct(big.filter(test).length / (big.length || 1));
  return `${big.length} pools: none ${share((l) => l.every((r) => !r))}, all ${share((l) => l.every(Boolean))}, mixed ${share((l) => l.some(Boolean) && l.some((r) => !r))}`;
}

await main();
