/**
 * `winnower sandbox serve` (src/sandbox/serve) backed by the local bubblewrap provider:
 * - the loop test: winnower's own orchard provider passes the sandbox conformance suite against it;
 * - doubles of Orchard's sync and async SDK clients (test/support/orchard-sdk-client.ts) run every
 *   call shape of docs/design/01-orchard-env-api.md#3 against it, JSON nulls (#9) included, and its
 *   documented error cases;
 * - the wire rules of docs/design/01-orchard-env-api.md#7 and the TTL/heartbeat semantics of
 *   docs/design/02-orchard-real-behaviour.md#10;
 * - the same API mounted in `winnower serve` under a prefix.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPolicyFactory } from '../../src/rollout/policy/policy-factory.js';
import { WinnowerError } from '../../src/errors.js';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import { createOrchardProvider } from '../../src/sandbox/providers/orchard/provider.js';
import { orchardEnvApi, type OrchardEnvApiOptions } from '../../src/sandbox/serve/plugin.js';
import { sandboxApiKey } from '../../src/sandbox/serve/serve-config.js';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { buildApp } from '../../src/server/app.js';
import { JobManager } from '../../src/solve/job-manager.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import { AsyncOrchardSdkClient, OrchardSdkClient, SdkHttpError } from '../support/orchard-sdk-client.js';
import { PtyProcess } from '../support/orchard-pty-client.js';
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

/**
 * `winnower sandbox serve` on a free loopback port, over the local provider with the contract
 * repository for every sandbox (`repoMode: 'always'`: no image pull, whatever the network).
 */
