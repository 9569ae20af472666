/**
 * The fixture world of bench/real-repos.bench.ts: the same seed builds the same repositories and
 * pools, and every candidate's label is what running the instance's test file says of it, as the
 * SWE-bench harness runs it (the candidate's patch, then the test patch's files checked out at the
 * base and the test patch applied, then the file's tests; exit code 0 ⇔ resolved).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildWorld, type World, type WorldInstance } from '../../bench/real-repos-world.js';
import { hostHasPytest } from '../support/python.js';

const roots: string[] = [];
const world = (seed: number, instances: number): World => {
  const root = mkdtempSync(join(tmpdir(), 'wnw-real-world-'));
  roots.push(root);
  return buildWorld({ root, seed, instances });
};
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: 'pipe' });

/** The harness's run of the instance's test file over `patch`: whether every test in it passed. */
function passes(w: World, instance: WorldInstance, patch: string, scratch: string): boolean {
  const task = instance.task as { repo: string; base_commit: string; test_patch: string };
  const dir = join(scratch, 'checkout');
  rmSync(dir, { recursive: true, force: true });
  git(scratch, 'clone', '-q', join(w.reposDir, `${task.repo.replace('/', '__')}.git`), dir);
  git(dir, 'checkout', '-q', task.base_commit);
  const apply = (diff: string) => {
    writeFileSync(join(scratch, 'p.diff'), diff);
    git(dir, 'apply', join(scratch, 'p.diff'));
  };
  if (patch) apply(patch);
  const testFile = /^diff --git a\/(\S+)/m.exec(task.test_patch)![1]!;
  git(dir, 'checkout', '-q', task.base_commit, '--', testFile);
  apply(task.test_patch);
  const command =
    instance.shape === 'django'
      ? [
          'python3',
          'tests/runtests.py',
          '--verbosity',
          '2',
          '--settings=test_sqlite',
          '--parallel',
          '1',
          testFile
            .replace(/^tests\//, '')
            .replace(/\.py$/, '')
            .replaceAll('/', '.'),
        ]
      : instance.shape === 'sympy'
        ? ['python3', 'bin/test', '-C', '--verbose', testFile]
        : ['python3', '-m', 'pytest', '-q', '-p', 'no:cacheprovider', testFile];
  return spawnSync(command[0]!, command.slice(1), { cwd: dir, timeout: 60_000 }).status === 0;
}

describe('the real-repos bench world', () => {
  it('is the same for the same seed, and another for another seed', { timeout: 120_000 }, () => {
    const strip = (w: World) => ({
      tasks: w.instances.map((i) => i.task),
      candidates: w.candidates.map(({ instance_id, source, kind, test, resolved, patch }) => ({
        instance_id,
        source,
        kind,
        test,
        resolved,
        patch,
      })),
    });
    const a = strip(world(3, 2));
    expect(strip(world(3, 2))).toEqual(a);
    expect(strip(world(4, 2)).candidates).not.toEqual(a.candidates);
  });

  // Running the world's tests needs pytest (python3-pytest, which .ci/run installs) in the python3 this process finds: they run on the host.
  it.skipIf(!hostHasPytest())(
    'labels every candidate as running its instance test file says',
    () => {
      // Two instances (a Django- and a pytest-shaped one, 11 candidates of six kinds): each run is a clone and a test run.
      const w = world(7, 2);
      const scratch = mkdtempSync(join(tmpdir(), 'wnw-real-world-run-'));
      roots.push(scratch);
      const kinds = new Set<string>();
      for (const instance of w.instances) {
        expect(passes(w, instance, '', scratch), `${instance.instance_id}: the base fails its FAIL_TO_PASS test`).toBe(false);
        const pool = w.candidates.filter((c) => c.instance_id === instance.instance_id);
        expect(pool.length).toBeGreaterThanOrEqual(4);
        expect(pool.length).toBeLessThanOrEqual(8);
        for (const candidate of pool) {
          kinds.add(candidate.kind);
          expect(candidate.patch === '', candidate.kind).toBe(candidate.kind === 'empty');
          expect(passes(w, instance, candidate.patch, scratch), `${candidate.instance_id} ${candidate.source} (${candidate.kind})`).toBe(
            candidate.resolved,
          );
        }
      }
      // The seed draws more than right and wrong fixes.
      expect(kinds.size).toBeGreaterThanOrEqual(4);
    },
    300_000,
  );
});
