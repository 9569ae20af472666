/**
 * A job whose policy server cannot be reached fails once, at once, naming policy.url, before any
 * rollout or sandbox (docs/design/05-defects-found.md#D8: all 8 rollouts started and each failed on ECONNREFUSED).
 * A server that answers at all, even 404 to GET /models, counts as reachable.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createHttpServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPolicyReachable } from '../../src/rollout/policy/policy-reachability.js';
import { gitRepo } from '../server/git-repo.js';
import { startTestApp, type TestApp } from '../server/test-app.js';
import { closedPort } from '../support/ports.js';
import { startTarpit, type Tarpit } from '../fakes/tarpit-server.js';

const openai = (url: string) => ({
  kind: 'openai' as const,
  url,
  model: 'm',
  temperature: 0.7,
  top_p: 1,
  max_tokens: 16,
  mode: 'tools' as const,
  timeout_s: 30,
});

describe('policy reachability', () => {
  let server: TestApp;
  let scratch: string;

  beforeAll(async () => {
    server = await startTestApp();
    scratch = mkdtempSync(join(tmpdir(), 'wnw-reach-'));
  });

  afterAll(async () => {
    await server?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('fails the job with one error naming policy.url, and starts no rollout', async () => {
    const port = await closedPort();
    const repo = gitRepo(join(scratch, 'repo'));
    const response = await server.app.inject({
      method: 'POST',
      url: '/solve?wait=true',
      payload: { issue: 'x', repo: { path: repo }, n: 8, policy: { kind: 'openai', url: `http://127.0.0.1:${port}/v1`, model: 'm' } },
    });
    expect(response.statusCode).toBe(200);
    const job = response.json();
    expect(job.status).toBe('failed');
    expect(job.error.code).toBe('WNW_ERR_POLICY_UPSTREAM');
    expect(job.error.message).toContain('body.policy.url');
    expect(job.error.message).toContain(`127.0.0.1:${port}`);
    expect(job.error.message).toContain('ECONNREFUSED');
    // The counters are there from the start: n, and nothing run.
    expect(job.progress).toMatchObject({ rollouts_total: 8, rollouts_running: 0, rollouts_finished: 0, rollouts_failed: 0 });
    // No rollout ran, so none failed on its own.
    expect((await server.store.listCandidates(job.id)).filter((candidate) => candidate.status === 'failed')).toEqual([]);
  });

  it('counts any HTTP answer as reachable, and a refused connection or unknown host as not', async () => {
    const http = createHttpServer((_request, response) => response.writeHead(404).end('not found'));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = http.address() as AddressInfo;
      await expect(checkPolicyReachable(openai(`http://127.0.0.1:${port}/v1`), { field: 'policy.url' })).resolves.toBeUndefined();
    } finally {
      await new Promise((resolve) => http.close(resolve));
    }
    await expect(checkPolicyReachable(openai(`http://127.0.0.1:${await closedPort()}/v1`), { field: 'policy.url' })).rejects.toMatchObject({
      code: 'WNW_ERR_POLICY_UPSTREAM',
      details: { field: 'policy.url' },
    });
    await expect(checkPolicyReachable(openai('http://no-such-host.invalid/v1'), { field: 'policy.url' })).rejects.toMatchObject({
      code: 'WNW_ERR_POLICY_UPSTREAM',
    });
  });
});

describe('policy.timeout_s bounds the whole policy call, the look before the rollouts included', () => {
  let server: TestApp;
  let tarpit: Tarpit;
  let scratch: string;

  beforeAll(async () => {
    server = await startTestApp();
    tarpit = await startTarpit();
    scratch = mkdtempSync(join(tmpdir(), 'wnw-reach-timeout-'));
  });

  afterAll(async () => {
    await server?.close();
    await tarpit?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('a server that accepts the connection and never answers fails the job within the timeout, naming policy.timeout_s', async () => {
    const repo = gitRepo(join(scratch, 'repo'));
    const started = Date.now();
    const response = await server.app.inject({
      method: 'POST',
      url: '/solve?wait=true',
      payload: {
        issue: 'x',
        repo: { path: repo },
        n: 2,
        policy: { kind: 'openai', url: `http://127.0.0.1:${tarpit.port}/v1`, model: 'm', timeout_s: 1 },
      },
    });
    const elapsed = Date.now() - started;
    expect(response.statusCode).toBe(200);
    const job = response.json();
    expect(job.status).toBe('failed');
    expect(job.error.code).toBe('WNW_ERR_POLICY_TIMEOUT');
    expect(job.error.message).toContain('policy.timeout_s');
    expect(tarpit.connections).toBeGreaterThan(0);
    // Timeout 1 s: a generous margin for a loaded machine, far below the 10 s the look alone used to wait.
    expect(elapsed).toBeLessThan(3_000);
    expect((await server.store.listCandidates(job.id)).filter((candidate) => candidate.status === 'failed')).toEqual([]);
  });

  it('the look alone waits no longer than the policy timeout', async () => {
    const started = Date.now();
    await expect(
      checkPolicyReachable({ ...openai(`http://127.0.0.1:${tarpit.port}/v1`), timeout_s: 1 }, { field: 'policy.url' }),
    ).rejects.toMatchObject({ code: 'WNW_ERR_POLICY_TIMEOUT', details: { field: 'policy.timeout_s' } });
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});