async function serve(options: Partial<OrchardEnvApiOptions> = {}): Promise<string> {
  const app = Fastify();
  await app.register(orchardEnvApi, {
    provider: local,
    repo: { path: repoDir },
    repoMode: 'always',
    apiKey: KEY,
    cleanupIntervalMs: 0,
    ...options,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  servers.push(app);
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

async function raw(
  base: string,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = { 'x-api-key': KEY },
): Promise<{ status: number; text: string; headers: Headers; json: any }> {
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
      const make = (): SandboxProvider =>
        createOrchardProvider({ baseUrl: base, apiKey: KEY, workdir: '/workspace', heartbeatIntervalMs: 0, ...settings });
      if (settings) return { provider: make(), spec: { image: 'contract' } };
      contractProvider ??= make();
      return { provider: contractProvider, spec: { image: 'contract' } };
    },
  });

  describe.each([
    ['SandboxClient', OrchardSdkClient],
    ['AsyncSandboxClient', AsyncOrchardSdkClient],
  ] as const)('Orchard SDK call shapes: %s', (name, Client) => {
    let sdk: OrchardSdkClient | AsyncOrchardSdkClient;
    beforeAll(() => {
      sdk = new Client(base, KEY);
    });
    afterAll(async () => sdk.close());

    it('health; create sends image and block_network only, then waits with the answered timeout', async () => {
      expect(await sdk.health()).toEqual({ status: 'healthy' });
      const sandbox = await sdk.createSandbox('python:3.11-slim');
      expect(sdk.bodies.at(-1)).toEqual({ path: '/sandboxes', text: '{"image":"python:3.11-slim","block_network":true}' });
      expect(sdk.sent.at(-1)).toBe(`GET /sandboxes/${sandbox.sandboxId}/wait?timeout=3600`);
      expect(sandbox).toMatchObject({ namespace: 'winnower', image: 'python:3.11-slim', blockNetwork: true });
      await sandbox.delete();
    });

    it('create with sandbox_id, cpu, memory and timeout: cpu and memory echoed as given', async () => {
      const id = `given-${name.toLowerCase()}`;
      const sandbox = await sdk.createSandbox('python:3.11-slim', { sandboxId: id, cpu: '2000m', memory: '512Mi', timeout: 120 });
      expect(sandbox.sandboxId).toBe(id);
      expect(sdk.sent).toContain(`GET /sandboxes/${id}/wait?timeout=120`);
      expect(await sdk.getSandbox(id)).toMatchObject({ sandboxId: id, image: 'python:3.11-slim' });
      expect(await sdk.request('GET', `/sandboxes/${id}`)).toMatchObject({ cpu: '2000m', memory: '512Mi', ready: true, status: 'ready' });
      await sandbox.delete();
    });

    it('exec sends timeout_seconds, cwd and env as null when unset, with wait:true, and gets the finished job', async () => {
      const sandbox = await sdk.createSandbox('python:3.11-slim');
      const job = await sandbox.exec('echo hi; pwd');
      expect(sdk.bodies.at(-1)?.text).toBe(
        '{"command":"echo hi; pwd","timeout_seconds":null,"cwd":null,"env":null,"login_shell":false,"wait":true}',
      );
      expect(job).toMatchObject({
        status: 'succeeded',
        exit_code: 0,
        stdout: 'hi\n/workspace\n',
        stderr: '',
        sandbox_id: sandbox.sandboxId,
        error: null,
      });
      expect(sdk.sent.filter((line) => line.endsWith('/exec'))).toHaveLength(1);
      expect(await sandbox.exec('echo oops >&2; exit 3')).toMatchObject({ status: 'failed', exit_code: 3, stderr: 'oops\n' });
      await sandbox.delete();
    });

    it('exec with timeout, cwd, env, login_shell and a list command', async () => {
      const sandbox = await sdk.createSandbox('python:3.11-slim');
      expect(await sandbox.exec('echo "$GREETING"; pwd', { env: { GREETING: 'hi there' }, cwd: '/tmp', timeout: 30 })).toMatchObject({
        stdout: 'hi there\n/tmp\n',
      });
      expect(JSON.parse(sdk.bodies.at(-1)!.text)).toEqual({
        command: 'echo "$GREETING"; pwd',
        timeout_seconds: 30,
        cwd: '/tmp',
        env: { GREETING: 'hi there' },
        login_shell: false,
        wait: true,
      });
      const login = await sandbox.exec(`shopt -q login_shell && echo login; python3 -c 'raise ValueError("boom")'`, { loginShell: true });
      expect(login.stdout).toBe('login\n');
      expect(login.stderr).toMatch(/^Traceback \(most recent call last\):\n[^]*ValueError: boom\n$/);
      expect((await sandbox.exec(['python3', '-c', 'print("hi there")'])).stdout).toBe('hi there\n');
      const timedOut = await sandbox.exec('echo started; sleep 30', { timeout: 1 });
      expect(timedOut).toMatchObject({ status: 'failed', exit_code: 124, stdout: 'started\n', error: 'Command timed out after 1s' });
      expect((await sandbox.exec('echo alive')).stdout).toBe('alive\n');
      await sandbox.delete();
    });

    it("a death by signal N is exit code −N, as Orchard's agent answers; an exit status of 137 is 137", async () => {
      const sandbox = await sdk.createSandbox('python:3.11-slim');
      expect(await sandbox.exec('echo before; kill -9 $$')).toMatchObject({
        status: 'failed',
        exit_code: -9,
        stdout: 'before\n',
        error: null,
      });
      expect(await sandbox.exec('kill -TERM $$')).toMatchObject({ status: 'failed', exit_code: -15 });
      // The shell's own status after a child's death, or an explicit one, is an exit, not a signal.
      expect(await sandbox.exec('exit 137')).toMatchObject({ status: 'failed', exit_code: 137 });
      expect(await sandbox.exec(`sh -c 'kill -9 $$'; exit $?`)).toMatchObject({ exit_code: 137 });
      await sandbox.delete();
    });

    it('exec(wait=False) still POSTs wait:true first and returns the finished job', async () => {
      const sandbox = await sdk.createSandbox('python:3.11-slim');
      const job = await sandbox.exec('echo later', { wait: false });
      expect(JSON.parse(sdk.bodies.at(-1)!.text)).toMatchObject({ wait: true, timeout_seconds: null });
      expect(job).toMatchObject({ status: 'succeeded', stdout: 'later\n' });
      await sandbox.delete();
    });

    it('after an error on the wait:true POST, POSTs again without wait (nulls kept) and polls GET /jobs every 0.1 s', async () => {
      let failed = false;
      const flaky = new Client(base, KEY, {
        fault: (method, path, body) => {
          if (failed || method !== 'POST' || !path.endsWith('/exec') || (body as { wait?: boolean }).wait !== true) return undefined;
          failed = true;
          return new Error('ReadTimeout');
        },
      });
      try {
        const sandbox = await flaky.createSandbox('python:3.11-slim');
        const job = await sandbox.exec('sleep 0.5; echo polled');
        expect(job).toMatchObject({ status: 'succeeded', stdout: 'polled\n' });
        expect(flaky.bodies.at(-1)?.text).toBe(
          '{"command":"sleep 0.5; echo polled","timeout_seconds":null,"cwd":null,"env":null,"login_shell":false}',
        );
        expect(flaky.sent.filter((line) => line.startsWith('GET /jobs/')).length).toBeGreaterThanOrEqual(2);
        // wait=False through the fallback: the queued JobResult the SDK builds itself, then GET /jobs.
        failed = false;
        const queued = await sandbox.exec('echo queued', { wait: false });
        expect(queued).toMatchObject({ status: 'queued', command: 'echo queued', sandbox_id: sandbox.sandboxId });
        await expect.poll(async () => (await sandbox.getJob(queued.job_id)).status, { timeout: 20_000 }).toBe('succeeded');
      } finally {
        await flaky.close();
      }
    });

    it('upload_content, download_content and list_files (default /)', async () => {
      const sandbox = await sdk.createSandbox('python:3.11-slim');
      expect(await sandbox.uploadContent('hello\n', '/workspace/test.txt')).toEqual({
        success: true,
        path: '/workspace/test.txt',
        size: 6,
      });
      const bytes = Uint8Array.from([0, 1, 2, 254, 255]);
      await sandbox.uploadContent(bytes, '/tmp/deep/blob bin');
      expect(sdk.sent.at(-1)).toBe(`POST /sandboxes/${sandbox.sandboxId}/files`);
      expect(await sandbox.downloadContent('/tmp/deep/blob bin')).toEqual(Buffer.from(bytes));
      expect(sdk.sent.at(-1)).toBe(`GET /sandboxes/${sandbox.sandboxId}/files?path=%2Ftmp%2Fdeep%2Fblob+bin`);
      expect((await sandbox.listFiles()).map((file) => file.name)).toEqual(expect.arrayContaining(['tmp', 'usr', 'workspace']));
      const listed = await sandbox.listFiles('/workspace');
      expect(listed.map((file) => file.name)).toEqual(expect.arrayContaining(['README.md', 'src', 'test.txt']));
      expect(listed.find((file) => file.name === 'test.txt')).toMatchObject({
        type: 'file',
        size: 6,
        modified: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/),
      });
      const missing = await sandbox.downloadContent('/workspace/nope.txt').catch((error: SdkHttpError) => error);
      expect(missing).toMatchObject({ status: 404, body: { detail: 'File not found: /workspace/nope.txt' } });
      await sandbox.delete();
    });

    it('apply_patch in /workspace with bare headers; a PATCH_EOF line does not cut it short', async () => {
      const sandbox = await sdk.createSandbox('python:3.11-slim');
      await sandbox.uploadContent('hello\n', '/workspace/test.txt');
      expect(await sandbox.applyPatch('--- test.txt\n+++ test.txt\n@@ -1 +1 @@\n-hello\n+goodbye\n')).toMatchObject({
        success: true,
        exit_code: 0,
        error: null,
      });
      expect(sdk.bodies.at(-1)?.text).toMatch(/"timeout_seconds":30\}$/);
      expect((await sandbox.downloadContent('/workspace/test.txt')).toString()).toBe('goodbye\n');
      expect(await sandbox.applyPatch('--- test.txt\n+++ test.txt\n@@ -1 +1,2 @@\n goodbye\n+PATCH_EOF\n')).toMatchObject({
        success: true,
      });
      const failed = await sandbox.applyPatch('--- nope.txt\n+++ nope.txt\n@@ -1 +1 @@\n-a\n+b\n');
      expect(failed).toMatchObject({ success: false, exit_code: 1 });
      expect(failed.stderr).toContain('nope.txt');
      await sandbox.delete();
    });

    it('heartbeat, delete, and DELETE of every tracked sandbox at exit (a reaped one still answers deleted)', async () => {
      const client = new Client(base, KEY);
      const sandbox = await client.createSandbox('python:3.11-slim');
      const other = await client.createSandbox('python:3.11-slim');
      await sandbox.heartbeat();
      expect(client.sent.at(-1)).toBe(`POST /sandboxes/${sandbox.sandboxId}/heartbeat`);
      await sandbox.delete();
      expect(sandbox.deleted).toBe(true);
      await expect(sandbox.exec('true')).rejects.toThrow(/Sandbox has been deleted/);
      expect(await httpStatus(client.request('GET', `/sandboxes/${sandbox.sandboxId}`))).toBe(404);
      // The SDK's `with` block DELETEs a sandbox the server may already have removed: still 200.
      expect(await client.request('DELETE', `/sandboxes/${sandbox.sandboxId}`)).toEqual({
        status: 'deleted',
        sandbox_id: sandbox.sandboxId,
      });
      await client.close();
      expect(client.sent.at(-1)).toBe(`DELETE /sandboxes/${other.sandboxId}`);
      expect(await httpStatus(client.request('GET', `/sandboxes/${other.sandboxId}`))).toBe(404);
    });

    it('serialises the execs of one sandbox and runs sandboxes side by side (3 sandboxes × 4 execs)', async () => {
      const sandboxes = await Promise.all([1, 2, 3].map(() => sdk.createSandbox('python:3.11-slim')));
      const runs = await Promise.all(
        sandboxes.map((sandbox) =>
          Promise.all([1, 2, 3, 4].map((n) => sandbox.exec(`s=$(date +%s%N); sleep 0.1; echo $s $(date +%s%N) ${n}`))),
        ),
      );
      for (const jobs of runs) {
        const spans = jobs.map((job) => job.stdout.trim().split(' ').map(Number)).sort((a, b) => a[0]! - b[0]!);
        for (let index = 1; index < spans.length; index++) expect(spans[index]![0]!).toBeGreaterThanOrEqual(spans[index - 1]![1]!);
      }
      await Promise.all(sandboxes.map((sandbox) => sandbox.delete()));
    });

    it('answers the documented errors: 404 unknown sandbox and job; 400 not a file; 401 and 403', async () => {
      const sandbox = await sdk.createSandbox('python:3.11-slim');
      expect(await httpStatus(sdk.request('POST', '/sandboxes/no-such-sandbox/exec', { json: { command: 'true', wait: true } }))).toBe(404);
      expect(await httpStatus(sandbox.getJob('no-such-job'))).toBe(404);
      expect(
        await sdk
          .request('GET', `/sandboxes/${sandbox.sandboxId}/files`, { params: { path: '/workspace/src' } })
          .catch((error: SdkHttpError) => error),
      ).toMatchObject({ status: 400, body: { detail: 'Not a file: /workspace/src' } });
      expect(await sandbox.listFiles('/workspace/nope').catch((error: SdkHttpError) => error)).toMatchObject({
        status: 404,
        body: { detail: 'Path not found: /workspace/nope' },
      });
      expect(await httpStatus(new Client(base, 'wrong').request('GET', `/sandboxes/${sandbox.sandboxId}`))).toBe(403);
      expect(await httpStatus(new Client(base, undefined).request('GET', `/sandboxes/${sandbox.sandboxId}`))).toBe(401);
      expect(await new Client(base, undefined).health()).toEqual({ status: 'healthy' });
      await sandbox.delete();
    });
  });

  it("winnower's own API keeps the shell's 128 + N for a death by signal, directly and through its orchard provider over serve", async () => {
    const sandbox = await local.create({ repo: { path: repoDir } });
    try {
      expect(await sandbox.exec('kill -9 $$')).toMatchObject({ exitCode: 137, signal: 9 });
      const exited = await sandbox.exec('exit 137');
      expect(exited.exitCode).toBe(137);
      expect(exited.signal).toBeUndefined();
    } finally {
      await sandbox.close();
    }
    const provider = createOrchardProvider({ baseUrl: base, apiKey: KEY, workdir: '/workspace', heartbeatIntervalMs: 0 });
    const remote = await provider.create({ image: 'contract' });
    try {
      expect((await remote.exec('kill -9 $$')).exitCode).toBe(137);
    } finally {
      await remote.close();
      await provider.close();
    }
  });

  describe('wire rules', () => {
    it('compact JSON with application/json and X-Request-ID on every answer, DELETE included', async () => {
      const created = await raw(base, 'POST', '/sandboxes', '{"image":"python:3.11-slim"}', {
        'x-api-key': KEY,
        'content-type': 'application/json',
      });
      // 8 hex digits, as Orchard's ids.
      expect(created.text).toMatch(/"sandbox_id":"[0-9a-f]{8}"/);
      expect(created.json).toMatchObject({ status: 'pending', block_network: true, namespace: 'winnower', timeout: 3600 });
      const id = created.json.sandbox_id as string;
      await raw(base, 'GET', `/sandboxes/${id}/wait?timeout=60`);
      const job = await raw(base, 'POST', `/sandboxes/${id}/exec`, '{"command":"echo hi"}');
      expect(job.text).toMatch(/"job_id":"[0-9a-f-]{36}"/);
      const deleted = await raw(base, 'DELETE', `/sandboxes/${id}`);
      expect(deleted.headers.get('content-type')).toMatch(/^application\/json/);
      expect(deleted.headers.get('x-request-id')).toBeTruthy();
      expect((await raw(base, 'GET', '/nope')).json).toEqual({ detail: 'Not Found' });
    });

    it('DELETE: 404 for an id this server never had; 200 deleted again for one it deleted (Orchard answers 200 for any id)', async () => {
      expect(await raw(base, 'DELETE', '/sandboxes/never-was')).toMatchObject({
        status: 404,
        json: { detail: 'Sandbox never-was not found' },
      });
      const { sandbox_id: id } = (await raw(base, 'POST', '/sandboxes', '{"image":"x"}')).json;
      expect((await raw(base, 'DELETE', `/sandboxes/${id}`)).json).toEqual({ status: 'deleted', sandbox_id: id });
      expect(await raw(base, 'DELETE', `/sandboxes/${id}`)).toMatchObject({ status: 200, json: { status: 'deleted', sandbox_id: id } });
    });

    it('null wherever Orchard takes None (exec timeout_seconds, cwd, env; create sandbox_id, cpu, memory, timeout); a null elsewhere says so, an absent field says "Field required"', async () => {
      const created = await raw(base, 'POST', '/sandboxes', '{"image":"x","sandbox_id":null,"cpu":null,"memory":null,"timeout":null}');
      expect(created).toMatchObject({ status: 200, json: { timeout: 3600, status: 'pending' } });
      const id = created.json.sandbox_id as string;
      const job = await raw(
        base,
        'POST',
        `/sandboxes/${id}/exec`,
        '{"command":"echo $0; pwd","timeout_seconds":null,"cwd":null,"env":null,"login_shell":false,"wait":true}',
      );
      expect(job).toMatchObject({ status: 200, json: { status: 'succeeded', stdout: 'bash\n/workspace\n' } });
      const badNull = await raw(base, 'POST', `/sandboxes/${id}/exec`, '{"command":"true","login_shell":null}');
      expect(badNull).toMatchObject({
        status: 422,
        json: { detail: [{ type: 'null_not_allowed', loc: ['body', 'login_shell'], msg: 'null is not allowed: expected boolean' }] },
      });
      const absent = await raw(base, 'POST', `/sandboxes/${id}/exec`, '{"cwd":null}');
      expect(absent.json.detail).toEqual([{ type: 'missing', loc: ['body', 'command'], msg: 'Field required' }]);
      expect((await raw(base, 'POST', '/sandboxes', '{"image":null}')).json.detail[0]).toMatchObject({
        loc: ['body', 'image'],
        msg: 'null is not allowed: expected string',
      });
      await raw(base, 'DELETE', `/sandboxes/${id}`);
    });

    it('a NUL byte in a path, command, cwd or env: 400 naming the field, never an internal command', async () => {
      const { sandbox_id: id } = (await raw(base, 'POST', '/sandboxes', '{"image":"x"}')).json;
      await raw(base, 'GET', `/sandboxes/${id}/wait?timeout=60`);
      const cases: [string, string, string | undefined, string][] = [
        ['POST', `/sandboxes/${id}/files`, '{"path":"/workspace/a\\u0000b","content":"eA=="}', 'body.path'],
        ['GET', `/sandboxes/${id}/files?path=%2Fworkspace%2Fa%00b`, undefined, 'query.path'],
        ['GET', `/sandboxes/${id}/files/list?path=%2Fa%00b`, undefined, 'query.path'],
        ['POST', `/sandboxes/${id}/exec`, '{"command":"echo a\\u0000b","wait":true}', 'body.command'],
        ['POST', `/sandboxes/${id}/exec`, '{"command":["echo","a\\u0000b"],"wait":true}', 'body.command.1'],
        ['POST', `/sandboxes/${id}/exec`, '{"command":"true","cwd":"/tmp\\u0000x","wait":true}', 'body.cwd'],
        ['POST', `/sandboxes/${id}/exec`, '{"command":"true","env":{"A":"x\\u0000y"},"wait":true}', 'body.env.A'],
      ];
      for (const [method, path, body, field] of cases) {
        const answer = await raw(base, method, path, body);
        expect(answer, `${method} ${path}`).toMatchObject({ status: 400, json: { detail: `${field} must not contain a NUL byte` } });
        expect(answer.text).not.toMatch(/mkdir|dirname|cat >|args\[/);
      }
      await raw(base, 'DELETE', `/sandboxes/${id}`);
    });

    it("exec timeouts: 0 or less, or past the sandbox's remaining lifetime, are 422 naming timeout_seconds", async () => {
      const short = await serve({ ttlS: 600 });
      const { sandbox_id: id } = (await raw(short, 'POST', '/sandboxes', '{"image":"x"}')).json;
      for (const timeout of [0, -5, 1e12, 601]) {
        const answer = await raw(
          short,
          'POST',
          `/sandboxes/${id}/exec`,
          JSON.stringify({ command: 'true', timeout_seconds: timeout, wait: true }),
        );
        expect(answer.status, String(timeout)).toBe(422);
        expect(answer.json.detail[0].loc).toEqual(['body', 'timeout_seconds']);
      }
      expect((await raw(short, 'POST', `/sandboxes/${id}/apply_patch`, '{"patch":"","timeout_seconds":100000}')).status).toBe(422);
      expect(await raw(short, 'POST', `/sandboxes/${id}/exec`, '{"command":"echo ok","timeout_seconds":60,"wait":true}')).toMatchObject({
        status: 200,
        json: { stdout: 'ok\n' },
      });
    });

    it('422 in pydantic shape for a missing image, a fractional timeout or a bad sandbox id; a body without content type is JSON too', async () => {
      const missing = await raw(base, 'POST', '/sandboxes', '{}', { 'x-api-key': KEY, 'content-type': 'application/json' });
      expect(missing).toMatchObject({
        status: 422,
        json: { detail: [{ type: 'missing', loc: ['body', 'image'], msg: 'Field required' }] },
      });
      expect((await raw(base, 'POST', '/sandboxes', '{"image":"x","timeout":1.5}')).json.detail[0].loc).toEqual(['body', 'timeout']);
      expect((await raw(base, 'POST', '/sandboxes', '{"image":"x","sandbox_id":"Bad_Id"}')).status).toBe(422);
      expect((await raw(base, 'POST', '/sandboxes', '{not json')).status).toBe(422);
    });

    it('refuses network access unless allowed, and duplicate ids', async () => {
      const refused = await raw(base, 'POST', '/sandboxes', '{"image":"x","block_network":false}');
      expect(refused).toMatchObject({
        status: 403,
        json: { detail: expect.stringContaining('Network access is disabled on this server') },
      });
      // The message names the flag and the config key that permit it.
      expect(refused.json.detail).toContain('--allow-network');
      expect(refused.json.detail).toContain('sandbox.serve.allow_network');
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
      const slow: SandboxProvider = {
        name: 'slow',
        describe: () => local.describe(),
        close: async () => undefined,
        create: async (spec, options) => (await gate, local.create(spec, options)),
      };
      const slowBase = await serve({ provider: slow });
      const sdk = new OrchardSdkClient(slowBase, KEY);
      await expect(sdk.createSandbox('python:3.11-slim', { timeout: 1 })).rejects.toThrow(/TimeoutError/);
      expect(sdk.sent.at(-1)).toMatch(/^DELETE \/sandboxes\//);
      release();
    });
  });

  describe('reads and outputs are bounded (bytes, time, the client)', () => {
    it('GET /files of an endless file (/dev/zero) answers 413 at the read cap instead of reading until the timeout', async () => {
      const sandbox = await new OrchardSdkClient(base, KEY).createSandbox('x');
      const answer = await raw(base, 'GET', `/sandboxes/${sandbox.sandboxId}/files?path=%2Fdev%2Fzero`);
      expect(answer).toMatchObject({
        status: 413,
        json: { detail: expect.stringMatching(/^File \/dev\/zero is larger than this server's read limit \(\d+ bytes\)$/) },
      });
      await sandbox.delete();
    });

    it('a read that blocks (a FIFO with no writer) is killed when the client leaves', async () => {
      const sandbox = await new OrchardSdkClient(base, KEY).createSandbox('x');
      const fifo = `/tmp/wnw-fifo-${process.pid}-${Date.now()}`;
      expect((await sandbox.exec(`mkfifo ${fifo}`)).exit_code).toBe(0);
      const reader = (): string =>
        execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
          .split('\n')
          .filter((line) => line.includes(fifo) && !line.includes('ps -eo'))
          .join('\n');
      // node:http, whose destroy() closes the connection at once (an aborted fetch leaves undici's pool holding one).
      const { port } = new URL(base);
      const request = httpGet({
        host: '127.0.0.1',
        port,
        path: `/sandboxes/${sandbox.sandboxId}/files?path=${encodeURIComponent(fifo)}`,
        headers: { 'x-api-key': KEY },
      });
      request.on('error', () => undefined);
      await expect.poll(reader, { timeout: 20_000 }).not.toBe('');
      request.destroy();
      await expect.poll(reader, { timeout: 20_000 }).toBe('');
      await sandbox.delete();
    });

    it('an exec whose output passes the cap is killed there: the job fails with the capped output and says why', async () => {
      const capped = await serve({ maxOutputBytes: 64 * 1024 });
      const sandbox = await new OrchardSdkClient(capped, KEY).createSandbox('x');
      const job = await sandbox.exec('echo start >&2; yes', { timeout: 600 });
      expect(job).toMatchObject({
        status: 'failed',
        exit_code: null,
        stderr: 'start\n',
        error: "Output passed the server's cap of 65536 bytes per stream; the command was killed",
      });
      expect(Buffer.byteLength(job.stdout)).toBe(64 * 1024);
      expect(await sandbox.exec('echo still here')).toMatchObject({ stdout: 'still here\n' });
      await sandbox.delete();
    });
  });

  describe('TTL and heartbeats (Orchard semantics)', () => {
    it('a sandbox that sent a heartbeat is reaped after a gap; one that never did lives until the TTL', async () => {
      // The TTL leaves room for two creates and the heartbeat reaping on a loaded machine.
      const reaping = await serve({ heartbeatTimeoutS: 0.3, ttlS: 8, cleanupIntervalMs: 100 });
      const sdk = new OrchardSdkClient(reaping, KEY);
      const beating = await sdk.createSandbox('x');
      const silent = await sdk.createSandbox('x');
      await beating.heartbeat();
      await expect.poll(async () => httpStatus(sdk.request('GET', `/sandboxes/${beating.sandboxId}`)), { timeout: 5_000 }).toBe(404);
      expect(await httpStatus(sdk.request('GET', `/sandboxes/${silent.sandboxId}`))).toBe('no error');
      await expect
        .poll(async () => httpStatus(sdk.request('GET', `/sandboxes/${silent.sandboxId}`)), { timeout: 20_000, interval: 250 })
        .toBe(404);
      expect(await httpStatus(silent.exec('true'))).toBe(404);
      // The SDK's `with` block then DELETEs it: a reaped sandbox is still answered `deleted`.
      await silent.delete();
    }, 30_000);
  });

  describe('images, the --repo fallback and --as-root', () => {
    it('an image that cannot be had falls back to the --repo checkout, and the answer says so ("source": "repo", status_message)', async () => {
      const sdk = new OrchardSdkClient(await serve({ repoMode: 'fallback' }), KEY);
      try {
        const sandbox = await sdk.createSandbox(`oci:${join(repoDir, 'no-such-image')}:v1`);
        const info = await sdk.request('GET', `/sandboxes/${sandbox.sandboxId}`);
        expect(info).toMatchObject({
          status: 'ready',
          source: 'repo',
          status_message: expect.stringMatching(
            /^image oci:\S+ could not be used \(WNW_ERR_SBX_IMAGE: .*\); this sandbox is the --repo checkout at \/workspace on the host's \/usr$/,
          ),
        });
        expect(await sandbox.exec('pwd; head -1 README.md')).toMatchObject({ stdout: '/workspace\n# contract\n' });
      } finally {
        await sdk.close();
      }
    });

    it('--as-root: uid 0 inside the sandbox, with no capability at all; off by default', async () => {
      const sdk = new OrchardSdkClient(await serve({ asRoot: true }), KEY);
      try {
        const root = await sdk.createSandbox('x');
        const job = await root.exec(
          `id -u; id -g; grep CapEff /proc/self/status; touch /workspace/made-by-root; stat -c %u /workspace/made-by-root; touch /etc/nope 2>/dev/null || echo read-only`,
        );
        expect(job).toMatchObject({ exit_code: 0, stdout: '0\n0\nCapEff:\t0000000000000000\n0\nread-only\n' });
        const plain = await new OrchardSdkClient(base, KEY).createSandbox('x');
        expect((await plain.exec('id -u')).stdout).not.toBe('0\n');
        await plain.delete();
      } finally {
        await sdk.close();
      }
    });
  });

  describe('mounted in winnower serve', () => {
    it('serves the same API under the prefix, with its own auth and error shape', async () => {
      const store = createSqliteStore(':memory:');
      const app = await buildApp({
        jobs: new JobManager(store),
        store,
        solveDeps: { sandboxes: local, store, createPolicy: createPolicyFactory() },
        sandboxApi: { prefix: '/orchard', options: { provider: local, repo: { path: repoDir }, apiKey: KEY, cleanupIntervalMs: 0 } },
      });
      try {
        expect((await app.inject({ method: 'GET', url: '/orchard/health' })).json()).toEqual({ status: 'healthy' });
        expect((await app.inject({ method: 'POST', url: '/orchard/sandboxes', payload: { image: 'x' } })).statusCode).toBe(401);
        const created = await app.inject({
          method: 'POST',
          url: '/orchard/sandboxes',
          headers: { 'x-api-key': KEY },
          payload: { image: 'x' },
        });
        const id = created.json().sandbox_id as string;
        expect(
          (await app.inject({ method: 'GET', url: `/orchard/sandboxes/${id}/wait?timeout=60`, headers: { 'x-api-key': KEY } })).json(),
        ).toMatchObject({ status: 'ready' });
        const job = await app.inject({
          method: 'POST',
          url: `/orchard/sandboxes/${id}/exec`,
          headers: { 'x-api-key': KEY },
          payload: { command: 'head -1 README.md', wait: true },
        });
        expect(job.json()).toMatchObject({ status: 'succeeded', stdout: '# contract\n' });
        expect((await app.inject({ method: 'GET', url: '/orchard/sandboxes/nope', headers: { 'x-api-key': KEY } })).json()).toEqual({
          detail: 'Sandbox nope not found',
        });
        // The PTY WebSocket under the prefix too.
        await app.listen({ host: '127.0.0.1', port: 0 });
        const pty = await PtyProcess.open({
          baseUrl: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/orchard`,
          sandboxId: id,
          apiKey: KEY,
          auth: 'query',
          command: 'tty; exit 5',
        });
        expect(await pty.wait()).toBe(5);
        expect(pty.output()).toMatch(/^\/dev\/pts\/\d+\r\n/);
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
describe.skipIf(imagesMissing)(
  `[images] winnower sandbox serve without --repo: a create's image is that image on the provider${imagesMissing ? ` (skipped: ${imagesMissing})` : ''}`,
  () => {
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
        const sandbox = await sdk.createSandbox(image!.reference, { timeout: 300 });
        expect(await sandbox.exec('pwd; git rev-parse HEAD')).toMatchObject({ exit_code: 0, stdout: `/testbed\n${image!.baseCommit}\n` });
        await expect(sdk.createSandbox(`oci:${join(scratch.dir, 'nowhere')}:v1`)).rejects.toThrow(
          /RuntimeError: Sandbox [0-9a-f]{8} failed: WNW_ERR_SBX_IMAGE: /,
        );
      } finally {
        await sdk.close();
      }
    }, 120_000);

    it('a sandbox is ready once its first exec costs what the next does: its exec agent is up, or (here) its fallback chosen', async () => {
      // The agent's python takes 7 s to fail, so each exec then enters the sandbox afresh. Without
      // the wait for readiness the first exec pays those 7 s; with it, one bwrap start (far under 5 s
      // even on a loaded machine).
      const slow = writeTinyImage(join(scratch.dir, 'slow-agent'), { python3: '#!/usr/bin/bash\nsleep 7\nexit 1\n' });
      const sdk = new OrchardSdkClient(await serve({ provider: withImages, repo: undefined }), KEY);
      try {
        const sandbox = await sdk.createSandbox(slow.reference, { timeout: 300 });
        const started = performance.now();
        expect(await sandbox.exec('echo first')).toMatchObject({ exit_code: 0, stdout: 'first\n' });
        expect(performance.now() - started).toBeLessThan(5_000);
      } finally {
        await sdk.close();
      }
    }, 120_000);

    it('with --repo, the image is honoured when it can be had ("source": "image"); --repo-always never pulls ("source": "repo")', async () => {
      const preferring = await serve({ provider: withImages, repo: { path: repoDir }, repoMode: 'fallback' });
      const sdk = new OrchardSdkClient(preferring, KEY);
      const always = new OrchardSdkClient(await serve({ provider: withImages, repo: { path: repoDir }, repoMode: 'always' }), KEY);
      try {
        const fromImage = await sdk.createSandbox(image!.reference, { timeout: 300 });
        expect(await sdk.request('GET', `/sandboxes/${fromImage.sandboxId}`)).toMatchObject({ source: 'image', status_message: '' });
        expect(await fromImage.exec('pwd; git rev-parse HEAD')).toMatchObject({ stdout: `/testbed\n${image!.baseCommit}\n` });
        const created = await always.request('POST', '/sandboxes', { json: { image: image!.reference, block_network: true } });
        expect(created).toMatchObject({ source: 'repo' });
        await always.request('GET', `/sandboxes/${created.sandbox_id}/wait`, { params: { timeout: 60 } });
        expect(await (await always.getSandbox(created.sandbox_id)).exec('pwd; head -1 README.md')).toMatchObject({
          stdout: '/workspace\n# contract\n',
        });
      } finally {
        await sdk.close();
        await always.close();
      }
    }, 120_000);
  },
);

describe('winnower sandbox serve: the key', () => {
  it('refuses to listen beyond loopback without an API key', () => {
    expect(() => sandboxApiKey(undefined, '0.0.0.0', {})).toThrow(WinnowerError);
    expect(() => sandboxApiKey(undefined, '0.0.0.0', {})).toThrow(/SANDBOX_API_KEY/);
    expect(sandboxApiKey(undefined, '127.0.0.1', {})).toBeUndefined();
    expect(sandboxApiKey(undefined, '0.0.0.0', { SANDBOX_API_KEY: 'k' })).toBe('k');
    expect(sandboxApiKey({ api_key: 'from-config' }, '0.0.0.0', { SANDBOX_API_KEY: 'k' })).toBe('from-config');
  });
});
