/**
 * One test per entry of docs/design/02-orchard-real-behaviour.md (§N in each name is entry N): first the
 * fake is shown to behave as the real orchestrator does (raw REST calls), then the provider is
 * shown to handle it.
 */
import { rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOrchardProvider, type OrchardProviderSettings } from '../../src/sandbox/providers/orchard/provider.js';
import type { OrchardSandbox } from '../../src/sandbox/providers/orchard/sandbox.js';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { createRepoImage, FakeOrchard, POD_KILLED_ERROR } from '../fakes/fake-orchard.js';
import { expectCode } from '../support/expect-code.js';

const IMAGE = 'swebench/sweb.eval.x86_64.real__real-1';
let image: string;
let fake: FakeOrchard;
let provider: SandboxProvider | undefined;

beforeAll(async () => {
  image = await createRepoImage({ 'a.txt': 'alpha\n', 'src/m.py': 'x = 1\n' });
  fake = await FakeOrchard.start({ images: { [IMAGE]: image }, retryAfter: '0', agentReadyWaitMs: 200, cleanupIntervalMs: 0 });
});

afterAll(async () => {
  await fake.close();
  await rm(image, { recursive: true, force: true });
});

afterEach(async () => {
  await provider?.close();
  provider = undefined;
  fake.rules.length = 0;
});

function makeProvider(settings: OrchardProviderSettings = {}): SandboxProvider {
  provider = createOrchardProvider({
    baseUrl: fake.url,
    apiKey: 'test-key',
    requestTimeoutMs: 5_000,
    heartbeatIntervalMs: 0,
    retries: 2,
    ...settings,
  });
  return provider;
}

async function sandbox(settings: OrchardProviderSettings = {}): Promise<OrchardSandbox> {
  return (await makeProvider(settings).create({ image: IMAGE })) as OrchardSandbox;
}

