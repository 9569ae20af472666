/**
 * A request whose host repository cannot be used is a 400 at submit, naming the field, instead of a
 * job whose every rollout fails: a missing or relative path, a file, a folder that is not a git
 * repository, an empty repository, an unknown commit.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLocalRepo } from '../../src/server/guards/repo-check.js';
import { gitRepo } from './git-repo.js';
import { startTestApp, type TestApp } from './test-app.js';

const recording = { id: 'r', instance_id: 'i', source: 's', messages: [{ role: 'assistant', content: 'done' }] };

describe('submit-time repository checks', () => {
  let scratch: string;
  let repo: string;
  let head: string;
  let server: TestApp;
  let store: TestApp['store'];
  let jobs: TestApp['jobs'];
  let app: TestApp['app'];

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'wnw-repo-check-'));
    repo = gitRepo(join(scratch, 'repo'));
    head = execFileSync('git', ['-C', repo, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    mkdirSync(join(scratch, 'plain'));
    writeFileSync(join(scratch, 'file.txt'), 'x');
    execFileSync('git', ['init', '-q', join(scratch, 'empty')]);
    server = await startTestApp();
    ({ app, store, jobs } = server);
  });

  afterAll(async () => {
    await server?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const solve = (repoField: Record<string, string>) =>
    app.inject({
      method: 'POST',
      url: '/solve',
      payload: { issue: 'x', repo: repoField, n: 1, policy: { kind: 'replay', recordings: [recording] }, verify: { enabled: false } },
    });

  it.each([
    [{ path: 'SCRATCH/no-such-dir' }, 'body.repo.path', 'does not exist'],
    [{ path: 'relative/checkout' }, 'body.repo.path', 'not an absolute path'],
    [{ path: 'SCRATCH/file.txt' }, 'body.repo.path', 'not a folder'],
    [{ path: 'SCRATCH/plain' }, 'body.repo.path', 'not a git repository'],
    [{ path: 'SCRATCH/empty' }, 'body.repo.path', 'no commit at HEAD'],
    [{ path: 'SCRATCH/repo', commit: 'no-such-branch' }, 'body.repo.commit', 'not found'],
    [{ path: 'SCRATCH/repo', commit: '0123456789abcdef0123456789abcdef01234567' }, 'body.repo.commit', 'not found'],
    // An option-looking commit is a revision that does not exist, never an option git acts on.
    [{ path: 'SCRATCH/repo', commit: '--output=/tmp/wnw-pwned' }, 'body.repo.commit', 'not found'],
  ])('refuses %j at submit, naming the field', async (given, field, reason) => {
    const response = await solve(Object.fromEntries(Object.entries(given).map(([key, value]) => [key, value.replace('SCRATCH', scratch)])));
    expect(response.statusCode, response.body).toBe(400);
    const { error } = response.json();
    expect(error.code).toBe('WNW_ERR_INPUT_INVALID');
    expect(error.details.field).toBe(field);
    expect(error.message).toContain(reason);
    expect(await store.listJobs()).toEqual([]);
  });

  it('accepts a repository with the commit, by name or SHA', async () => {
    for (const commit of [undefined, 'HEAD', head, head.slice(0, 8)]) {
      const response = await solve({ path: repo, ...(commit ? { commit } : {}) });
      expect(response.statusCode, response.body).toBe(202);
      await jobs.wait(response.json().job_id);
    }
  });

  it('checks the repository of a /rerank that verifies, not of one that only scores', async () => {
    const task = { instance_id: 'i', problem_statement: 'p', test_command: 'true', repo: { path: join(scratch, 'plain') } };
    const verifying = await app.inject({
      method: 'POST',
      url: '/rerank',
      payload: { task, candidates: [{ id: 'a', patch: '' }], verify: true },
    });
    expect(verifying.statusCode).toBe(400);
    expect(verifying.json().error.details.field).toBe('body.task.repo.path');
    const unknownCommit = await app.inject({
      method: 'POST',
      url: '/rerank',
      payload: { task: { ...task, repo: { path: repo, base_commit: 'nope' } }, candidates: [{ id: 'a', patch: '' }], verify: true },
    });
    expect(unknownCommit.json().error.details.field).toBe('body.task.repo.base_commit');
    const scoring = await app.inject({ method: 'POST', url: '/rerank', payload: { task, candidates: [{ id: 'a', patch: '' }] } });
    expect(scoring.statusCode).toBe(200);
  });

  it('leaves URLs and repositories inside an image to the rollouts', async () => {
    await expect(checkLocalRepo({ path: undefined }, { path: 'p', commit: 'c' })).resolves.toBeUndefined();
    const withImage = await app.inject({
      method: 'POST',
      url: '/solve',
      payload: {
        issue: 'x',
        image: '127.0.0.1:9/img:1',
        repo: { path: '/testbed', commit: 'abc' },
        n: 1,
        policy: { kind: 'replay', recordings: [recording] },
      },
    });
    expect(withImage.statusCode).toBe(202);
    await jobs.wait(withImage.json().job_id);
  });
});
