/**
 * Helpers for the local provider's tests: whether bubblewrap is here, throwaway git repositories,
 * and a look at the host's process table and mounts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalProvider, type LocalProviderSettings } from '../../src/sandbox/providers/local/provider.js';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { makeContractRepo } from './contract.js';

/** Why the bubblewrap tests cannot run here, or undefined when they can. */
export const bwrapMissing: string | undefined = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'].some((path) => existsSync(path))
  ? undefined
  : 'bubblewrap is not installed (apt-get install -y bubblewrap)';

export const isRoot = process.getuid?.() === 0;

/** A logger that drops everything: the tests look at results, not at log lines. */
export const quietLogger: LocalProviderSettings['logger'] = { info: () => undefined, warn: () => undefined };

/** Local providers made by one test file (quiet, with `defaults`), all closed by `closeAll` in its afterAll. */
export function localProviders(defaults: LocalProviderSettings = {}): {
  make(settings?: LocalProviderSettings): SandboxProvider;
  closeAll(): Promise<void>;
} {
  const providers: SandboxProvider[] = [];
  return {
    make(settings = {}) {
      const provider = createLocalProvider({ logger: quietLogger, ...defaults, ...settings });
      providers.push(provider);
      return provider;
    },
    async closeAll() {
      for (const provider of providers) await provider.close();
    },
  };
}

/** A temporary folder removed by the returned cleanup. */
export function tempDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A contract repository in a new temp folder, plus a second commit; returns both SHAs. */
export function makeTestRepo(dir: string): { base: string; second: string } {
  const base = makeContractRepo(dir);
  const git = (...args: string[]): string =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: dir, encoding: 'utf8' }).trim();
  execFileSync('sh', ['-c', 'echo "second commit" >> README.md'], { cwd: dir });
  git('commit', '-qam', 'second');
  return { base, second: git('rev-parse', 'HEAD') };
}

/** Command lines of every process on the host. */
export function hostCommandLines(): Array<{ pid: number; uid: number; cmdline: string }> {
  const processes: Array<{ pid: number; uid: number; cmdline: string }> = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${name}/status`, 'utf8'))?.[1] ?? -1);
      processes.push({ pid: Number(name), uid, cmdline });
    } catch {
      // exited meanwhile
    }
  }
  return processes;
}

/** Polls until `check` holds (or the deadline passes) and returns its last answer. */
export async function eventually<T>(probe: () => T, check: (value: T) => boolean, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = probe();
  while (!check(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = probe();
  }
  return value;
}

/** Lines of the host's mount table mentioning `text`. */
export function mountsMentioning(text: string): string[] {
  return readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .filter((line) => line.includes(text));
}
