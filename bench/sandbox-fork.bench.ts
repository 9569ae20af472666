/**
 * Forking a local sandbox (docs/sandboxes.md#snapshots-and-forks) against its baseline in the same
 * run: creating a fresh sandbox and re-running the setup. The setup writes `--setup-mb` of files
 * (100 MB by default, as in issue 29's budget) into the workspace; a snapshot copies them once; a
 * fork is timed until its first command answers (the sandbox usable), as is the fresh create.
 * Budget (issue 29): fork p50 ≤ 50 ms and ≤ 5% of fresh create + setup.
 *
 *   npx tsx bench/sandbox-fork.bench.ts [--setup-mb 100] [--forks 10] [--workspace auto|copy]
 *
 * Prints a markdown report and writes it to bench/results/sandbox-fork.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createLocalProvider } from '../src/sandbox/providers/local/provider.js';
import type { Sandbox, SandboxSpec } from '../src/sandbox/types.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    'setup-mb': { type: 'string', default: '100' },
    forks: { type: 'string', default: '10' },
    workspace: { type: 'string', default: 'auto' },
  },
});
const SETUP_MB = Number(args['setup-mb']);
const FORKS = Number(args.forks);
const WORKSPACE = args.workspace as 'auto' | 'copy';

const percentile = (samples: number[], p: number): number => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const ms = (value: number): string => `${value.toFixed(1)} ms`;

function makeRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wnw-bench-fork-repo-'));
  mkdirSync(join(dir, 'pkg'));
  writeFileSync(join(dir, 'pkg', 'module.py'), 'def f():\n    return 1\n');
  const git = (...gitArgs: string[]) =>
    execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com', ...gitArgs], { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'bench base');
  return dir;
}

/** The "setup": SETUP_MB of files in 100 folders, as an install or build leaves them. */
const SETUP = `for d in $(seq 1 100); do mkdir -p build/$d && head -c $((${SETUP_MB} * 10485)) /dev/urandom > build/$d/blob; done`;

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await work();
  return [value, performance.now() - started];
}

async function main(): Promise<void> {
  const repo = makeRepo();
  const spec: SandboxSpec = { repo: { path: repo, base_commit: 'HEAD' } };
  const provider = createLocalProvider({ workspace: WORKSPACE, logger: { info: () => undefined, warn: () => undefined } });
  const usable = async (sandbox: Sandbox) => {
    const result = await sandbox.exec('test -s build/100/blob && echo ok');
    if (result.stdout !== 'ok\n') throw new Error(`the sandbox does not hold the setup: ${result.stderr}`);
  };
  try {
    // Warm-up: the base snapshot is cloned once, by the first create.
    await (await provider.create(spec)).close();
    const fresh: number[] = [];
    const setups: number[] = [];
    const creates: number[] = [];
    let parent: Sandbox | undefined;
    for (let index = 0; index < 3; index += 1) {
      const [sandbox, createMs] = await timed(async () => {
        const made = await provider.create(spec);
        await made.exec('true');
        return made;
      });
      const [, setupMs] = await timed(() => sandbox.exec(SETUP, { timeoutMs: 600_000 }));
      await usable(sandbox);
      fresh.push(createMs + setupMs);
      creates.push(createMs);
      setups.push(setupMs);
      if (parent) await sandbox.close();
      else parent = sandbox;
    }
    const [snapshot, snapshotMs] = await timed(() => parent!.snapshot!());
    const forks: number[] = [];
    const made: Sandbox[] = [];
    for (let index = 0; index < FORKS; index += 1) {
      const [child, forkMs] = await timed(async () => {
        const child = await provider.fork!(snapshot);
        await usable(child);
        return child;
      });
      forks.push(forkMs);
      made.push(child);
    }
    await Promise.all(made.map((child) => child.close()));
    await snapshot.release();
    const description = await provider.describe();
    const freshP50 = percentile(fresh, 50);
    const forkP50 = percentile(forks, 50);
    const lines = [
      '# Forking a local sandbox',
      '',
      `Command: \`npx tsx bench/sandbox-fork.bench.ts --setup-mb ${SETUP_MB} --forks ${FORKS} --workspace ${WORKSPACE}\``,
      '',
      `Host: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Linux ${release()}, load average ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' / ')} at the end; workspace ${String(description.workspace)}.`,
      '',
      `Setup: ${SETUP_MB} MB of files in 100 folders written into the workspace. A fork and a fresh create are timed until a first command answers in the sandbox (and finds the setup's files).`,
      '',
      '| what | p50 | max | n |',
      '|---|---|---|---|',
      `| fresh create + setup (baseline) | ${ms(freshP50)} | ${ms(Math.max(...fresh))} | ${fresh.length} |`,
      `| of which the setup | ${ms(percentile(setups, 50))} | ${ms(Math.max(...setups))} | ${setups.length} |`,
      `| of which the create (until a first command answers) | ${ms(percentile(creates, 50))} | ${ms(Math.max(...creates))} | ${creates.length} |`,
      `| snapshot (once; ${(snapshot.bytes / 1024 / 1024).toFixed(0)} MiB copied) | ${ms(snapshotMs)} | ${ms(snapshotMs)} | 1 |`,
      `| fork | ${ms(forkP50)} | ${ms(Math.max(...forks))} | ${forks.length} |`,
      '',
      `Fork p50 / (fresh create + setup) p50: **${((forkP50 / freshP50) * 100).toFixed(1)}%** (budget ≤ 5%); fork p50 ${ms(forkP50)} (budget ≤ 50 ms).`,
      'A fork costs what creating a sandbox costs without the base snapshot (the workspace holder and its mounts, the cgroup, the resident exec agent starting): it copies nothing; the copy is paid once, by the snapshot.',
      `N forks cost one snapshot plus N forks: for N = 8, ${ms(snapshotMs + 8 * forkP50)} against ${ms(8 * freshP50)} for 8 fresh sandboxes set up one by one.`,
      '',
    ];
    const report = lines.join('\n');
    console.log(report);
    mkdirSync(join(root, 'bench', 'results'), { recursive: true });
    writeFileSync(join(root, 'bench', 'results', 'sandbox-fork.md'), report);
  } finally {
    await provider.close();
    rmSync(repo, { recursive: true, force: true });
  }
}

await main();
