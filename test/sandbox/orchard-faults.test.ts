import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOrchardProvider, type OrchardProviderSettings } from '../../src/sandbox/providers/orchard/provider.js';
import type { Sandbox, SandboxProvider } from '../../src/sandbox/types.js';
import { createRepoImage, FakeOrchard } from '../fakes/fake-orchard.js';
import { expectCode } from '../support/expect-code.js';

const IMAGE = 'demo-image';
const STUCK = 'stuck-image';

let image: string;
let fake: FakeOrchard;
let provider: SandboxProvider;

beforeAll(async () => {
  image = await createRepoImage({ 'a.txt': 'a\n' });
  fake = await FakeOrchard.start({ images: { [IMAGE]: image, [STUCK]: image }, neverReady: [STUCK], retryAfter: '0' });
});

afterAll(async () => {
  await fake.close();
  await rm(image, { recursive: true, force: true });
});

beforeEach(() => {
  fake.rules.length = 0;
  fake.createUnavailable = 0;
  fake.earlyWaits = 0;
  fake.execWaitCapMs = undefined;
});

afterEach(async () => {
  await provider?.close();
});

function makeProvider(settings: OrchardProviderSettings = {}): SandboxProvider {
  provider = createOrchardProvider({
    baseUrl: fake.url,
    apiKey: 'test-key',
    requestTimeoutMs: 3_000,
    heartbeatIntervalMs: 0,
    retries: 3,
    ...settings,
  });
  return provider;
}

function execPosts(sandbox: Sandbox): number {
  return fake.count('POST', new RegExp(`^/sandboxes/${sandbox.id}/exec$`));
}

