/**
 * Issue 31.5's batch-scale budget: `winnower rerank` over 50,000 candidates beside 5,000 in the
 * same run — peak RSS (≤ 1.2× that of 5,000) and wall time (≤ 11×) — and a 50,000 run killed
 * (SIGKILL) part-way and started again with the same --out, which must end with the same
 * predictions as the uninterrupted run. The candidates are SYNTHESIZED from
 * ../shared/data/train by repetition: the 4,592 rows again and again, each repetition's instance
 * ids suffixed `__repK` (with a task record of the same id), cut at 5,000 and 50,000 rows. No row
 * is copied into the repository; without the folder the bench says so and writes nothing else.
 * Each rerank is a child process (`node --import tsx src/cli/main.ts rerank`, the bundled ONNX
 * model) under /usr/bin/time for its peak RSS and CPU.
 *
 *   npx tsx bench/rerank-scale.bench.ts [--small 5000] [--large 50000] [--pairs 1] [--no-resume]
 *
 * Prints a markdown report and writes it to bench/results/rerank-scale.md.
 */
import { spawn } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { budgetLine } from './budget-line.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    small: { type: 'string', default: '5000' },
    large: { type: 'string', default: '50000' },
    pairs: { type: 'string', default: '1' },
    'no-resume': { type: 'boolean', default: false },
  },
});
const small = Number(args.small);
const large = Number(args.large);
const pairs = Number(args.pairs);
const data = join(root, '..', 'shared', 'data', 'train');
const resultFile = join(root, 'bench', 'results', 'rerank-scale.md');
const load = () => loadavg()[0]!.toFixed(1);
const lines: string[] = [
  '# Batch rerank at scale (issue 31.5)',
  '',
  `Command: \`npx tsx bench/rerank-scale.bench.ts ${process.argv.slice(2).join(' ')}\``.replace(/ `$/, '`'),
  `Host: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, load ${loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')} at start (shared with other work)`,
  '',
];

interface Run {
  label: string;
  candidates: number;
  wallS: number;
  cpuS: number;
  peakRssMb: number;
  load: string;
  killed: boolean;
}

/** `count` rows of the train candidates repeated, repetition K's instance ids suffixed `__repK`, and the task records they need. */
async function synthesize(dir: string, count: number): Promise<{ candidates: string; tasks: string; instances: number }> {
  const rows = readFileSync(join(data, 'candidates.jsonl'), 'utf8').split('\n').filter(Boolean);
  const tasks = new Map<string, string>();
  for await (const line of createInterface({ input: createReadStream(join(data, 'tasks.jsonl')) })) {
    if (line.trim() === '') continue;
    try {
      tasks.set((JSON.parse(line) as { instance_id: string }).instance_id, line);
    } catch {
      // a malformed record stays out, as --skip-invalid would leave it
    }
  }
  const out: string[] = [];
  const used = new Map<string, string>();
  for (let index = 0; out.length < count; index++) {
    const rep = Math.floor(index / rows.length);
    const row = JSON.parse(rows[index % rows.length]!) as Record<string, unknown>;
    const id = `${row.instance_id as string}__rep${rep}`;
    out.push(JSON.stringify({ ...row, instance_id: id }));
    const task = tasks.get(row.instance_id as string);
    if (task && !used.has(id)) used.set(id, JSON.stringify({ ...(JSON.parse(task) as object), instance_id: id }));
  }
  const candidates = join(dir, `candidates-${count}.jsonl`);
  const taskFile = join(dir, `tasks-${count}.jsonl`);
  writeFileSync(candidates, `${out.join('\n')}\n`);
  writeFileSync(taskFile, `${[...used.values()].join('\n')}\n`);
  return {
    candidates,
    tasks: taskFile,
    instances: new Set(out.map((line) => (JSON.parse(line) as { instance_id: string }).instance_id)).size,
  };
}

/** One rerank under /usr/bin/time; `killWhen` (polled) ends it with SIGKILL. */
function rerank(
  label: string,
  count: number,
  files: { candidates: string; tasks: string },
  out: string,
  killWhen?: () => boolean,
): Promise<Run> {
  const timing = `${out}.time`;
  const argv = [
    '-f',
    '%M %e %U %S',
    '-o',
    timing,
    process.execPath,
    '--import',
    'tsx',
    join(root, 'src/cli/main.ts'),
    'rerank',
    '--candidates',
    files.candidates,
    '--tasks',
    files.tasks,
    '--out',
    out,
    '--skip-invalid',
    '--no-progress',
  ];
  const loadAtStart = load();
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', argv, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    let killed = false;
    const poll = killWhen
      ? setInterval(() => {
          if (!killed && killWhen()) {
            killed = true;
            // The rerank itself, not /usr/bin/time: a crash of the process that writes the files.
            spawn('pkill', ['-KILL', '-P', String(child.pid)]);
          }
        }, 200)
      : undefined;
    child.on('close', (code) => {
      if (poll) clearInterval(poll);
      const wallS = (Date.now() - started) / 1000;
      if (code !== 0 && !killed) {
        reject(new Error(`rerank ${label} exited ${code}: ${stderr}`));
        return;
      }
      const [rssKb, , user, system] = (existsSync(timing) ? readFileSync(timing, 'utf8') : '').trim().split('\n').pop()!.split(' ');
      resolve({
        label,
        candidates: count,
        wallS,
        cpuS: Number(user) + Number(system),
        peakRssMb: Number(rssKb) / 1024,
        load: `${loadAtStart}–${load()}`,
        killed,
      });
    });
  });
}