/** A raw call to the fake, as any client would make it. */
async function api(method: string, path: string, body?: unknown, at: FakeOrchard = fake): Promise<{ status: number; json: any }> {
  const response = await fetch(at.url + path, {
    method,
    headers: { 'x-api-key': 'test-key', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: await response.json() };
}

/** A ready sandbox made with raw calls. */
async function rawSandbox(at: FakeOrchard = fake, imageName = IMAGE): Promise<string> {
  const created = await api('POST', '/sandboxes', { image: imageName }, at);
  expect(created.status).toBe(200);
  const id = created.json.sandbox_id as string;
  expect((await api('GET', `/sandboxes/${id}/wait?timeout=10`, undefined, at)).status).toBe(200);
  return id;
}

async function rawExec(id: string, body: Record<string, unknown>): Promise<{ status: number; json: any }> {
  return api('POST', `/sandboxes/${id}/exec`, { wait: true, ...body });
}

describe('§1 a command that reaches timeout_seconds kills the sandbox', () => {
  it('fake: the job fails with no exit code and no output, and the next exec is 404 "agent not ready"', async () => {
    const id = await rawSandbox();
    const job = await rawExec(id, { command: 'echo before; sleep 5', timeout_seconds: 1 });
    expect(job.json).toMatchObject({ status: 'failed', exit_code: null, stdout: '', error: POD_KILLED_ERROR });
    expect(await rawExec(id, { command: 'true' })).toMatchObject({ status: 404, json: { detail: `Sandbox ${id} agent not ready` } });
    expect((await api('GET', `/sandboxes/${id}`)).json.status).toBe('failed');
  });

  it('provider: our own timeout kills only the command (output kept, sandbox alive); a bare 124 is not a timeout', async () => {
    const box = await sandbox();
    const result = await box.exec('echo before; trap "" TERM; sleep 30', { timeoutMs: 500 });
    expect(result).toMatchObject({ timedOut: true, exitCode: null, stdout: 'before\n', stderr: '' });
    expect(await box.exec('echo alive')).toMatchObject({ exitCode: 0, stdout: 'alive\n' });
    // The orchestrator calls every exit 124 a timeout; the marker of our wrapper tells them apart.
    expect(await box.exec('echo own >&2; exit 124')).toMatchObject({ exitCode: 124, timedOut: false, stderr: 'own\n' });
  });

  it('provider: a pod that dies under a command is a lost sandbox; later execs fail at once without a request', async () => {
    const box = await sandbox();
    setTimeout(() => fake.killSandbox(box.id, POD_KILLED_ERROR), 200);
    const error = await expectCode(box.exec('sleep 5'), 'WNW_ERR_SBX_LOST');
    expect(error.message).toContain('is lost: its pod died');
    expect(error.details).toMatchObject({ lost: true, error: POD_KILLED_ERROR });
    const posts = fake.count('POST', new RegExp(`^/sandboxes/${box.id}/exec$`));
    expect((await expectCode(box.exec('true'), 'WNW_ERR_SBX_LOST')).details.lost).toBe(true);
    expect(fake.count('POST', new RegExp(`^/sandboxes/${box.id}/exec$`))).toBe(posts);
  });
});

describe('§2 login_shell rewrites stderr', () => {
  it('fake: tracebacks and blank lines are dropped, lines re-joined without the final newline', async () => {
    const id = await rawSandbox();
    const traceback = await rawExec(id, { command: `python3 -c 'raise ValueError("boom")'`, login_shell: true });
    expect(traceback.json.stderr).toBe('ValueError: boom');
    expect((await rawExec(id, { command: 'echo one >&2; echo >&2; echo two >&2', login_shell: true })).json.stderr).toBe('one\ntwo');
    expect((await rawExec(id, { command: `python3 -c 'import nosuchmodule'`, login_shell: true })).json.stderr).toBe('');
  });

  it('provider: never sends login_shell, so stderr arrives whole', async () => {
    const box = await sandbox({ loginShell: true });
    const result = await box.exec(`python3 -c 'import nosuchmodule'`);
    expect(result.stderr).toMatch(/^Traceback[^]*ModuleNotFoundError: No module named 'nosuchmodule'\n$/);
    const posts = fake.requests.filter((request) => request.path === `/sandboxes/${box.id}/exec`);
    expect(posts.length).toBeGreaterThan(1);
    expect(posts.every((request) => !('login_shell' in (request.body as Record<string, unknown>)))).toBe(true);
  });
});

describe('§3 exec output is decoded as UTF-8 with replacement; the files route is byte-exact', () => {
  it('fake: \\xff\\xfe comes back as two U+FFFD through exec, unchanged through files', async () => {
    const id = await rawSandbox();
    const job = await rawExec(id, { command: `printf '\\xff\\xfeA' > /tmp/b.bin; cat /tmp/b.bin` });
    expect(Buffer.from(job.json.stdout as string).toString('hex')).toBe('efbfbdefbfbd41');
    const file = await api('GET', `/sandboxes/${id}/files?path=/tmp/b.bin`);
    expect(Buffer.from(file.json.content as string, 'base64').toString('hex')).toBe('fffe41');
  });

  it('provider: the diff travels base64, so the patch cap counts the bytes git printed, not their replacement', async () => {
    const box = (await makeProvider({ patch: { maxBytes: 64 * 1024 } }).create({ image: IMAGE })) as OrchardSandbox;
    // 30 000 bytes of Latin-1 text: a 30 KB patch, which would be 90 KB once each byte became U+FFFD.
    await box.writeFile('latin1.txt', new Uint8Array(30_000).fill(0xe9));
    const diff = await box.diff();
    expect(diff).toContain('diff --git a/latin1.txt b/latin1.txt');
    const sent = fake.requests.filter((request) => request.path === `/sandboxes/${box.id}/exec`).at(-1)?.body as { command: string };
    expect(sent.command).toContain('base64 -w0');
  });
});

describe('§4 an image that cannot be pulled stays pending', () => {
  it('fake: status pending with an empty message; /wait answers 408 at its timeout; the sweep removes it after timeout + 600 s', async () => {
    const created = await api('POST', '/sandboxes', { image: 'no/such:image', timeout: 30 });
    const id = created.json.sandbox_id as string;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await api('GET', `/sandboxes/${id}`)).json).toMatchObject({ status: 'pending', ready: false, status_message: '' });
    expect((await api('GET', `/sandboxes/${id}/wait?timeout=1`)).status).toBe(408);
    await fake.sweep(Date.now() / 1000 + 30 + 601);
    expect(fake.reaped).toContainEqual({ id, reason: 'pending' });
  });

  it('provider: fails early with the reason when the status message carries an image-pull error', async () => {
    const reporting = await FakeOrchard.start({ images: {}, reportPullErrors: true, cleanupIntervalMs: 0 });
    try {
      provider = createOrchardProvider({ baseUrl: reporting.url, apiKey: 'test-key', heartbeatIntervalMs: 0, createTimeoutS: 120 });
      const error = await expectCode(provider.create({ image: 'no/such:image' }), 'WNW_ERR_SBX_CREATE');
      expect(error.message).toContain('ImagePullBackOff');
      expect(error.message).not.toContain('not ready within');
      expect(reporting.deleted).toContain(error.details.sandbox);
      // Each readiness wait is a slice, so the message is read between slices.
      expect(Number(reporting.requests.find((request) => request.path.endsWith('/wait'))?.query.timeout)).toBeLessThanOrEqual(10);
    } finally {
      await provider?.close();
      provider = undefined;
      await reporting.close();
    }
  });
});

