/**
 * `winnower sandbox serve` (src/sandbox/serve) backed by the local bubblewrap provider:
 * - the loop test: winnower's own orchard provider passes the sandbox conformance suite against it;
 * - an SDK-shaped client (test/support/orchard-sdk-client.ts) runs Orchard's basic flow and its
 *   documented error cases against it;
 * - the wire rules of shared/design/orchard-real-behaviour.md §19.1 and the TTL/heartbeat semantics of §10;
 * - the same API mounted in `winnower serve` under a prefix.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPolicyFactory } from '../../src/candidates/policy-factory.js';
import { WinnowerError } from '../../src/errors.js';
import { createLocalProvider } from '../../src/sandbox/providers/local.js';
import { createOrchardProvider } from '../../src/sandbox/providers/orchard.js';
import { orchardEnvApi, type OrchardEnvApiOptions } from '../../src/sandbox/serve/orchard-api.js';
import { sandboxApiKey } from '../../src/sandbox/serve/serve-config.js';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { buildApp } from '../../src/server/app.js';
import { JobManager } from '../../src/solve/job-manager.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import { OrchardSdkClient, SdkHttpError } from '../support/orchard-sdk-client.js';
import { makeContractRepo, runSandboxContract } from './contract.js';
import { bwrapMissing, tempDir } from './local-helpers.js';
import { imageToolsMissing, writeTinyImage } from './local-image-helpers.js';

const KEY = 'serve-test-key';
const quiet = { info: () => undefined, warn: () => undefined };
const repoDir = mkdtempSync(join(tmpdir(), 'wnw-serve-repo-'));
makeContractRepo(repoDir);
const local = createLocalProvider({ logger: quiet });
const servers: FastifyInstance[] = [];

afterAll(async () => {
  for (const server of servers) await server.close();
  await local.close();
  rmSync(repoDir, { recursive: true, force: true });
});

/** `winnower sandbox serve` on a free loopback port, over the local provider with the contract repository. */
async function serve(options: Partial<OrchardEnvApiOptions> = {}): Promise<string> {
  const app = Fastify();
  await app.register(orchardEnvApi, { provider: local, repo: { path: repoDir }, apiKey: KEY, cleanupIntervalMs: 0, ...options });
  await app.listen({ host: '127.0.0.1', port: 0 });
  servers.push(app);
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

async function raw(base: string, method: string, path: string, body?: string, headers: Record<string, string> = { 'x-api-key': KEY }): Promise<{ status: number; text: string; headers: Headers; json: any }> {
  const response = await fetch(base + path, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  return { status: response.status, text, headers: response.headers, json: text ? JSON.parse(text) : undefined };
}

async function httpStatus(promise: Promise<unknown>): Promise<number | string> {
  try {
    await promise;
    return 'no error';
  } catch (error) {
    return error instanceof SdkHttpError ? error.status : String(error);
  }
}

describe.skipIf(bwrapMissing)('winnower sandbox serve over the local provider', () => {
  let base: string;
  beforeAll(async () => {
    base = await serve();
  });

  let contractProvider: SandboxProvider | undefined;
  runSandboxContract({
    name: 'orchard provider → winnower sandbox serve → local',
    create: async (settings) => {
      const make = (): SandboxProvider => createOrchardProvider({ baseUrl: base, apiKey: KEY, workdir: '/workspace', heartbeatIntervalMs: 0, ...settings });
      if (settings) return { provider: make(), spec: { image: 'contract' } };
      contractProvider ??= make();
      return { provider: contractProvider, spec: { image: 'contract' } };
    },
  });

  describe('an SDK-shaped client', () => {
    let sdk: OrchardSdkClient;
    beforeAll(() => {
      sdk = new OrchardSdkClient(base, KEY);
    });
    afterAll(async () => sdk.close());

    it('runs create → exec → files → patch → delete', async () => {
      const id = await sdk.createSandbox('python:3.11-slim', { timeout: 120 });
      const hello = await sdk.exec(id, `python3 -c 'print("hello from", 6 * 7)'`);
      expect(hello).toMatchObject({ status: 'succeeded', exit_code: 0, stdout: 'hello from 42\n', stderr: '', sandbox_id: id });
      expect(await sdk.exec(id, 'echo "$GREETING"; pwd', { env: { GREETING: 'hi there' } })).toMatchObject({ stdout: 'hi there\n/workspace\n' });
      expect(await sdk.exec(id, 'echo oops >&2; exit 3')).toMatchObject({ status: 'failed', exit_code: 3, stderr: 'oops\n' });

      expect(await sdk.writeFile(id, '/workspace/test.txt', 'hello\n')).toEqual({ success: true, path: '/workspace/test.txt', size: 6 });
      const bytes = Uint8Array.from([0, 1, 2, 254, 255]);
      await sdk.writeFile(id, '/tmp/deep/blob.bin', bytes);
      expect(await sdk.readFile(id, '/tmp/deep/blob.bin')).toEqual(Buffer.from(bytes));
      const listed = await sdk.listFiles(id);
      expect(listed.map((file) => file.name)).toEqual(expect.arrayContaining(['README.md', 'src', 'test.txt']));
      expect(listed.find((file) => file.name === 'test.txt')).toMatchObject({ type: 'file', size: 6, modified: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/) });
      expect(listed.find((file) => file.name === 'src')?.type).toBe('directory');

      const patched = await sdk.applyPatch(id, '--- test.txt\n+++ test.txt\n@@ -1 +1 @@\n-hello\n+goodbye\n');
      expect(patched).toMatchObject({ success: true, exit_code: 0, error: null });
      expect((await sdk.readFile(id, '/workspace/test.txt')).toString()).toBe('goodbye\n');
      // A line PATCH_EOF in the patch does not cut it short (Orchard's heredoc would).
      expect(await sdk.applyPatch(id, '--- test.txt\n+++ test.txt\n@@ -1 +1,2 @@\n goodbye\n+PATCH_EOF\n')).toMatchObject({ success: true });
      const failed = await sdk.applyPatch(id, '--- nope.txt\n+++ nope.txt\n@@ -1 +1 @@\n-a\n+b\n');
      expect(failed).toMatchObject({ success: false, exit_code: 1 });
      expect(failed.stderr).toContain('nope.txt');

      expect(await sdk.heartbeat(id)).toEqual({ status: 'ok', sandbox_id: id });
      expect(await sdk.deleteSandbox(id)).toEqual({ status: 'deleted', sandbox_id: id });
      expect(await httpStatus(sdk.request('GET', `/sandboxes/${id}`))).toBe(404);
    });

    it('answers the documented errors: 404 unknown sandbox, job and file; 400 not a file; 401 and 403', async () => {
      expect(await httpStatus(sdk.exec('no-such-sandbox', 'true'))).toBe(404);
      expect(await httpStatus(sdk.request('GET', '/jobs/no-such-job'))).toBe(404);
      const id = await sdk.createSandbox('python:3.11-slim');
      const missing = await sdk.request('GET', `/sandboxes/${id}/files?path=/workspace/nope.txt`).catch((error: SdkHttpError) => error);
      expect(missing).toMatchObject({ status: 404, body: { detail: 'File not found: /workspace/nope.txt' } });
      expect(await sdk.request('GET', `/sandboxes/${id}/files?path=/workspace/src`).catch((error: SdkHttpError) => error)).toMatchObject({ status: 400, body: { detail: 'Not a file: /workspace/src' } });
      expect(await sdk.request('GET', `/sandboxes/${id}/files/list?path=/workspace/nope`).catch((error: SdkHttpError) => error)).toMatchObject({ status: 404, body: { detail: 'Path not found: /workspace/nope' } });
      expect(await httpStatus(new OrchardSdkClient(base, 'wrong').request('GET', `/sandboxes/${id}`))).toBe(403);
      expect(await httpStatus(new OrchardSdkClient(base, undefined).request('GET', `/sandboxes/${id}`))).toBe(401);
      expect(await new OrchardSdkClient(base, undefined).request('GET', '/health')).toEqual({ status: 'healthy' });
      await sdk.deleteSandbox(id);
    });

    it('keeps the sandbox alive after a timeout (124 and the note), quotes list commands, polls wait:false jobs', async () => {
      const id = await sdk.createSandbox('python:3.11-slim');
      const timedOut = await sdk.exec(id, 'echo started; sleep 30', { timeout: 1 });
      expect(timedOut).toMatchObject({ status: 'failed', exit_code: 124, stdout: 'started\n', error: 'Command timed out after 1s' });
      expect(timedOut.stderr).toMatch(/Command timed out after 1s and was killed$/);
      expect((await sdk.exec(id, ['python3', '-c', 'print("hi there")'])).stdout).toBe('hi there\n');
      const queued = await sdk.request('POST', `/sandboxes/${id}/exec`, { command: 'sleep 0.3; echo later' });
      expect(queued).toEqual({ job_id: expect.any(String), status: 'queued' });
      const waited = await sdk.request('GET', `/jobs/${queued.job_id}/wait?timeout=10`);
      expect(waited).toMatchObject({ status: 'succeeded', stdout: 'later\n' });
      await sdk.deleteSandbox(id);
    });

    it('serialises the execs of one sandbox and runs sandboxes side by side (3 sandboxes × 4 execs)', async () => {
      const ids = await Promise.all([1, 2, 3].map(() => sdk.createSandbox('python:3.11-slim')));
      const runs = await Promise.all(ids.map((id) => Promise.all([1, 2, 3, 4].map((n) => sdk.exec(id, `s=$(date +%s%N); sleep 0.1; echo $s $(date +%s%N) ${n}`)))));
      for (const jobs of runs) {
        const spans = jobs.map((job) => job.stdout.trim().split(' ').map(Number)).sort((a, b) => a[0]! - b[0]!);
        for (let index = 1; index < spans.length; index++) expect(spans[index]![0]!).toBeGreaterThanOrEqual(spans[index - 1]![1]!);
      }
      await Promise.all(ids.map((id) => sdk.deleteSandbox(id)));
    });

    it('runs login_shell commands in a login bash, stderr whole', async () => {
      const id = await sdk.createSandbox('python:3.11-slim');
      const job = await sdk.exec(id, `shopt -q login_shell && echo login; python3 -c 'raise ValueError("boom")'`, { loginShell: true });
      expect(job.stdout).toBe('login\n');
      expect(job.stderr).toMatch(/^Traceback \(most recent call last\):\n[^]*ValueError: boom\n$/);
      await sdk.deleteSandbox(id);
    });
  });

  describe('wire rules', () => {
    it('compact JSON with application/json and X-Request-ID on every answer, DELETE included', async () => {
      const created = await raw(base, 'POST', '/sandboxes', '{"image":"python:3.11-slim"}', { 'x-api-key': KEY, 'content-type': 'application/json' });
      expect(created.text).toMatch(/"sandbox_id":"sbx-[0-9a-f]{12}"/);
      expect(created.json).toMatchObject({ status: 'pending', block_network: true, namespace: 'winnower', timeout: 3600 });
      const id = created.json.sandbox_id as string;
      await raw(base, 'GET', `/sandboxes/${id}/wait?timeout=60`);
      const job = await raw(base, 'POST', `/sandboxes/${id}/exec`, '{"command":"echo hi"}');
      expect(job.text).toMatch(/"job_id":"[0-9a-f-]{36}"/);
      const deleted = await raw(base, 'DELETE', `/sandboxes/${id}`);
      expect(deleted.headers.get('content-type')).toMatch(/^application\/json/);
      expect(deleted.headers.get('x-request-id')).toBeTruthy();
      expect((await raw(base, 'DELETE', '/sandboxes/never-was')).json).toEqual({ status: 'deleted', sandbox_id: 'never-was' });
      expect((await raw(base, 'GET', '/nope')).json).toEqual({ detail: 'Not Found' });
    });

    it('422 in pydantic shape for a missing image, a fractional timeout or a bad sandbox id; a body without content type is JSON too', async () => {
      const missing = await raw(base, 'POST', '/sandboxes', '{}', { 'x-api-key': KEY, 'content-type': 'application/json' });
      expect(missing).toMatchObject({ status: 422, json: { detail: [{ type: 'missing', loc: ['body', 'image'], msg: 'Field required' }] } });
      expect((await raw(base, 'POST', '/sandboxes', '{"image":"x","timeout":1.5}')).json.detail[0].loc).toEqual(['body', 'timeout']);
      expect((await raw(base, 'POST', '/sandboxes', '{"image":"x","sandbox_id":"Bad_Id"}')).status).toBe(422);
      expect((await raw(base, 'POST', '/sandboxes', '{not json')).status).toBe(422);
    });

    it('refuses network access unless allowed, and duplicate ids', async () => {
      expect(await raw(base, 'POST', '/sandboxes', '{"image":"x","block_network":false}')).toMatchObject({ status: 403, json: { detail: expect.stringContaining('Network access is disabled') } });
      const first = await raw(base, 'POST', '/sandboxes', '{"image":"x","sandbox_id":"twice"}');
      expect(first.status).toBe(200);
      expect((await raw(base, 'POST', '/sandboxes', '{"image":"x","sandbox_id":"twice"}')).status).toBe(409);
      await raw(base, 'DELETE', '/sandboxes/twice');
    });

    it('a full server answers 503 with Retry-After', async () => {
      const small = await serve({ maxSandboxes: 1 });
      expect((await raw(small, 'POST', '/sandboxes', '{"image":"x"}')).status).toBe(200);
      const full = await raw(small, 'POST', '/sandboxes', '{"image":"x"}');
      expect(full).toMatchObject({ status: 503, json: { detail: expect.stringContaining('capacity') } });
      expect(full.headers.get('retry-after')).toBe('5');
    });

    it('408 from /wait while a sandbox is still starting; the SDK then deletes it', async () => {
      let release = (): void => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const slow: SandboxProvider = { name: 'slow', describe: () => local.describe(), close: async () => undefined, create: async (spec, options) => (await gate, local.create(spec, options)) };
      const slowBase = await serve({ provider: slow });
      const sdk = new OrchardSdkClient(slowBase, KEY);
      await expect(sdk.createSandbox('python:3.11-slim', { timeout: 1 })).rejects.toThrow(/TimeoutError/);
      expect(sdk.sent.at(-1)).toMatch(/^DELETE \/sandboxes\//);
      release();
    });
  });

  describe('TTL and heartbeats (Orchard semantics)', () => {
    it('a sandbox that sent a heartbeat is reaped after a gap; one that never did lives until the TTL', async () => {
      // The TTL leaves room for two creates and the heartbeat reaping on a loaded machine.
      const reaping = await serve({ heartbeatTimeoutS: 0.3, ttlS: 8, cleanupIntervalMs: 100 });
      const sdk = new OrchardSdkClient(reaping, KEY);
      const beating = await sdk.createSandbox('x');
      const silent = await sdk.createSandbox('x');
      await sdk.heartbeat(beating);
      await expect.poll(async () => httpStatus(sdk.request('GET', `/sandboxes/${beating}`)), { timeout: 5_000 }).toBe(404);
      expect(await httpStatus(sdk.request('GET', `/sandboxes/${silent}`))).toBe('no error');
      await expect.poll(async () => httpStatus(sdk.request('GET', `/sandboxes/${silent}`)), { timeout: 20_000, interval: 250 }).toBe(404);
      expect(await httpStatus(sdk.exec(silent, 'true'))).toBe(404);
    }, 30_000);
  });

  describe('mounted in winnower serve', () => {
    it('serves the same API under the prefix, with its own auth and error shape', async () => {
      const store = createSqliteStore(':memory:');
      const app = await buildApp({
        jobs: new JobManager(store),
        store,
        solveDeps: { sandboxes: local, scorer: undefined, store, createPolicy: createPolicyFactory() },
        sandboxApi: { prefix: '/orchard', options: { provider: local, repo: { path: repoDir }, apiKey: KEY, cleanupIntervalMs: 0 } },
      });
      try {
        expect((await app.inject({ method: 'GET', url: '/orchard/health' })).json()).toEqual({ status: 'healthy' });
        expect((await app.inject({ method: 'POST', url: '/orchard/sandboxes', payload: { image: 'x' } })).statusCode).toBe(401);
        const created = await app.inject({ method: 'POST', url: '/orchard/sandboxes', headers: { 'x-api-key': KEY }, payload: { image: 'x' } });
        const id = created.json().sandbox_id as string;
        expect((await app.inject({ method: 'GET', url: `/orchard/sandboxes/${id}/wait?timeout=60`, headers: { 'x-api-key': KEY } })).json()).toMatchObject({ status: 'ready' });
        const job = await app.inject({ method: 'POST', url: `/orchard/sandboxes/${id}/exec`, headers: { 'x-api-key': KEY }, payload: { command: 'head -1 README.md', wait: true } });
        expect(job.json()).toMatchObject({ status: 'succeeded', stdout: '# contract\n' });
        expect((await app.inject({ method: 'GET', url: '/orchard/sandboxes/nope', headers: { 'x-api-key': KEY } })).json()).toEqual({ detail: 'Sandbox nope not found' });
        // The rest of the server keeps its own shape.
        expect((await app.inject({ method: 'GET', url: '/nope' })).json()).toHaveProperty('error');
      } finally {
        await app.close();
        store.close();
      }
    });
  });
});

const imagesMissing = bwrapMissing ?? imageToolsMissing;
describe.skipIf(imagesMissing)(`[images] winnower sandbox serve without --repo: a create's image is that image on the provider${imagesMissing ? ` (skipped: ${imagesMissing})` : ''}`, () => {
  const scratch = tempDir('wnw-serve-image-');
  chmodSync(scratch.dir, 0o711);
  const image = imagesMissing ? undefined : writeTinyImage(join(scratch.dir, 'image'));
  const withImages = createLocalProvider({ logger: quiet, imageCacheDir: join(scratch.dir, 'cache') });
  afterAll(async () => {
    await withImages.close();
    scratch.remove();
  });

  it('starts the sandbox from the image and runs in its workdir; an image that cannot be had fails the sandbox with the reason', async () => {
    const base = await serve({ provider: withImages, repo: undefined });
    const sdk = new OrchardSdkClient(base, KEY);
    try {
      const id = await sdk.createSandbox(image!.reference, { timeout: 300 });
      expect(await sdk.exec(id, 'pwd; git rev-parse HEAD')).toMatchObject({ exit_code: 0, stdout: `/testbed\n${image!.baseCommit}\n` });
      await expect(sdk.createSandbox(`oci:${join(scratch.dir, 'nowhere')}:v1`)).rejects.toThrow(/RuntimeError: WNW_ERR_SBX_/);
    } finally {
      await sdk.close();
    }
  }, 120_000);
});

describe('winnower sandbox serve: the key', () => {
  it('refuses to listen beyond loopback without an API key', () => {
    expect(() => sandboxApiKey(undefined, '0.0.0.0', {})).toThrow(WinnowerError);
    expect(() => sandboxApiKey(undefined, '0.0.0.0', {})).toThrow(/SANDBOX_API_KEY/);
    expect(sandboxApiKey(undefined, '127.0.0.1', {})).toBeUndefined();
    expect(sandboxApiKey(undefined, '0.0.0.0', { SANDBOX_API_KEY: 'k' })).toBe('k');
    expect(sandboxApiKey({ api_key: 'from-config' }, '0.0.0.0', { SANDBOX_API_KEY: 'k' })).toBe('from-config');
  });
});