describe('orchard faults: create', () => {
  it('retries 503 after Retry-After, then succeeds', async () => {
    fake.createUnavailable = 2;
    const before = fake.count('POST', /^\/sandboxes$/);
    const sandbox = await makeProvider().create({ image: IMAGE });
    expect(fake.count('POST', /^\/sandboxes$/) - before).toBe(3);
    await sandbox.close();
  });

  it('gives up after the configured retries with the last 503 and its request id', async () => {
    fake.createUnavailable = 10;
    const error = await expectCode(makeProvider({ retries: 1 }).create({ image: IMAGE }), 'WNW_ERR_SBX_UPSTREAM');
    expect(error.details).toMatchObject({ status: 503, retryAfter: '0' });
    expect(error.message).toMatch(/503.*\(request id req-\d+\)/);
    expect(error.retryable).toBe(true);
  });

  it('deletes a sandbox that is not ready in time (408) and fails with WNW_ERR_SBX_CREATE', async () => {
    const error = await expectCode(makeProvider({ createTimeoutS: 1 }).create({ image: STUCK }), 'WNW_ERR_SBX_CREATE');
    const id = error.details.sandbox as string;
    expect(error.message).toContain('not ready within 1 s');
    expect(error.message).toMatch(/request id req-\d+/);
    expect(fake.deleted).toContain(id);
    expect(fake.count('GET', new RegExp(`^/sandboxes/${id}/wait$`))).toBeGreaterThanOrEqual(1);
  });

  it('an image that cannot be pulled stays pending (no failure from the server): 408, deleted, not retryable the second time', async () => {
    const first = await expectCode(makeProvider({ createTimeoutS: 1 }).create({ image: 'no-such-image' }), 'WNW_ERR_SBX_CREATE');
    expect(first.message).toContain('not ready within 1 s');
    expect(first.retryable).toBe(true);
    expect(fake.deleted).toContain(first.details.sandbox);
    const again = await expectCode(provider.create({ image: 'no-such-image' }), 'WNW_ERR_SBX_CREATE');
    expect(again.retryable).toBe(false);
    expect(again.message).toContain('timed out before too');
  });

  it('after a dropped connection on create, deletes that id and tries again under a new one', async () => {
    fake.inject({ method: 'POST', path: /^\/sandboxes$/, fault: 'drop-after', times: 1 });
    const sandbox = await makeProvider().create({ image: IMAGE });
    const posts = fake.requests.filter((request) => request.method === 'POST' && request.path === '/sandboxes').slice(-2);
    const firstId = (posts[0]?.body as { sandbox_id: string }).sandbox_id;
    expect(firstId).not.toBe(sandbox.id);
    expect(fake.deleted).toContain(firstId);
    await sandbox.close();
  });

  it('deletes the sandbox a create that got no answer may have made (deadline, cancellation)', async () => {
    const postedIds = (): string[] =>
      fake.requests
        .filter((request) => request.method === 'POST' && request.path === '/sandboxes')
        .map((request) => (request.body as { sandbox_id: string }).sandbox_id);
    fake.inject({ method: 'POST', path: /^\/sandboxes$/, fault: 'hang-after', times: 1 });
    await expectCode(makeProvider({ requestTimeoutMs: 300 }).create({ image: IMAGE }), 'WNW_ERR_SBX_TIMEOUT');
    expect(fake.deleted).toContain(postedIds().at(-1));

    fake.inject({ method: 'POST', path: /^\/sandboxes$/, fault: 'hang-after', times: 1 });
    const controller = new AbortController();
    const creating = makeProvider().create({ image: IMAGE }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    await expectCode(creating, 'WNW_ERR_OP_ABORTED');
    expect(fake.deleted).toContain(postedIds().at(-1));
  });

  it('does not retry auth failures and says which key to set', async () => {
    const before = fake.count('POST', /^\/sandboxes$/);
    const missing = await expectCode(makeProvider({ apiKey: '' }).create({ image: IMAGE }), 'WNW_ERR_SBX_UPSTREAM');
    expect(missing.details.status).toBe(401);
    expect(missing.message).toContain('SANDBOX_API_KEY');
    const wrong = await expectCode(makeProvider({ apiKey: 'wrong' }).create({ image: IMAGE }), 'WNW_ERR_SBX_UPSTREAM');
    expect(wrong.details.status).toBe(403);
    expect(wrong.message).toMatch(/rejected the API key.*request id req-\d+/);
    expect(fake.count('POST', /^\/sandboxes$/) - before).toBe(2);
  });

  it('retries connection errors with backoff, then reports the server unreachable', async () => {
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const started = Date.now();
    const error = await expectCode(
      makeProvider({ baseUrl: `http://127.0.0.1:${port}`, retries: 2 }).create({ image: IMAGE }),
      'WNW_ERR_SBX_UPSTREAM',
    );
    expect(error.details.connection).toBe(true);
    expect(error.message).toContain('unreachable');
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });

  it('a hanging orchestrator is WNW_ERR_SBX_TIMEOUT after the request deadline', async () => {
    fake.inject({ method: 'POST', path: /^\/sandboxes$/, fault: 'hang', times: 1 });
    const started = Date.now();
    const error = await expectCode(makeProvider({ requestTimeoutMs: 300 }).create({ image: IMAGE }), 'WNW_ERR_SBX_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(error.details).toMatchObject({ timeoutMs: 300 });
  });
});

describe('orchard faults: exec', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createOrchardProvider({
      baseUrl: fake.url,
      apiKey: 'test-key',
      heartbeatIntervalMs: 0,
      requestTimeoutMs: 2_000,
    }).create({ image: IMAGE });
  });
  afterAll(async () => sandbox.close());

  it('a 500 on exec is WNW_ERR_SBX_UPSTREAM with status, detail and request id', async () => {
    fake.inject({ method: 'POST', path: /\/exec$/, fault: '500', times: 1 });
    const error = await expectCode(sandbox.exec('true'), 'WNW_ERR_SBX_UPSTREAM');
    expect(error.details).toMatchObject({
      status: 500,
      detail: 'Internal server error: injected failure',
      requestId: expect.stringMatching(/^req-/),
    });
    expect(error.message).toContain(`(request id ${error.details.requestId as string})`);
  });

  it('malformed JSON is WNW_ERR_SBX_UPSTREAM naming the call', async () => {
    fake.inject({ method: 'POST', path: /\/exec$/, fault: 'malformed', times: 1 });
    const error = await expectCode(sandbox.exec('true'), 'WNW_ERR_SBX_UPSTREAM');
    expect(error.message).toMatch(/malformed.*POST \/sandboxes\/.+\/exec.*request id req-\d+/);
  });

  it('polls after a wait that comes back running', async () => {
    fake.execWaitCapMs = 50;
    const before = execPosts(sandbox);
    const result = await sandbox.exec('sleep 0.4; echo done');
    expect(result).toMatchObject({ exitCode: 0, stdout: 'done\n' });
    expect(execPosts(sandbox) - before).toBe(1);
  });

  it('keeps polling when another replica answers /wait at once', async () => {
    fake.execWaitCapMs = 20;
    fake.earlyWaits = 4;
    const polls = fake.count('GET', /^\/jobs\/.+\/wait$/);
    const result = await sandbox.exec('sleep 1; echo late');
    expect(result.stdout).toBe('late\n');
    expect(fake.count('GET', /^\/jobs\/.+\/wait$/) - polls).toBeGreaterThanOrEqual(5);
    expect(fake.earlyWaits).toBe(0);
  });

  it('never POSTs the same exec twice after a dropped connection, and deletes the sandbox it may be running in', async () => {
    const own = await makeProvider().create({ image: IMAGE });
    fake.inject({ method: 'POST', path: /\/exec$/, fault: 'drop-after', times: 1 });
    const jobsBefore = [...fake.jobs.keys()];
    const error = await expectCode(own.exec('echo once >> ran.txt'), 'WNW_ERR_SBX_EXEC');
    expect(error.message).toContain('not sent again');
    expect(execPosts(own)).toBe(2); // the base-commit probe, then this one
    const added = [...fake.jobs.values()].filter((job) => !jobsBefore.includes(job.job_id));
    expect(added).toHaveLength(1);
    expect(added[0]?.command).toContain('echo once >> ran.txt');
    await expect.poll(() => fake.sandboxes.has(own.id)).toBe(false);
    await expectCode(own.exec('true'), 'WNW_ERR_SBX_CLOSED');
  });

  it('after a dropped poll, polls the same job again instead of re-submitting', async () => {
    fake.execWaitCapMs = 20;
    fake.inject({ method: 'GET', path: /^\/jobs\/.+\/wait$/, fault: 'drop', times: 1 });
    const before = execPosts(sandbox);
    const result = await sandbox.exec('sleep 0.2; echo polled');
    expect(result.stdout).toBe('polled\n');
    expect(execPosts(sandbox) - before).toBe(1);
  });

  it('a poll that hangs is WNW_ERR_SBX_TIMEOUT', async () => {
    fake.execWaitCapMs = 20;
    // Long enough for the create and the closing DELETE on a loaded machine (a 300 ms limit failed
    // the close in CI at load 15); the hang is still reported well within the bound below.
    const local = createOrchardProvider({ baseUrl: fake.url, apiKey: 'test-key', heartbeatIntervalMs: 0, requestTimeoutMs: 1_500 });
    const other = await local.create({ image: IMAGE });
    fake.inject({ method: 'GET', path: /^\/jobs\/.+\/wait$/, fault: 'hang', times: 1 });
    try {
      const started = Date.now();
      const error = await expectCode(other.exec('sleep 0.2', { timeoutMs: 1_000 }), 'WNW_ERR_SBX_TIMEOUT');
      expect(error.message).toMatch(/did not answer GET \/jobs\/.+\/wait within \d+ ms/);
      expect(Date.now() - started).toBeLessThan(6_000);
    } finally {
      await local.close();
    }
  });

  it('a sandbox that dies mid-exec is WNW_ERR_SBX_LOST with the reason and request id, now and on every later call', async () => {
    const local = makeProvider();
    const doomed = await local.create({ image: IMAGE });
    setTimeout(() => fake.killSandbox(doomed.id), 200);
    const error = await expectCode(doomed.exec('sleep 5'), 'WNW_ERR_SBX_LOST');
    expect(error.message).toMatch(/is lost: its pod died.*pod terminated.*request id req-\d+/);
    expect(error.details).toMatchObject({ sandbox: doomed.id, lost: true, error: 'agent connection lost: pod terminated' });
    const execs = execPosts(doomed);
    expect((await expectCode(doomed.exec('true'), 'WNW_ERR_SBX_LOST')).details.lost).toBe(true);
    expect(execPosts(doomed)).toBe(execs); // failed at once, nothing sent
    await doomed.close();
    expect(fake.deleted).toContain(doomed.id);
  });

  it('a sandbox reaped (or deleted) behind its back is WNW_ERR_SBX_LOST, keeping the 404 in details', async () => {
    const reaped = await makeProvider().create({ image: IMAGE });
    const deleted = await fetch(`${fake.url}/sandboxes/${encodeURIComponent(reaped.id)}`, {
      method: 'DELETE',
      headers: { 'x-api-key': 'test-key' },
    });
    expect(deleted.status).toBe(200);
    const error = await expectCode(reaped.exec('true'), 'WNW_ERR_SBX_LOST');
    expect(error.message).toContain('reaped it');
    expect(error.details).toMatchObject({ sandbox: reaped.id, lost: true, status: 404 });
    await reaped.close();
  });

  it('a 500 on a file call (missing pod IP) is WNW_ERR_SBX_UPSTREAM', async () => {
    fake.inject({ method: 'GET', path: /\/files$/, fault: '500', times: 1 });
    const error = await expectCode(sandbox.readFile('a.txt'), 'WNW_ERR_SBX_UPSTREAM');
    expect(error.details.status).toBe(500);
  });

  it('a failing DELETE surfaces from close(), and a later close() reports the same', async () => {
    const local = makeProvider();
    const victim = await local.create({ image: IMAGE });
    fake.inject({ method: 'DELETE', path: new RegExp(`^/sandboxes/${victim.id}$`), fault: '500' });
    await expectCode(victim.close(), 'WNW_ERR_SBX_UPSTREAM');
    await expectCode(victim.close(), 'WNW_ERR_SBX_UPSTREAM');
    fake.rules.length = 0;
  });
});
