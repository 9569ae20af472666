/** A request's policy API key reaches the policy but is never written to the job store. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicyOptions } from '../../src/rollout/policy/policy-options.js';
import { REDACTED, redactRequest, redactRerankRequest } from '../../src/server/plugins/redact-request.js';
import type { SolveRequest } from '../../src/solve/solve-request.js';
import { gitRepo } from './git-repo.js';
import { startTestApp, type TestApp } from './test-app.js';

const SECRET = 'sk-test-secret-0123456789';

describe('secrets in a /solve request', () => {
  let server: TestApp;
  let store: TestApp['store'];
  let jobs: TestApp['jobs'];
  let app: TestApp['app'];
  let scratch: string;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'wnw-secrets-'));
    server = await startTestApp({ valueModel: 'bundled' });
    ({ app, store, jobs } = server);
  });

  afterAll(async () => {
    await server?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('keeps policy.api_key out of the stored request', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/solve',
      payload: {
        issue: 'x',
        repo: { path: gitRepo(join(scratch, 'repo')) },
        n: 1,
        policy: { kind: 'openai', url: 'http://127.0.0.1:9/v1', model: 'm', api_key: SECRET },
      },
    });
    expect(response.statusCode).toBe(202);
    const jobId = response.json().job_id as string;
    await jobs.wait(jobId);
    const job = (await store.getJob(jobId))!;
    expect(JSON.stringify(job)).not.toContain(SECRET);
    expect((job.request as { policy: { api_key?: string } }).policy.api_key).toBe('[redacted]');
    expect(JSON.stringify(await store.listCandidates(jobId))).not.toContain(SECRET);
  });

  it('keeps the credentials inside URLs out of the stored request', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/solve',
      payload: {
        issue: 'x',
        repo: { path: gitRepo(join(scratch, 'url-repo')) },
        n: 1,
        policy: { kind: 'openai', url: `http://user:${SECRET}@127.0.0.1:9/v1`, model: 'm' },
      },
    });
    expect(response.statusCode).toBe(202);
    const jobId = response.json().job_id as string;
    await jobs.wait(jobId);
    const job = (await store.getJob(jobId))!;
    expect(JSON.stringify(job)).not.toContain(SECRET);
    expect((job.request as { policy: { url: string } }).policy.url).toBe('http://[redacted]@127.0.0.1:9/v1');
    expect(JSON.stringify(await store.listCandidates(jobId))).not.toContain(SECRET);

    // A clone URL's token, and a password holding a raw '@'.
    const cloned = await app.inject({
      method: 'POST',
      url: '/solve',
      payload: {
        issue: 'x',
        repo: { url: `https://token:${SECRET}@x@127.0.0.1:9/o/r.git` },
        n: 1,
        policy: {
          kind: 'replay',
          recordings: [{ id: 'r', instance_id: 'i', source: 's', messages: [{ role: 'assistant', content: 'done' }] }],
        },
      },
    });
    expect(cloned.statusCode).toBe(202);
    const clonedId = cloned.json().job_id as string;
    expect(JSON.stringify(await store.getJob(clonedId))).not.toContain(SECRET);
    expect(((await store.getJob(clonedId))!.request as { repo: { url: string } }).repo.url).toBe('https://[redacted]@127.0.0.1:9/o/r.git');
    await jobs.wait(clonedId);
  });
});

describe('secrets in a /rerank request kept as a job', () => {
  it('keeps the judge and test-writer keys and URL credentials out, and the candidates by id only', () => {
    const body = {
      task: { instance_id: 't-1', repo: { url: `https://user:${SECRET}@git.example/r.git` } },
      judge: { url: `https://u:${SECRET}@judge.example/v1`, model: 'j', api_key: SECRET },
      checks: {
        reproduction: { policy: PolicyOptions.parse({ kind: 'openai', url: 'http://policy.example/v1', model: 'm', api_key: SECRET }) },
      },
      candidates: [{ id: 'a', patch: 'diff', messages: [] }],
    };
    const stored = redactRerankRequest(body);
    expect(JSON.stringify(stored)).not.toContain(SECRET);
    expect(stored.candidates).toEqual([{ id: 'a' }]);
    expect(stored.judge).toMatchObject({ model: 'j', api_key: REDACTED });
    expect(stored.task.repo).toMatchObject({ url: expect.stringContaining('git.example/r.git') });
  });
});

describe('the test writers policy of a /solve request', () => {
  it('keeps verify.reproduction.policy.api_key and URL credentials out of what is stored, and the rest as it was', () => {
    const request = {
      issue: 'x',
      n: 1,
      verify: {
        enabled: true,
        fail_to_pass: [],
        pass_to_pass: [],
        reproduction: {
          n: 2,
          agent: 'test-writer',
          policy: { kind: 'openai', url: `http://u:${SECRET}@127.0.0.1:9/v1`, model: 'w', api_key: SECRET },
        },
      },
    } as unknown as SolveRequest;
    const stored = redactRequest(request);
    expect(JSON.stringify(stored)).not.toContain(SECRET);
    expect(stored.verify.reproduction).toMatchObject({
      n: 2,
      agent: 'test-writer',
      policy: { kind: 'openai', url: 'http://[redacted]@127.0.0.1:9/v1', model: 'w', api_key: REDACTED },
    });
    // The request the job runs with keeps its key.
    expect(JSON.stringify(request)).toContain(SECRET);
  });
});
