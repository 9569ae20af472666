/**
 * `server.repo_roots`: a request may only name host repositories under the configured folders
 * (symlinks and `..` resolved, file:// and bare-path URLs included); remote URLs pass.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { checkRepoAccess } from '../../src/server/guards/repo-access.js';
import { gitRepo } from './git-repo.js';
import { startTestApp, type TestApp } from './test-app.js';

describe('repository roots', () => {
  let scratch: string;
  let allowed: string;
  let elsewhere: string;
  let server: TestApp;
  let app: TestApp['app'];
  let jobs: TestApp['jobs'];

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'wnw-roots-'));
    allowed = join(scratch, 'allowed');
    elsewhere = join(scratch, 'elsewhere');
    gitRepo(join(allowed, 'repo'));
    mkdirSync(elsewhere, { recursive: true });
    symlinkSync(elsewhere, join(allowed, 'link'));
    server = await startTestApp({ valueModel: 'bundled', repoRoots: [allowed] });
    ({ app, jobs } = server);
  });

  afterAll(async () => {
    await server?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const replay = {
    kind: 'replay',
    recordings: [{ id: 'r', instance_id: 'i', source: 's', messages: [{ role: 'assistant', content: 'hi' }] }],
  };
  const solve = (repo: Record<string, string>) =>
    app.inject({ method: 'POST', url: '/solve', payload: { issue: 'x', repo, n: 1, policy: replay } });

  it.each([
    [{ path: '/etc' }, 'body.repo.path'],
    [{ path: '/no/such/folder' }, 'body.repo.path'],
    [{ path: 'ELSEWHERE' }, 'body.repo.path'],
    [{ path: 'ALLOWED/../elsewhere' }, 'body.repo.path'],
    [{ path: 'ALLOWED/link' }, 'body.repo.path'],
    [{ url: 'file://ELSEWHERE' }, 'body.repo.url'],
    [{ url: 'ELSEWHERE' }, 'body.repo.url'],
    [{ url: 'ext::sh -c true' }, 'body.repo.url'],
  ])('refuses a host repository outside the roots (%j)', async (repo, field) => {
    const resolved = Object.fromEntries(
      Object.entries(repo).map(([key, value]) => [key, value.replace('ALLOWED', allowed).replace('ELSEWHERE', elsewhere)]),
    );
    const response = await solve(resolved);
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details.field).toBe(field);
  });

  it('accepts a repository under a root', async () => {
    const response = await solve({ path: join(allowed, 'repo') });
    expect(response.statusCode).toBe(202);
    await jobs.wait(response.json().job_id);
  });

  it('lets remote URLs through and refuses local ones', async () => {
    for (const url of ['https://github.com/o/r.git', 'ssh://git@host/o/r.git', 'git@github.com:o/r.git', 'git://host/o/r']) {
      await expect(checkRepoAccess({ url }, [allowed], 'repo')).resolves.toBeUndefined();
    }
    await expect(checkRepoAccess({ url: `file://${join(allowed, 'repo')}` }, [allowed], 'repo')).resolves.toBeUndefined();
    await expect(checkRepoAccess({ path: '/etc' }, [], 'repo')).resolves.toBeUndefined();
  });

  it('checks the repository of a /rerank that verifies', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/rerank',
      payload: {
        task: { instance_id: 'i', problem_statement: 'p', repo: { path: elsewhere }, test_command: 'true' },
        candidates: [{ id: 'a', patch: '' }],
        verify: true,
      },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details.field).toBe('body.task.repo.path');
  });

  it('reads the roots from WINNOWER_REPO_ROOTS', () => {
    expect(loadConfig({ env: { WINNOWER_REPO_ROOTS: '/srv/repos, /data/checkouts' } }).server.repo_roots).toEqual([
      '/srv/repos',
      '/data/checkouts',
    ]);
    expect(loadConfig({ env: {} }).server.repo_roots).toEqual([]);
  });
});
