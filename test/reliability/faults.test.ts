/**
 * Faults: the scorer down, slow or answering garbage; a policy server that drops every
 * connection; sandboxes that cannot be created; the server killed with SIGKILL mid-job and
 * started again. Each ends in a clear error or a degraded result that says so, never a hang or a
 * crash, and no finished result is lost.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { prepareDemoRepo } from '../../src/cli/demo-repo.js';
import { demoDir } from '../../src/cli/demo-task.js';
import { loadValueModel, type ValueModel } from '../../src/scoring/value-model.js';
import { startFakePolicy, type FakePolicyServer } from '../fakes/fake-policy.js';
import { startFakeVllm, type FakeVllm } from '../fakes/fake-vllm.js';
import { gitRepo } from '../server/git-repo.js';
import { startTestApp, type TestApp } from '../server/test-app.js';
import { demoRecordings, hasBubblewrap, solveBody } from '../solve/helpers.js';
import { REPO_ROOT } from '../support/shared-data.js';
import { FakeProvider } from '../verify/fake-sandbox.js';
import { closedPort } from '../support/ports.js';

const task = { instance_id: 'demo__demo-1', problem_statement: 'x should be 2' };
const candidates = ['a', 'b'].map((id) => ({
  id,
  patch: `diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = ${id}\n`,
}));

describe('scorer faults', () => {
  let vllm: FakeVllm;
  let valueModel: ValueModel;
  let server: TestApp;
  beforeAll(async () => {
    vllm = await startFakeVllm();
    valueModel = await loadValueModel({
      backend: 'vllm',
      model: vllm.model,
      urls: [vllm.url],
      retries: 0,
      timeoutMs: 1500,
      cacheEntries: 0,
      batching: false,
    });
    server = await startTestApp({ valueModel });
  });
  afterAll(async () => {
    await server?.close();
    await valueModel?.scorer.close();
    await vllm?.close();
  });
  afterEach(() => {
    vllm.faults.length = 0;
    vllm.delayMs = 0;
  });

  const score = (path: '/score' | '/rerank') => server.app.inject({ method: 'POST', url: path, payload: { task, candidates } });

  it('scores normally first (the baseline the faults depart from)', async () => {
    const response = await score('/score');
    expect(response.statusCode).toBe(200);
    expect(response.json().scores.every((entry: { value?: number }) => typeof entry.value === 'number')).toBe(true);
  });

  it('garbage from the scorer: each candidate names WNW_ERR_SCORE_RESPONSE, /rerank degrades to consensus and says so, then recovers', async () => {
    vllm.malformed(2, '{"data": [ {"index": 0, "probs": "not a list"');
    const scored = (await score('/score')).json();
    expect(scored.scores.map((entry: { error?: { code: string } }) => entry.error?.code)).toEqual([
      'WNW_ERR_SCORE_RESPONSE',
      'WNW_ERR_SCORE_RESPONSE',
    ]);
    const reranked = await score('/rerank');
    expect(reranked.statusCode).toBe(200);
    expect(reranked.json().selection).toMatchObject({ degraded_to: 'consensus', chosen: expect.any(String) });
    expect(reranked.json().selection.reason).toMatch(/No candidate had a score/);
    expect((await score('/score')).json().scores[0].value).toEqual(expect.any(Number));
  });

  it('a slow scorer: past the deadline each candidate names WNW_ERR_SCORE_TIMEOUT, and the request still answers', async () => {
    vllm.delayMs = 5000;
    const response = await score('/score');
    expect(response.statusCode).toBe(200);
    expect(response.json().scores.map((entry: { error?: { code: string } }) => entry.error?.code)).toEqual([
      'WNW_ERR_SCORE_TIMEOUT',
      'WNW_ERR_SCORE_TIMEOUT',
    ]);
  });

  it('the scorer down: WNW_ERR_SCORE_UPSTREAM naming the address, a degraded /rerank, /readyz 503 naming the scorer, then /score 503 at once', async () => {
    const down = await startFakeVllm();
    const address = down.url;
    await down.close();
    const dead = await loadValueModel({
      backend: 'vllm',
      model: down.model,
      urls: [address],
      retries: 0,
      timeoutMs: 1500,
      cacheEntries: 0,
    });
    const other = await startTestApp({ valueModel: dead });
    try {
      const scored = (await other.app.inject({ method: 'POST', url: '/score', payload: { task, candidates } })).json();
      expect(scored.scores[0].error).toMatchObject({ code: 'WNW_ERR_SCORE_UPSTREAM', message: expect.stringContaining('ECONNREFUSED') });
      const reranked = (await other.app.inject({ method: 'POST', url: '/rerank', payload: { task, candidates } })).json();
      expect(reranked.selection.degraded_to).toBe('consensus');
      expect(reranked.chosen_patch).toContain('diff --git');
      // Readiness probes the scorer (issue 18 item 11): a load balancer stops sending this instance work.
      const ready = await other.app.inject('/readyz');
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toMatchObject({
        status: 'scorer-unavailable',
        scorer: { ok: false, error: { code: 'WNW_ERR_SCORE_UPSTREAM' } },
      });
      const again = await other.app.inject({ method: 'POST', url: '/score', payload: { task, candidates } });
      expect(again.statusCode).toBe(503);
      expect(again.json().error.code).toBe('WNW_ERR_SCORE_UNAVAILABLE');
    } finally {
      await other.close();
      await dead.scorer.close();
    }
  });
});

describe('policy and sandbox faults in a /solve job', () => {
  let root: string;
  let repo: string;
  let dropper: Server;
  let dropperUrl: string;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'wnw-faults-'));
    repo = gitRepo(join(root, 'repo'));
    // A "policy server" that accepts each connection's request and drops the connection unanswered.
    dropper = createServer((incoming) => incoming.socket.destroy());
    await new Promise<void>((resolve) => dropper.listen(0, '127.0.0.1', resolve));
    dropperUrl = `http://127.0.0.1:${(dropper.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => dropper.close(() => resolve()));
    rmSync(root, { recursive: true, force: true });
  });

  const body = (policyUrl: string) => ({
    issue: 'x should be 2',
    repo: { path: repo },
    n: 2,
    verify: { enabled: false },
    scoring: { enabled: false },
    policy: { kind: 'openai', url: policyUrl, model: 'm', timeout_s: 20 },
  });

  it('a policy server dropping connections: the job ends, each candidate failed with WNW_ERR_POLICY_UPSTREAM naming the reset', async () => {
    const server = await startTestApp({ sandboxes: new FakeProvider() });
    try {
      const response = await server.app.inject({ method: 'POST', url: '/solve?wait=true', payload: body(dropperUrl) });
      expect(response.statusCode, response.body.slice(0, 500)).toBe(200);
      const job = response.json();
      expect(['succeeded', 'failed']).toContain(job.status);
      expect(job.candidates).toHaveLength(2);
      for (const candidate of job.candidates) {
        expect(candidate.status).toBe('failed');
        expect(candidate.error.code).toBe('WNW_ERR_POLICY_UPSTREAM');
        expect(candidate.error.message).toMatch(/socket|reset|closed|ECONNRESET/i);
      }
      expect((await server.app.inject('/healthz')).statusCode).toBe(200);
    } finally {
      await server.close();
    }
  }, 60_000);

  it('sandboxes that cannot be created: each candidate failed with WNW_ERR_SBX_CREATE, nothing left open', async () => {
    const provider = new FakeProvider({ failCreate: () => true });
    const server = await startTestApp({ sandboxes: provider });
    const policy = await startFakePolicy({ scripts: { m: [{ commands: ['echo hi'] }, { commands: ['echo hi'] }] } });
    try {
      const response = await server.app.inject({ method: 'POST', url: '/solve?wait=true', payload: body(policy.url) });
      const job = response.json();
      expect(
        job.candidates.map((candidate: { status: string; error: { code: string } }) => [candidate.status, candidate.error.code]),
      ).toEqual([
        ['failed', 'WNW_ERR_SBX_CREATE'],
        ['failed', 'WNW_ERR_SBX_CREATE'],
      ]);
      expect(job.result?.chosen ?? null).toBeNull();
      expect(provider.openCount).toBe(0);
      expect(policy.requests).toHaveLength(0);
    } finally {
      await policy.close();
      await server.close();
    }
  }, 60_000);
});

/**
 * `winnower serve` in a child process on `config`, ready when /readyz answers. Node itself with
 * tsx's loader, not the tsx command: that one runs the server in a grandchild, which a SIGKILL
 * to the child would leave running.
 */
