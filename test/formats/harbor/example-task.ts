/**
 * Writes Harbor task folders for tests, shaped as the example task of the Harbor facts (a
 * `median` fix under /app with a pytest verifier that writes reward.json); no copied files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from '../../support/temp-dir.js';

export const EXAMPLE_TOML = `schema_version = "1.4"
[task]
name = "winnower/fix-median"
version = "1.0.0"
[verifier]
timeout_sec = 300.0
[agent]
timeout_sec = 900.0
[environment]
network_mode = "no-network"
cpus = 1
memory_mb = 2048
`;

export const EXAMPLE_DOCKERFILE = 'FROM python:3.12-slim\nWORKDIR /app\nCOPY stats.py /app/\nRUN pip install pytest\n';

export const EXAMPLE_INSTRUCTION = '`median` in /app/stats.py is wrong for even-length lists. Fix it; keep the signature.\n';

/**
 * The verifier's script: the tests decide, the reward file says so (its exit code is ignored). The
 * facts' example runs pytest; plain python3 runs the same checks on a host without pytest.
 */
export const EXAMPLE_TEST_SH = `#!/bin/bash
cd /app
if python3 /tests/test_stats.py; then r=1; else r=0; fi
printf '{"reward": %s}\\n' "$r" > /logs/verifier/reward.json
`;

export const EXAMPLE_TEST_PY = `import sys

sys.path.insert(0, "/app")
from stats import median


def test_odd():
    assert median([3, 1, 2]) == 2


def test_even():
    assert median([4, 1, 3, 2]) == 2.5


if __name__ == "__main__":
    test_odd()
    test_even()
`;

/** The code the task's Dockerfile copies to /app, with the even-length bug. */
export const EXAMPLE_STATS_PY = `def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2]
`;

/** stats.py fixed. */
export const FIXED_STATS_PY = `def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if n % 2 == 0:
        return (xs[n // 2 - 1] + xs[n // 2]) / 2
    return xs[n // 2]
`;

/** Writes `files` (relative path → content) into a new folder and returns it. */
export function writeTaskFolder(files: Record<string, string>, parent?: string): string {
  const dir = parent ?? tempDir('harbor-task-');
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content, path.endsWith('.sh') ? { mode: 0o755 } : {});
  }
  return dir;
}

/** The example task, with `overrides` replacing or adding files (an empty string removes nothing: it writes an empty file). */
export function writeExampleTask(overrides: Record<string, string> = {}, parent?: string): string {
  return writeTaskFolder(
    {
      'task.toml': EXAMPLE_TOML,
      'instruction.md': EXAMPLE_INSTRUCTION,
      'environment/Dockerfile': EXAMPLE_DOCKERFILE,
      'tests/test.sh': EXAMPLE_TEST_SH,
      'tests/test_stats.py': EXAMPLE_TEST_PY,
      'solution/solve.sh': '#!/bin/bash\ncp /solution/stats.py /app/stats.py\n',
      ...overrides,
    },
    parent,
  );
}
