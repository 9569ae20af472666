/** A request's policy API key reaches the policy but is never written to the job store. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPolicyFactory } from '../../src/candidates/policy-factory.js';
import { DEFAULT_MODEL_DIR } from '../../src/config.js';
import { createScorer } from '../../src/rerank/scorers/registry.js';
import type { Scorer } from '../../src/rerank/scorers/types.js';
import { createLocalProvider } from '../../src/sandbox/providers/local.js';
import { buildApp } from '../../src/server/app.js';
import { JobManager } from '../../src/solve/job-manager.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import type { JobStore } from '../../src/store/types.js';
import { gitRepo } from './git-repo.js';

const SECRET = 'sk-test-secret-0123456789';

describe('secrets in a /solve request', () => {
  let scorer: Scorer;
  let store: JobStore;
  let jobs: JobManager;
  let app: Awaited<ReturnType<typeof buildApp>>;
  let scratch: string;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'wnw-secrets-'));
    scorer = await createScorer({ backend: 'onnx', model: DEFAULT_MODEL_DIR() });
    store = createSqliteStore(':memory:');
    jobs = new JobManager(store);
    app = await buildApp({ jobs, store, solveDeps: { sandboxes: createLocalProvider(), scorer, store, createPolicy: createPolicyFactory() } });
  });

  afterAll(async () => {
    await app?.close();
    await app?.winnower.solveDeps.sandboxes.close();
    store?.close();
    await scorer?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('keeps policy.api_key out of the stored request', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/solve',
      payload: { issue: 'x', repo: { path: gitRepo(join(scratch, 'repo')) }, n: 1, policy: { kind: 'openai', url: 'http://127.0.0.1:9/v1', model: 'm', api_key: SECRET } },
    });
    expect(response.statusCode).toBe(202);
    const jobId = response.json().job_id as string;
    await jobs.wait(jobId);
    const job = store.getJob(jobId)!;
    expect(JSON.stringify(job)).not.toContain(SECRET);
    expect((job.request as { policy: { api_key?: string } }).policy.api_key).toBe('[redacted]');
    expect(JSON.stringify(store.listCandidates(jobId))).not.toContain(SECRET);
  });

  it('keeps the credentials inside URLs out of the stored request', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/solve',
      payload: { issue: 'x', repo: { path: gitRepo(join(scratch, 'url-repo')) }, n: 1, policy: { kind: 'openai', url: `http://user:${SECRET}@127.0.0.1:9/v1`, model: 'm' } },
    });
    expect(response.statusCode).toBe(202);
    const jobId = response.json().job_id as string;
    await jobs.wait(jobId);
    const job = store.getJob(jobId)!;
    expect(JSON.stringify(job)).not.toContain(SECRET);
    expect((job.request as { policy: { url: string } }).policy.url).toBe('http://[redacted]@127.0.0.1:9/v1');
    expect(JSON.stringify(store.listCandidates(jobId))).not.toContain(SECRET);

    // A clone URL's token, and a password holding a raw '@'.
    const cloned = await app.inject({
      method: 'POST',
      url: '/solve',
      payload: { issue: 'x', repo: { url: `https://token:${SECRET}@x@127.0.0.1:9/o/r.git` }, n: 1, policy: { kind: 'replay', recordings: [{ id: 'r', instance_id: 'i', source: 's', messages: [{ role: 'assistant', content: 'done' }] }] } },
    });
    expect(cloned.statusCode).toBe(202);
    const clonedId = cloned.json().job_id as string;
    expect(JSON.stringify(store.getJob(clonedId))).not.toContain(SECRET);
    expect((store.getJob(clonedId)!.request as { repo: { url: string } }).repo.url).toBe('https://[redacted]@127.0.0.1:9/o/r.git');
    await jobs.wait(clonedId);
  });
});