describe('§5 "not a file" and "not a directory" are 500s; 400 means not ready', () => {
  it('fake: 500 wrapping the agent 400; 400 on a pod that is not ready', async () => {
    const id = await rawSandbox();
    expect(await api('GET', `/sandboxes/${id}/files?path=/testbed`)).toMatchObject({
      status: 500,
      json: { detail: 'Agent download failed (HTTP 400): {"detail":"Not a file: /testbed"}' },
    });
    await api('GET', `/sandboxes/${id}/files?path=/testbed/a.txt`); // the stale connection of docs/design/02-orchard-real-behaviour.md#7
    expect((await api('GET', `/sandboxes/${id}/files/list?path=/testbed/a.txt`)).json.detail).toContain('Not a directory: /testbed/a.txt');
    fake.killSandbox(id);
    expect((await api('GET', `/sandboxes/${id}/files?path=/testbed/a.txt`)).status).toBe(400);
  });

  it('provider: WNW_ERR_SBX_FILE, not retryable, for the wrong type; a not-ready sandbox is not a file error', async () => {
    const box = await sandbox();
    const notFile = await expectCode(box.readFile('src'), 'WNW_ERR_SBX_FILE');
    expect(notFile.message).toContain('not a regular file');
    expect(notFile.retryable).toBe(false);
    expect((await expectCode(box.listFiles('a.txt'), 'WNW_ERR_SBX_FILE')).message).toContain('not a directory');
    fake.killSandbox(box.id);
    const notReady = await expectCode(box.readFile('a.txt'), 'WNW_ERR_SBX_UPSTREAM');
    expect(notReady.message).toContain('not ready');
  });
});

describe('§6 one dangling symlink fails the whole listing', () => {
  it('fake: 500; provider: lists with find instead, the link as a symlink', async () => {
    const box = await sandbox();
    await symlink('/nowhere', join(fake.rootOf(box.id), 'testbed/dangling'));
    expect((await api('GET', `/sandboxes/${box.id}/files/list?path=/testbed`)).status).toBe(500);
    const entries = await box.listFiles('.');
    expect(entries).toEqual(
      expect.arrayContaining([
        { name: 'dangling', type: 'symlink', size: 8 },
        { name: 'a.txt', type: 'file', size: 6 },
        { name: 'src', type: 'directory', size: expect.any(Number) },
      ]),
    );
  });
});

describe('§7 the call after an agent error may hit a stale connection', () => {
  it('fake: 500 "Connection reset by peer"; provider: repeats an idempotent file call once', async () => {
    const box = await sandbox();
    await expectCode(box.readFile('src'), 'WNW_ERR_SBX_FILE');
    const before = fake.count('POST', new RegExp(`^/sandboxes/${box.id}/files$`));
    await box.writeFile('after.txt', 'ok\n');
    expect(fake.count('POST', new RegExp(`^/sandboxes/${box.id}/files$`)) - before).toBe(2);
    expect(new TextDecoder().decode(await box.readFile('after.txt'))).toBe('ok\n');
  });
});

