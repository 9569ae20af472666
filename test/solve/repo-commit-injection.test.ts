/**
 * A request's `repo.commit` reaches `git fetch` on the host when the URL's clone lacks it. A value
 * that looks like an option (`--upload-pack=<command>`) must be read as a revision, never run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorld, demoRecordings, hasBubblewrap, solveBody, type TestWorld } from './helpers.js';

describe.skipIf(!hasBubblewrap())('repo.commit is never read as a git option', () => {
  let world: TestWorld;
  let scratch: string;

  beforeAll(async () => {
    world = await createWorld();
    scratch = mkdtempSync(join(tmpdir(), 'wnw-inject-'));
  });

  afterAll(async () => {
    await world?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('does not run a command given as --upload-pack in repo.commit', async () => {
    const marker = join(scratch, 'pwned');
    const server = await world.start();
    try {
      const response = await server.app.inject({
        method: 'POST',
        url: '/solve?wait=true',
        payload: solveBody(world.repo, {
          n: 1,
          repo: { url: `file://${world.repo}`, commit: `--upload-pack=touch ${marker}; git-upload-pack` },
          policy: { kind: 'replay', recordings: [demoRecordings()['gives-up']!] },
          verify: { enabled: false },
        }),
      });
      expect(existsSync(marker)).toBe(false);
      const job = response.json();
      expect(job.status).toBe('failed');
      expect(job.error.code).toBe('WNW_ERR_SBX_REPO');
    } finally {
      await server.close();
    }
  }, 60_000);

  it('still fetches a commit that is on no branch of the URL by its id', async () => {
    const git = (...args: string[]) => execFileSync('git', ['-C', world.repo, ...args], { encoding: 'utf8' }).trim();
    const dangling = git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit-tree', '-m', 'on no branch', 'HEAD^{tree}');
    const sandbox = await world.sandboxes.create({ repo: { url: `file://${world.repo}`, base_commit: dangling } });
    try {
      expect((await sandbox.exec('git log -1 --format=%s')).stdout.trim()).toBe('on no branch');
    } finally {
      await sandbox.close();
    }
  }, 60_000);
});
