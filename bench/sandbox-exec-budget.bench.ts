/**
 * The hot-path budget of the local provider (issue 22), in one run, as ratios to baselines measured
 * beside them (interleaved, so every row sees the same load):
 * - `exec('true')` and `exec('echo hi')` p50/p95 against a plain `spawn('sh', ['-c', …])`
 *   (budget: p50 ≤ 1.6×, p95 ≤ 2×);
 * - `git status --short` and `diff()` of a one-file change against the same git commands run
 *   directly on a host checkout of the same repository (budget ≤ 1.5×);
 * - `winnower sandbox serve`: `POST /sandboxes/{id}/exec {"command":"true","wait":true}`, median of
 *   30, against the real Orchard agent's 15–23 ms on this kind of machine
 *   (docs/design/01-orchard-env-api.md#11; budget ≤ 1.0× its figure).
 * Each sandbox row is measured with the resident exec agent (the default, "after") and with a
 * bwrap per exec (`sandbox.settings.exec: launch`, "before").
 *
 *   npx tsx bench/sandbox-exec-budget.bench.ts [--files 2000] [--execs 200] [--git 20] [--serve 30]
 *
 * Prints a markdown report and writes it to bench/results/sandbox-exec-budget.md.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { patchDiffScript, patchPolicy } from '../src/sandbox/patch-policy.js';
import { createLocalProvider } from '../src/sandbox/providers/local/provider.js';
import type { Sandbox, SandboxProvider } from '../src/sandbox/types.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    files: { type: 'string', default: '2000' },
    execs: { type: 'string', default: '200' },
    git: { type: 'string', default: '20' },
    serve: { type: 'string', default: '30' },
  },
});
const FILES = Number(args.files);
const EXECS = Number(args.execs);
const GIT = Number(args.git);
const SERVE = Number(args.serve);
/** The real Orchard orchestrator + in-pod agent, `exec true`, median of 30 (docs/design/01-orchard-env-api.md#11). */
const ORCHARD_MS = { low: 15, high: 23 };
type Mode = 'agent' | 'launch';
const MODES: Mode[] = ['agent', 'launch'];

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const ms = (value: number): string => `${value.toFixed(1)} ms`;
const ratio = (value: number, baseline: number): string => `${(value / baseline).toFixed(2)}×`;
const quiet = { info: () => undefined, warn: (message: string) => console.error(`warning: ${message}`) };

function git(cwd: string, ...gitArgs: string[]): void {
  execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com', ...gitArgs], { cwd, stdio: 'ignore' });
}

/** A git repository of FILES text files (~4 KiB each) in 20 folders. */
function makeRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wnw-budget-repo-'));
  const line = 'def function_name(argument):  # some representative source text\n';
  for (let index = 0; index < FILES; index += 1) {
    const folder = join(dir, `pkg${index % 20}`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `module_${index}.py`), `# module ${index}\n${line.repeat(60)}`);
  }
  git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'bench base');
  return dir;
}

/** Runs argv on the host and waits for it to end (output read and dropped). */
function run(argv: string[], cwd?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.resume();
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', () => resolve());
  });
}

async function timed(action: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await action();
  return performance.now() - started;
}