describe('§8 a cwd that does not exist', () => {
  it('fake: runs in / silently; provider: the command fails instead of running elsewhere', async () => {
    const id = await rawSandbox();
    expect((await rawExec(id, { command: 'pwd', cwd: '/testbed/nope' })).json.stdout).toBe('/\n');
    const box = await sandbox();
    const result = await box.exec('pwd', { cwd: 'nope' });
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('/testbed/nope');
  });
});

describe('§9 death by signal', () => {
  it('fake: exit code −9; provider: 128 + 9, as the other providers', async () => {
    const id = await rawSandbox();
    expect((await rawExec(id, { command: 'kill -9 $$' })).json.exit_code).toBe(-9);
    const box = await sandbox();
    expect((await box.exec('kill -9 $$')).exitCode).toBe(137);
    expect((await box.exec('kill -TERM $$')).exitCode).toBe(143);
  });
});

describe('§10 heartbeats enrol a sandbox in heartbeat reaping; the TTL counts from creation', () => {
  it('fake: the sandbox that sent one heartbeat is reaped after a gap; the silent one only by TTL', async () => {
    const beating = await rawSandbox();
    const silent = await rawSandbox();
    expect((await api('POST', `/sandboxes/${beating}/heartbeat`)).json).toEqual({ status: 'ok', sandbox_id: beating });
    await fake.sweep(Date.now() / 1000 + 181);
    expect(fake.reaped).toContainEqual({ id: beating, reason: 'heartbeat' });
    expect(fake.sandboxes.has(silent)).toBe(true);
    await fake.sweep(Date.now() / 1000 + 7_201);
    expect(fake.reaped).toContainEqual({ id: silent, reason: 'ttl' });
    expect(await rawExec(beating, { command: 'true' })).toMatchObject({ status: 404, json: { detail: `Sandbox ${beating} not found` } });
  });

  it('provider: a reaped sandbox is reported as such; a failed heartbeat marks it lost; a lifetime past the TTL is refused', async () => {
    const box = await sandbox();
    await fake.sweep(Date.now() / 1000 + 7_201);
    const error = await expectCode(box.exec('true'), 'WNW_ERR_SBX_LOST');
    expect(error.message).toContain('reaped');
    expect(error.details.lost).toBe(true);

    const beating = (await makeProvider({ heartbeatIntervalMs: 30 }).create({ image: IMAGE })) as OrchardSandbox;
    await expect.poll(() => beating.heartbeat.sent).toBeGreaterThan(0);
    await fake.sweep(Date.now() / 1000 + 7_201);
    await expect.poll(() => beating.lost?.details.lost).toBe(true);

    await expectCode(makeProvider({ ttlS: 3_600 }).create({ image: IMAGE, lifetimeS: 4_000 }), 'WNW_ERR_SBX_UNSUPPORTED');
    // No host bind mounts in a pod: refused before any request rather than a harness dying with 127.
    await expectCode(
      makeProvider({}).create({ image: IMAGE, mounts: [{ source: '/usr/bin', target: '/opt/winnower/bin' }] }),
      'WNW_ERR_SBX_UNSUPPORTED',
    );
    const defaults = await createOrchardProvider({ baseUrl: fake.url }).describe();
    // At most a third of the server's 180 s heartbeat timeout.
    expect(defaults).toMatchObject({ heartbeatIntervalMs: 60_000, ttlS: 7_200 });
  });
});