const lineCount = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0);
const sortedLines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).sort();

if (!existsSync(join(data, 'candidates.jsonl')) || !existsSync(join(data, 'tasks.jsonl'))) {
  lines.push(`Skipped: ${data} (candidates.jsonl, tasks.jsonl) is missing.`);
  console.log(lines.join('\n'));
} else {
  const dir = mkdtempSync(join(tmpdir(), 'winnower-rerank-scale-'));
  try {
    const smallFiles = await synthesize(dir, small);
    const largeFiles = await synthesize(dir, large);
    const runs: Run[] = [];
    for (let pair = 0; pair < pairs; pair++) {
      for (const [count, files] of [
        [small, smallFiles],
        [large, largeFiles],
      ] as const) {
        const out = join(dir, `run-${count}-${pair}`, 'predictions.jsonl');
        mkdirSync(join(dir, `run-${count}-${pair}`), { recursive: true });
        const run = await rerank(`${count} candidates`, count, files, out);
        runs.push(run);
        console.error(`${run.label}: ${run.wallS.toFixed(1)} s, ${run.peakRssMb.toFixed(0)} MB, load ${run.load}`);
      }
    }
    lines.push(
      `Candidates SYNTHESIZED from \`../shared/data/train\` by repetition (its ${lineCount(join(data, 'candidates.jsonl')).toLocaleString('en-US')} rows again and again, instance ids suffixed \`__repK\`): ${small.toLocaleString('en-US')} candidates over ${smallFiles.instances.toLocaleString('en-US')} instances, ${large.toLocaleString('en-US')} over ${largeFiles.instances.toLocaleString('en-US')}. \`winnower rerank --skip-invalid --no-progress\` with the bundled ONNX model, default concurrency; peak RSS and CPU from /usr/bin/time.`,
      '',
      '| run | candidates | wall s | CPU s | peak RSS MB | load (1 min) |',
      '|---|---:|---:|---:|---:|---|',
      ...runs.map(
        (run) =>
          `| ${run.label} | ${run.candidates.toLocaleString('en-US')} | ${run.wallS.toFixed(1)} | ${run.cpuS.toFixed(1)} | ${run.peakRssMb.toFixed(0)} | ${run.load} |`,
      ),
      '',
      `| pair | RSS large ÷ small (budget ≤ 1.2) | wall large ÷ small (budget ≤ 11; ${(large / small).toFixed(0)}× the candidates) | CPU large ÷ small |`,
      '|---:|---:|---:|---:|',
    );
    const rss: number[] = [];
    const wall: number[] = [];
    for (let pair = 0; pair < pairs; pair++) {
      const [a, b] = [runs[2 * pair]!, runs[2 * pair + 1]!];
      rss.push(b.peakRssMb / a.peakRssMb);
      wall.push(b.wallS / a.wallS);
      lines.push(`| ${pair + 1} | ${rss[pair]!.toFixed(2)} | ${wall[pair]!.toFixed(2)} | ${(b.cpuS / a.cpuS).toFixed(2)} |`);
    }
    const runLoads = runs.flatMap((run) => run.load.split('–').map(Number));
    const loadRange = `${Math.min(...runLoads).toFixed(1)}–${Math.max(...runLoads).toFixed(1)}`;
    const list = (values: number[]) => values.map((value) => value.toFixed(2)).join(', ');
    lines.push(
      '',
      budgetLine({
        name: `rerank peak RSS, ${large.toLocaleString('en-US')} ÷ ${small.toLocaleString('en-US')} candidates (synthesized by repetition; worst pair)`,
        budget: '≤ 1.2×',
        measured: `${Math.max(...rss).toFixed(2)}× (${list(rss)})`,
        met: Math.max(...rss) <= 1.2,
        load: loadRange,
      }),
      budgetLine({
        name: `rerank wall time, ${large.toLocaleString('en-US')} ÷ ${small.toLocaleString('en-US')} candidates (synthesized by repetition; worst pair)`,
        budget: '≤ 11×',
        measured: `${Math.max(...wall).toFixed(2)}× (${list(wall)})`,
        met: Math.max(...wall) <= 11,
        load: loadRange,
      }),
    );
    if (!args['no-resume']) {
      const reference = join(dir, 'run-' + large + '-0', 'predictions.jsonl');
      const out = join(dir, 'resume', 'predictions.jsonl');
      mkdirSync(join(dir, 'resume'), { recursive: true });
      const target = Math.floor(largeFiles.instances / 3);
      const first = await rerank(
        'killed',
        large,
        largeFiles,
        out,
        () => existsSync(out) && statSync(out).size > 0 && lineCount(out) >= target,
      );
      const before = lineCount(out);
      const second = await rerank('resumed', large, largeFiles, out);
      const same = JSON.stringify(sortedLines(out)) === JSON.stringify(sortedLines(reference));
      lines.push(
        '',
        '## Resume after a kill',
        '',
        `A ${large.toLocaleString('en-US')}-candidate run killed with SIGKILL once --out held a third of the instances, then the same command again.`,
        '',
        `- killed after ${first.wallS.toFixed(1)} s with ${before.toLocaleString('en-US')} of ${largeFiles.instances.toLocaleString('en-US')} predictions written (load ${first.load});`,
        `- resumed run: ${second.wallS.toFixed(1)} s, peak RSS ${second.peakRssMb.toFixed(0)} MB (load ${second.load}); ${lineCount(out).toLocaleString('en-US')} predictions at the end;`,
        `- predictions ${same ? 'identical to' : 'DIFFERENT from'} the uninterrupted run's (as sets of lines).`,
        '',
        budgetLine({
          name: `rerank of ${large.toLocaleString('en-US')} candidates killed (SIGKILL) a third of the way, then run again`,
          budget: 'resumes; the same predictions as an uninterrupted run',
          measured: `${before.toLocaleString('en-US')} kept, ${lineCount(out).toLocaleString('en-US')} of ${largeFiles.instances.toLocaleString('en-US')} at the end, ${same ? 'identical' : 'different'}`,
          met: same,
          load: `${first.load}, ${second.load}`,
        }),
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  lines.push(
    '',
    `Load at the end: ${loadavg()
      .map((value) => value.toFixed(1))
      .join(' ')}.`,
  );
  const report = `${lines.join('\n')}\n`;
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(resultFile, report);
  console.log(report);
}
