/**
 * Whether python3 has pytest (Debian's python3-pytest), which the real-shaped repositories' suites
 * run under. Two probes, since two python3s may differ (a pyenv or virtualenv one first on this
 * process's PATH, the system one in /usr/bin):
 * - `hasPytest()`: the one sandboxes run, found with the sandbox's PATH;
 * - `hostHasPytest()`: the one this process's PATH finds, which the fake provider
 *   (test/verify/fake-sandbox.ts) runs, since its commands run on the host with this environment.
 */
import { execFileSync } from 'node:child_process';
import { SANDBOX_PATH } from '../../src/sandbox/providers/local/bwrap-args.js';

const cached = new Map<string, boolean>();

function probe(path: string): boolean {
  let found = cached.get(path);
  if (found === undefined) {
    try {
      execFileSync('python3', ['-c', 'import pytest'], { stdio: 'pipe', env: { ...process.env, PATH: path } });
      found = true;
    } catch {
      found = false;
    }
    cached.set(path, found);
  }
  return found;
}

export function hasPytest(): boolean {
  return probe(SANDBOX_PATH);
}

export function hostHasPytest(): boolean {
  return probe(process.env.PATH ?? '');
}