/** `winnower sandbox serve` over the local provider with `exec`, its base URL and a ready sandbox. */
async function startServe(
  repo: string,
  exec: Mode,
  configDir: string,
): Promise<{ call(body: unknown): Promise<number>; stop(): Promise<void> }> {
  const config = join(configDir, `serve-${exec}.json`);
  writeFileSync(config, JSON.stringify({ sandbox: { provider: 'local', settings: { exec } } }));
  const child = spawn(
    join(root, 'node_modules/.bin/tsx'),
    [join(root, 'src/cli/main.ts'), 'sandbox', 'serve', '--repo', repo, '--repo-always', '--port', '0'],
    {
      cwd: root,
      env: { ...process.env, SANDBOX_API_KEY: 'bench-key', WINNOWER_CONFIG: config, WINNOWER_LOG_FORMAT: 'json', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 120_000;
  while (!/listening at (http:\/\/127\.0\.0\.1:\d+)/.test(output)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`sandbox serve did not start: ${output.slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const base = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)![1]!;
  const request = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(base + path, {
      method,
      headers: { 'x-api-key': 'bench-key', 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await response.json()) as Record<string, unknown>;
  };
  const { sandbox_id: id } = await request('POST', '/sandboxes', { image: 'bench:none' });
  const ready = await request('GET', `/sandboxes/${String(id)}/wait?timeout=120`);
  if (ready.status !== 'ready') throw new Error(`serve sandbox not ready: ${JSON.stringify(ready)}`);
  return {
    call: (body) =>
      timed(async () => {
        const job = await request('POST', `/sandboxes/${String(id)}/exec`, body);
        if (job.exit_code !== 0) throw new Error(`serve exec failed: ${JSON.stringify(job)}`);
      }),
    stop: async () => {
      await request('DELETE', `/sandboxes/${String(id)}`).catch(() => undefined);
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

async function main(): Promise<void> {
  const lines: string[] = [];
  const say = (line = ''): void => {
    lines.push(line);
    console.log(line);
  };
  const loadStart = loadavg();
  const repo = makeRepo();
  const scratch = mkdtempSync(join(tmpdir(), 'wnw-budget-'));
  const providers = new Map<Mode, SandboxProvider>(MODES.map((mode) => [mode, createLocalProvider({ exec: mode, logger: quiet })]));
  const sandboxes = new Map<Mode, Sandbox>();
  const command = `npx tsx bench/sandbox-exec-budget.bench.ts --files ${FILES} --execs ${EXECS} --git ${GIT} --serve ${SERVE}`;
  try {
    for (const mode of MODES) sandboxes.set(mode, await providers.get(mode)!.create({ repo: { path: repo } }));
    for (const mode of MODES) {
      const mode_ = (sandboxes.get(mode) as unknown as { execMode: string }).execMode;
      if (mode_ !== mode) throw new Error(`the ${mode} sandbox runs commands by ${mode_}`);
    }

    // 1. exec latency, interleaved: plain spawn, agent, launch, for `true` and `echo hi`.
    const samples = new Map<string, number[]>();
    const push = (key: string, value: number): void => void (samples.get(key) ?? samples.set(key, []).get(key)!).push(value);
    for (let index = 0; index < EXECS + 10; index += 1) {
      for (const cmd of ['true', 'echo hi']) {
        const plain = await timed(() => run(['sh', '-c', cmd]));
        const agent = await timed(() => sandboxes.get('agent')!.exec(cmd));
        const launch = await timed(() => sandboxes.get('launch')!.exec(cmd));
        // The first ten rounds warm caches and JIT; not counted.
        if (index < 10) continue;
        push(`plain ${cmd}`, plain);
        push(`agent ${cmd}`, agent);
        push(`launch ${cmd}`, launch);
      }
    }

    // 2. git status and diff() of a one-file change, against the same commands on a host checkout.
    const host = join(scratch, 'host-checkout');
    execFileSync('git', ['clone', '-q', repo, host]);
    const change = 'echo "# changed" >> pkg0/module_0.py';
    execFileSync('sh', ['-c', change], { cwd: host });
    for (const sandbox of sandboxes.values()) await sandbox.exec(change);
    const diffScript = patchDiffScript(undefined, patchPolicy({}));
    await run(['git', 'status', '--short'], host);
    for (let index = 0; index < GIT + 2; index += 1) {
      const rows: Array<[string, () => Promise<unknown>]> = [
        ['host git status', () => run(['git', 'status', '--short'], host)],
        ['agent git status', () => sandboxes.get('agent')!.exec('git status --short')],
        ['launch git status', () => sandboxes.get('launch')!.exec('git status --short')],
        ['host diff', () => run(['sh', '-c', diffScript], host)],
        ['agent diff', () => sandboxes.get('agent')!.diff()],
        ['launch diff', () => sandboxes.get('launch')!.diff()],
      ];
      for (const [key, action] of rows) {
        const value = await timed(action);
        if (index >= 2) push(key, value);
      }
    }
    for (const sandbox of sandboxes.values()) await sandbox.close();
    sandboxes.clear();

    // 3. winnower sandbox serve, exec true, both ways (one server at a time, alternating).
    const servers = new Map<Mode, Awaited<ReturnType<typeof startServe>>>();
    try {
      for (const mode of MODES) servers.set(mode, await startServe(repo, mode, scratch));
      for (let index = 0; index < SERVE + 3; index += 1) {
        for (const mode of MODES) {
          const value = await servers.get(mode)!.call({ command: 'true', wait: true });
          if (index >= 3) push(`serve ${mode}`, value);
        }
      }
    } finally {
      for (const server of servers.values()) await server.stop();
    }

    const get = (key: string): number[] => samples.get(key)!;
    const loadEnd = loadavg();
    say('# Local sandbox hot path — budget table (issue 22)');
    say();
    say(
      `Host: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Linux ${release()}, Node ${process.version}. Load average (1, 5, 15 min) at start ${loadStart.map((v) => v.toFixed(2)).join(' ')}, at end ${loadEnd.map((v) => v.toFixed(2)).join(' ')} — the machine was shared with other work, so absolute times are noisy; the ratios compare rows measured interleaved in the same run.`,
    );
    say(`Repository: ${FILES} files. Command: \`${command}\`.`);
    say(
      '"agent": the resident exec agent (default, after issue 22); "launch": a fresh bwrap per exec (`sandbox.settings.exec: launch`, the path before).',
    );
    say();
    say(`## exec latency (${EXECS} sequential calls each, interleaved)`);
    say();
    say(
      '| command | plain spawn p50 / p95 | agent p50 / p95 | agent ratio p50 / p95 | launch p50 / p95 | launch ratio p50 / p95 | budget |',
    );
    say('|---|---|---|---|---|---|---|');
    for (const cmd of ['true', 'echo hi']) {
      const [plain, agent, launch] = ['plain', 'agent', 'launch'].map((name) => get(`${name} ${cmd}`));
      const p = (values: number[], q: number): number => percentile(values, q);
      say(
        `| \`${cmd}\` | ${ms(p(plain!, 50))} / ${ms(p(plain!, 95))} | ${ms(p(agent!, 50))} / ${ms(p(agent!, 95))} | **${ratio(p(agent!, 50), p(plain!, 50))} / ${ratio(p(agent!, 95), p(plain!, 95))}** | ${ms(p(launch!, 50))} / ${ms(p(launch!, 95))} | ${ratio(p(launch!, 50), p(plain!, 50))} / ${ratio(p(launch!, 95), p(plain!, 95))} | ≤ 1.6× / ≤ 2× |`,
      );
    }
    say();
    say(`## git status and diff() of a one-file change (${GIT} calls each, interleaved)`);
    say();
    say('| operation | host checkout p50 | agent p50 | agent ratio | launch p50 | launch ratio | budget |');
    say('|---|---|---|---|---|---|---|');
    for (const [label, key] of [
      ['`git status --short`', 'git status'],
      ['`diff()` (the same script on the host)', 'diff'],
    ] as const) {
      const [hostRow, agent, launch] = ['host', 'agent', 'launch'].map((name) => percentile(get(`${name} ${key}`), 50));
      say(
        `| ${label} | ${ms(hostRow!)} | ${ms(agent!)} | **${ratio(agent!, hostRow!)}** | ${ms(launch!)} | ${ratio(launch!, hostRow!)} | ≤ 1.5× |`,
      );
    }
    say();
    say(`## \`winnower sandbox serve\`: exec \`true\` (wait: true), median of ${SERVE}`);
    say();
    say('| server | median | p95 | ratio to the real Orchard agent (15–23 ms) | budget |');
    say('|---|---|---|---|---|');
    for (const mode of MODES) {
      const median = percentile(get(`serve ${mode}`), 50);
      say(
        `| serve, exec: ${mode} | ${ms(median)} | ${ms(percentile(get(`serve ${mode}`), 95))} | ${(median / ORCHARD_MS.high).toFixed(2)}–${(median / ORCHARD_MS.low).toFixed(2)}× | ≤ 1.0× |`,
      );
    }
    say();
    say(
      'The Orchard figure is not re-measured here (its stack is not on this machine): it is the one recorded in docs/design/01-orchard-env-api.md#11 for this kind of machine at load 10–13, so that ratio is against a fixed number, not a baseline run beside it.',
    );
  } finally {
    for (const sandbox of sandboxes.values()) await sandbox.close().catch(() => undefined);
    for (const provider of providers.values()) await provider.close();
    rmSync(repo, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, 'bench/results/sandbox-exec-budget.md'), `${lines.join('\n')}\n`);
}

await main();
