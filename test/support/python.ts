/** Whether this host's python3 has pytest (Debian's python3-pytest), which the real-shaped repositories' suites run under. */
import { execFileSync } from 'node:child_process';

let cached: boolean | undefined;

export function hasPytest(): boolean {
  if (cached === undefined) {
    try {
      execFileSync('python3', ['-c', 'import pytest'], { stdio: 'pipe' });
      cached = true;
    } catch {
      cached = false;
    }
  }
  return cached;
}
