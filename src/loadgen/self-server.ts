/**
 * A winnower server that `winnower bench` starts for itself: this same CLI, `serve` in a child
 * process (so the load generator and the server do not share an event loop), on a free loopback
 * port, with a throw-away data folder and the given scorer settings; the score cache is off so
 * every request is scored. Ready when /readyz answers 200, or 503 for a scorer that fails its probe (the bench's own probe request then names the failure).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { wnwError } from '../errors.js';

export interface SelfServer {
  url: string;
  close(): Promise<void>;
}

export interface SelfServerOptions {
  /** `scorer` of the config (the embedded ONNX model when empty); `cache_entries: 0` is added. */
  scorer: Record<string, unknown>;
  /** Jobs running at once (the solve scenario). */
  maxRunningJobs?: number;
  /** How long to wait for readiness (ms, default 120 s). */
  startTimeoutMs?: number;
  /** The CLI's entry script (default: the one running, `process.argv[1]`). */
  entry?: string;
  /**
   * CPUs the server may run on (`taskset -c` list, e.g. "0" or "0,1"): a measurement of how the
   * server scales with cores. The server sizes its pools by the CPUs it is given
   * (`os.availableParallelism()` follows the affinity mask).
   */
  cpus?: string;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

async function waitReady(url: string, child: ChildProcess, deadline: number, stderr: () => string): Promise<void> {
  while (Date.now() < deadline) {
    if (child.pid === undefined)
      throw wnwError('WNW_ERR_OP_INTERNAL', `the bench's own server could not be started (${child.spawnfile} not found or not runnable)`);
    if (child.exitCode !== null)
      throw wnwError('WNW_ERR_OP_INTERNAL', `the bench's own server exited with ${child.exitCode}: ${stderr().slice(-2000)}`);
    try {
      const response = await request(`${url}/readyz`);
      const readiness = (await response.body.json().catch(() => ({}))) as { status?: string };
      // Up with a failing scorer: the bench's probe request then says what the scorer answered.
      if (response.statusCode === 200 || readiness.status === 'scorer-unavailable') return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw wnwError('WNW_ERR_OP_INTERNAL', `the bench's own server was not ready in time: ${stderr().slice(-2000)}`);
}

/** The config file the bench's server starts with, in the documented spellings (docs/configuration.md), so it starts without deprecation warnings. */
export function selfServerConfig(options: Pick<SelfServerOptions, 'scorer' | 'maxRunningJobs'>, dataDir: string, port: number) {
  return {
    server: {
      host: '127.0.0.1',
      port,
      data_dir: dataDir,
      max_running_jobs: options.maxRunningJobs ?? 4,
      limits: { max_queued_jobs: 4096 },
    },
    scorer: { ...options.scorer, cache_entries: 0 },
    log_level: 'warn',
    log_format: 'json',
  };
}

export async function startSelfServer(options: SelfServerOptions): Promise<SelfServer> {
  if (options.cpus !== undefined && !/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(options.cpus))
    throw wnwError('WNW_ERR_CFG_INVALID', `cpus: "${options.cpus}" is not a CPU list (e.g. 0 or 0,1 or 0-3)`, {
      details: { field: 'cpus' },
    });
  const dir = mkdtempSync(join(tmpdir(), 'winnower-bench-'));
  const port = await freePort();
  const config = selfServerConfig(options, join(dir, 'data'), port);
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify(config));
  // This very CLI (its entry script, with the same Node flags: tsx's loader when run from source).
  const command = [process.execPath, ...process.execArgv, options.entry ?? process.argv[1]!, 'serve', '--config', file];
  const pinned = options.cpus === undefined ? command : ['taskset', '-c', options.cpus, ...command];
  const child = spawn(pinned[0]!, pinned.slice(1), {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, WINNOWER_CONFIG: '' },
  });
  let errors = '';
  // A command that cannot start (no taskset) is reported by waitReady; the event must not be unhandled.
  child.once('error', () => {});
  child.stderr!.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString('utf8')).slice(-20_000);
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitReady(url, child, Date.now() + (options.startTimeoutMs ?? 120_000), () => errors);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, close: stop };
}
