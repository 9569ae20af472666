/**
 * CLI start-up cost: `winnower --help` and `winnower rerank --help` through `node bin/winnower.js`
 * (the built dist/) and through tsx (src/ as the tests run it), for the working tree and for a
 * git ref before it, each beside `node -e 0` measured in the same rounds (the ratio is the figure
 * to compare across hosts). Both trees are built into temporary folders (tsc, src/ only), so the
 * checkout's own dist/ is left alone.
 *
 *   npx tsx bench/cli-startup.bench.ts [--ref HEAD] [--repeats 7]
 *
 * Prints a markdown report and writes it to bench/results/cli-startup.md.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({ options: { ref: { type: 'string', default: 'HEAD' }, repeats: { type: 'string', default: '7' } } });
const REPEATS = Number(args.repeats);
const root = resolve(import.meta.dirname, '..');
const tsx = join(root, 'node_modules', '.bin', 'tsx');

/** A runnable copy of a tree: src/, bin/, package.json and the tsconfig, node_modules linked, dist/ built. */
function prepareTree(label: string, fill: (dir: string) => void): string {
  const dir = mkdtempSync(join(tmpdir(), `winnower-startup-${label}-`));
  fill(dir);
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(
    join(dir, 'tsconfig.startup.json'),
    JSON.stringify({ extends: './tsconfig.json', compilerOptions: { noEmit: false, rootDir: '.', outDir: 'dist' }, include: ['src'] }),
  );
  // Type errors elsewhere (others' work in progress) do not stop tsc from emitting.
  spawnSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.startup.json'], { cwd: dir, stdio: 'ignore' });
  return dir;
}

const ref = execFileSync('git', ['rev-parse', '--short', args.ref!], { cwd: root, encoding: 'utf8' }).trim();
const before = prepareTree('before', (dir) => {
  execFileSync('bash', ['-c', `git archive ${ref} src bin package.json tsconfig.json | tar -x -C ${dir}`], { cwd: root });
});
const after = prepareTree('after', (dir) => {
  for (const path of ['src', 'bin', 'package.json', 'tsconfig.json']) cpSync(join(root, path), join(dir, path), { recursive: true });
});

interface Run {
  wall: number;
  cpu: number;
}

/** One run: wall and CPU seconds (user + sys) from GNU time, output discarded, exit status checked. */
function measure(command: string[], cwd: string): Run {
  const result = spawnSync('/usr/bin/time', ['-f', '%e %U %S', ...command], { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command.join(' ')} exited ${result.status}: ${result.stderr}`);
  const [wall, user, sys] = result.stderr.trim().split('\n').at(-1)!.split(' ').map(Number) as [number, number, number];
  return { wall, cpu: user + sys };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const cases: { name: string; command: (tree: string) => string[] }[] = [
  { name: '`node bin/winnower.js --help`', command: () => ['node', 'bin/winnower.js', '--help'] },
  { name: '`node bin/winnower.js rerank --help`', command: () => ['node', 'bin/winnower.js', 'rerank', '--help'] },
  { name: '`tsx src/cli/main.ts --help`', command: () => [tsx, 'src/cli/main.ts', '--help'] },
  { name: '`tsx src/cli/main.ts rerank --help`', command: () => [tsx, 'src/cli/main.ts', 'rerank', '--help'] },
];
const trees = [
  { label: `before (${ref})`, dir: before },
  { label: 'after (working tree)', dir: after },
];

// Warm-up: tsx's transform cache and the page cache, for every command in both trees.
for (const item of cases) for (const tree of trees) measure(item.command(tree.dir), tree.dir);
const baseline: Run[] = [];
// tsx's own floor (its loader and esbuild), so the tsx rows can be read against it too.
const emptyTs = join(after, 'empty.ts');
writeFileSync(emptyTs, 'export {};\n');
measure([tsx, emptyTs], root);
const tsxBaseline: Run[] = [];
const runs = new Map<string, Run[]>();
const loadStart = loadavg();
// Interleaved rounds, so load on the shared host falls on every row alike.
for (let round = 0; round < REPEATS; round++) {
  baseline.push(measure(['node', '-e', '0'], root));
  tsxBaseline.push(measure([tsx, emptyTs], root));
  for (const item of cases) {
    for (const tree of trees) {
      const key = `${item.name}|${tree.label}`;
      runs.set(key, [...(runs.get(key) ?? []), measure(item.command(tree.dir), tree.dir)]);
    }
  }
}
const loadEnd = loadavg();
const baseWall = median(baseline.map((run) => run.wall));
const baseCpu = median(baseline.map((run) => run.cpu));
const tsxWall = median(tsxBaseline.map((run) => run.wall));
const tsxCpu = median(tsxBaseline.map((run) => run.cpu));

const rows = cases.flatMap((item) =>
  trees.map((tree) => {
    const list = runs.get(`${item.name}|${tree.label}`)!;
    const wall = median(list.map((run) => run.wall));
    const cpu = median(list.map((run) => run.cpu));
    return `| ${item.name} | ${tree.label} | ${wall.toFixed(2)} s | ${(wall / baseWall).toFixed(1)}× | ${cpu.toFixed(2)} s | ${(cpu / Math.max(baseCpu, 0.01)).toFixed(1)}× |`;
  }),
);

const report = [
  '# CLI start-up: `--help` before and after lazy subcommand loading — benchmark',
  '',
  `Host: ${cpus().length} vCPU (${cpus()[0]?.model ?? 'unknown'}), Linux ${release()}, Node ${process.version}; a shared box (other work ran alongside); load average ${loadStart.map((value) => value.toFixed(2)).join(' ')} at start, ${loadEnd.map((value) => value.toFixed(2)).join(' ')} at end.`,
  `Command: \`npx tsx bench/cli-startup.bench.ts --ref ${args.ref} --repeats ${REPEATS}\`.`,
  '',
  `Set-up: "before" is \`${ref}\`'s src/ and bin/, "after" the working tree's, each built by tsc into its own temporary folder (node_modules linked). Medians of ${REPEATS} interleaved rounds after one warm-up run of each; wall and CPU (user + sys) from GNU time. Baseline \`node -e 0\` in the same rounds: ${baseWall.toFixed(2)} s wall, ${baseCpu.toFixed(2)} CPU-s; tsx on an empty .ts file (tsx's own floor): ${tsxWall.toFixed(2)} s wall, ${tsxCpu.toFixed(2)} CPU-s.`,
  '',
  '| command | tree | wall | wall vs `node -e 0` | CPU | CPU vs `node -e 0` |',
  '|---|---|---|---|---|---|',
  ...rows,
  '',
  'Reading: "before" registers every subcommand by importing its whole module graph (fastify, zod, onnxruntime, the pipelines) on every start; "after" main.ts loads commander and the option declarations only, and a subcommand\'s `*-action.ts` is imported when that subcommand runs (`--help` never does). The tsx rows pay tsx\'s own floor on top.',
  '',
].join('\n');

process.stdout.write(report);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(join(root, 'bench', 'results', 'cli-startup.md'), report);
for (const dir of [before, after]) rmSync(dir, { recursive: true, force: true });
