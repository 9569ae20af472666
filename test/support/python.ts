/**
 * Whether the python3 that sandboxes run has pytest (Debian's python3-pytest), which the
 * real-shaped repositories' suites run under. Probed with the sandbox's PATH, not this process's:
 * a host whose own PATH finds another python3 first (pyenv, a virtualenv) says nothing about the
 * system one a sandbox gets.
 */
import { execFileSync } from 'node:child_process';
import { SANDBOX_PATH } from '../../src/sandbox/providers/local/bwrap-args.js';

let cached: boolean | undefined;

export function hasPytest(): boolean {
  if (cached === undefined) {
    try {
      execFileSync('python3', ['-c', 'import pytest'], { stdio: 'pipe', env: { ...process.env, PATH: SANDBOX_PATH } });
      cached = true;
    } catch {
      cached = false;
    }
  }
  return cached;
}