describe('§11 §12 execs queue per sandbox on the server (per replica only); no cancellation', () => {
  it('fake: a second exec waits for the first (queue time)', async () => {
    const id = await rawSandbox();
    const first = await api('POST', `/sandboxes/${id}/exec`, { command: 'sleep 0.5' });
    const second = await rawExec(id, { command: 'true' });
    const firstJob = (await api('GET', `/jobs/${first.json.job_id}`)).json;
    expect(second.json.started_at).toBeGreaterThanOrEqual(firstJob.completed_at);
  });

  it('provider: serialises its own execs, so the server never holds two of one sandbox', async () => {
    const box = await sandbox();
    const [one, two] = await Promise.all([box.exec('sleep 0.4; echo one'), box.exec('echo two')]);
    expect([one.stdout, two.stdout]).toEqual(['one\n', 'two\n']);
    const posts = fake.requests.filter((request) => request.path === `/sandboxes/${box.id}/exec`).slice(-2);
    const jobs = [...fake.jobs.values()].filter((job) => job.sandbox_id === box.id).slice(-2);
    // The second was created (POSTed) only after the first had completed.
    expect(jobs[1]!.created_at).toBeGreaterThanOrEqual(jobs[0]!.completed_at!);
    expect(posts).toHaveLength(2);
  });

  it('provider: an abort stops waiting and deletes the sandbox, whose command would hold the queue', async () => {
    const box = await sandbox();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    await expectCode(box.exec('sleep 30', { signal: controller.signal }), 'WNW_ERR_OP_ABORTED');
    await expect.poll(() => fake.deleted.includes(box.id)).toBe(true);
    // An abort while waiting for the queue sent nothing, and leaves the sandbox alone.
    const other = await sandbox();
    const waiting = new AbortController();
    const slow = other.exec('sleep 0.3');
    const queued = other.exec('echo never', { signal: waiting.signal });
    waiting.abort();
    await expectCode(queued, 'WNW_ERR_OP_ABORTED');
    await slow;
    expect(fake.deleted).not.toContain(other.id);
    expect([...fake.jobs.values()].some((job) => job.command.includes('echo never'))).toBe(false);
  });
});

describe('§13 duplicate and invalid ids', () => {
  it('fake: a duplicate id is adopted (200 pending), an invalid one is 500; provider: a fresh id per attempt', async () => {
    const id = await rawSandbox();
    expect(await api('POST', '/sandboxes', { image: IMAGE, sandbox_id: id })).toMatchObject({
      status: 200,
      json: { sandbox_id: id, status: 'pending', cpu: '4' },
    });
    expect((await api('POST', '/sandboxes', { image: IMAGE, sandbox_id: 'Not_Valid' })).status).toBe(500);
    const p = makeProvider();
    const [a, b] = await Promise.all([p.create({ image: IMAGE }), p.create({ image: IMAGE })]);
    expect(a!.id).toMatch(/^wnw-[0-9a-f]{12}$/);
    expect(a!.id).not.toBe(b!.id);
  });
});

describe('§14 the create timeout is an integer', () => {
  it('fake: 1.5 is a 422; provider: sends the ceiling', async () => {
    expect((await api('POST', '/sandboxes', { image: IMAGE, timeout: 1.5 })).status).toBe(422);
    const box = await sandbox({ createTimeoutS: 30.5 });
    const post = fake.requests.filter((request) => request.method === 'POST' && request.path === '/sandboxes').at(-1);
    expect((post?.body as { timeout: number }).timeout).toBe(31);
    expect(box.id).toMatch(/^wnw-/);
  });
});

describe('§15 apply_patch always works in /workspace', () => {
  it('fake: fails for a repository in /testbed, cuts a patch at a PATCH_EOF line; provider: never calls it', async () => {
    const id = await rawSandbox();
    const patch = '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-alpha\n+beta\n';
    const applied = await api('POST', `/sandboxes/${id}/apply_patch`, { patch });
    expect(applied.json).toMatchObject({ success: false });
    expect(applied.json.stderr).toContain('a.txt');
    const box = await sandbox();
    await box.applyPatch(`diff --git a/a.txt b/a.txt\n${patch}`);
    expect(new TextDecoder().decode(await box.readFile('a.txt'))).toBe('beta\n');
    expect(fake.count('POST', /\/apply_patch$/)).toBe(1);
  });
});

describe('§16 confirmed details', () => {
  it('fake: unknown GET is 404; a list command is joined unquoted; exec wait that gives up returns the whole job', async () => {
    expect((await api('GET', '/sandboxes/nope')).status).toBe(404);
    const id = await rawSandbox();
    const listed = await rawExec(id, { command: ['python3', '-c', 'print("hi there")'] });
    expect(listed.json.exit_code).not.toBe(0);
    fake.execWaitCapMs = 50;
    try {
      const pending = await rawExec(id, { command: 'sleep 0.5' });
      expect(pending.json).toMatchObject({ status: 'running', sandbox_id: id, exit_code: null, command: 'sleep 0.5' });
    } finally {
      fake.execWaitCapMs = undefined;
    }
    expect(await api('DELETE', '/sandboxes/never-was')).toMatchObject({
      status: 200,
      json: { status: 'deleted', sandbox_id: 'never-was' },
    });
  });
});