async function serve(configFile: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'src/cli/main.ts'), 'serve', '--config', configFile], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, WINNOWER_CONFIG: '' },
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  for (let attempt = 0; attempt < 300; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}: ${stderr}`);
    const ready = await request(`http://127.0.0.1:${port}/readyz`).then(
      (response) => response.body.dump().then(() => response.statusCode),
      () => 0,
    );
    if (ready === 200) return child;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`server not ready: ${stderr}`);
}

describe.skipIf(!hasBubblewrap())('SIGKILL mid-job, then a restart', () => {
  let dir: string;
  let repo: string;
  let policy: FakePolicyServer;
  let child: ChildProcess | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wnw-crash-'));
    repo = prepareDemoRepo(join(demoDir(), 'repo'));
    // Every turn takes a minute: the job is surely still running when the server is killed.
    policy = await startFakePolicy({ scripts: { slow: [{ commands: ['sleep 1'] }, { commands: ['sleep 1'] }] }, delayMs: 60_000 });
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await policy?.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(dirname(repo), { recursive: true, force: true });
  });

  it('keeps the finished job exactly, records the running one as interrupted with what it had, and serves again', async () => {
    const port = await closedPort();
    const base = `http://127.0.0.1:${port}`;
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ server: { port, data_dir: join(dir, 'data') }, log_level: 'warn', log_format: 'json' }));
    const call = async (method: 'GET' | 'POST', path: string, payload?: unknown) => {
      const response = await request(`${base}${path}`, {
        method,
        ...(payload ? { body: JSON.stringify(payload), headers: { 'content-type': 'application/json' } } : {}),
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      return { status: response.statusCode, json: (await response.body.json()) as any };
    };
    child = await serve(config, port);
    const finished = await call(
      'POST',
      '/solve?wait=true',
      solveBody(repo, { n: 1, policy: { kind: 'replay', recordings: [demoRecordings()['correct-fix']] }, verify: { enabled: false } }),
    );
    expect(finished.json.status, JSON.stringify(finished.json).slice(0, 500)).toBe('succeeded');
    const before = (await call('GET', `/jobs/${finished.json.job_id}`)).json;

    const started = await call(
      'POST',
      '/solve',
      solveBody(repo, { n: 2, policy: { kind: 'openai', url: policy.url, model: 'slow' }, verify: { enabled: false } }),
    );
    expect(started.status).toBe(202);
    const running = started.json.job_id as string;
    for (let attempt = 0; attempt < 300 && policy.requests.filter((body) => body.model === 'slow').length < 2; attempt += 1)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await call('GET', `/jobs/${running}`)).json.status).toBe('running');

    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    child = await serve(config, port);

    const after = (await call('GET', `/jobs/${finished.json.job_id}`)).json;
    expect(after).toEqual(before);
    const interrupted = (await call('GET', `/jobs/${running}`)).json;
    expect(interrupted.status).toBe('interrupted');
    expect(interrupted.error.message).toMatch(/server stopped/);
    expect(interrupted.candidates).toHaveLength(2);
    for (const candidate of interrupted.candidates)
      expect(candidate).toMatchObject({ status: 'cancelled', error: { message: expect.stringMatching(/restart/) } });
    const listed = (await call('GET', '/jobs?status=interrupted')).json;
    expect(listed.jobs.map((job: { job_id: string }) => job.job_id)).toEqual([running]);
    // And it takes work again.
    const again = await call(
      'POST',
      '/solve?wait=true',
      solveBody(repo, { n: 1, policy: { kind: 'replay', recordings: [demoRecordings()['correct-fix']] }, verify: { enabled: false } }),
    );
    expect(again.json.status).toBe('succeeded');
  }, 120_000);
});
