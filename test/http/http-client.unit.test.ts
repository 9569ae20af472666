import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createHttpClient, retryAfterMs, type HttpClient, type HttpClientOptions } from '../../src/http/http-client.js';
import { FakeHttpServer } from '../fakes/fake-http-server.js';
import { deadUrl, rejection } from '../scoring/http/helpers.js';

const Echo = z.object({ echo: z.unknown(), server: z.string() });

describe('http client', () => {
  const servers: FakeHttpServer[] = [];
  let client: HttpClient | undefined;

  async function serve(name: string): Promise<FakeHttpServer> {
    const server = await new FakeHttpServer({ '/echo': (body) => ({ status: 200, json: { echo: body, server: name } }) }).start();
    servers.push(server);
    return server;
  }
  function connect(urls: string[], options: Partial<HttpClientOptions> = {}): HttpClient {
    client = createHttpClient({ urls, timeoutMs: 2_000, retries: 2, backoff: { initialMs: 1, maxMs: 5 }, ...options });
    return client;
  }
  const echo = (body: unknown = { n: 1 }, signal?: AbortSignal) =>
    client!.postJson({ path: '/echo', body, schema: Echo, ...(signal ? { signal } : {}) });

  afterEach(async () => {
    await client?.close();
    client = undefined;
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it('posts JSON and validates the answer', async () => {
    const server = await serve('a');
    connect([server.url], { apiKey: 'k1', headers: { 'x-request-id': 'r1' } });
    expect(await echo({ hello: 'world' })).toEqual({ echo: { hello: 'world' }, server: 'a' });
    expect(server.requests[0]!.headers).toMatchObject({
      'content-type': 'application/json',
      authorization: 'Bearer k1',
      'x-request-id': 'r1',
    });
  });

  it('keeps a path prefix of the base URL', async () => {
    const server = new FakeHttpServer({ '/v2/echo': (body) => ({ status: 200, json: { echo: body, server: 'prefixed' } }) });
    servers.push(await server.start());
    connect([`${server.url}/v2/`]);
    expect((await echo()).server).toBe('prefixed');
  });

  it('spreads concurrent requests evenly over equal replicas', async () => {
    const a = await serve('a');
    const b = await serve('b');
    a.delayMs = b.delayMs = 30;
    connect([a.url, b.url]);
    await Promise.all(Array.from({ length: 10 }, (_, n) => echo({ n })));
    expect([a.requests.length, b.requests.length]).toEqual([5, 5]);
  });

  it('sends to the replica with the fewest requests in flight', async () => {
    const a = await serve('a');
    const b = await serve('b');
    connect([a.url, b.url]);
    a.hang(1);
    const stuck = new AbortController();
    const hung = echo({ n: 0 }, stuck.signal).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(client!.outstanding()).toEqual([1, 0]);
    for (let n = 1; n <= 4; n += 1) expect((await echo({ n })).server).toBe('b');
    stuck.abort();
    expect(await hung).toMatchObject({ code: 'WNW_ERR_OP_ABORTED' });
    expect(client!.outstanding()).toEqual([0, 0]);
  });

  it('retries a refused connection on another replica', async () => {
    const live = await serve('live');
    connect([await deadUrl(), live.url]);
    expect((await echo()).server).toBe('live');
    expect(live.requests).toHaveLength(1);
  });

  it('passes over a failing replica for a while instead of sending it every request', async () => {
    const sick = await serve('sick');
    const well = await serve('well');
    sick.fail(503, 100);
    connect([sick.url, well.url]);
    for (let n = 0; n < 6; n += 1) expect((await echo({ n })).server).toBe('well');
    expect(sick.requests).toHaveLength(1);
    expect(well.requests).toHaveLength(6);
  });

  it('still tries a resting replica when every replica rests', async () => {
    const only = await serve('only');
    only.fail(503, 1);
    connect([only.url]);
    expect((await echo()).server).toBe('only');
    expect((await echo()).server).toBe('only');
    expect(only.requests).toHaveLength(3);
  });

  it('retries a connection reset by the server', async () => {
    const server = await serve('a');
    server.reset(1);
    connect([server.url]);
    expect((await echo()).server).toBe('a');
    expect(server.requests).toHaveLength(2);
  });

  it('reports a refused connection as a retryable upstream error once the retries are spent', async () => {
    connect([await deadUrl()], { retries: 1 });
    const error = await rejection(echo());
    expect(error).toMatchObject({ code: 'WNW_ERR_SCORE_UPSTREAM', retryable: true });
    expect(error.details.errorCode).toBe('ECONNREFUSED');
  });

  it('retries 408, 429, 500, 502, 503 and 504 but never another status', async () => {
    const server = await serve('a');
    connect([server.url], { retries: 6 });
    server.fail(408).fail(429).fail(500).fail(502).fail(503).fail(504);
    expect((await echo()).server).toBe('a');
    expect(server.requests).toHaveLength(7);
    for (const status of [400, 404, 409, 422, 501, 505]) {
      server.fail(status);
      const error = await rejection(echo());
      expect(error).toMatchObject({ code: 'WNW_ERR_SCORE_UPSTREAM', retryable: false, details: { status } });
    }
    expect(server.requests).toHaveLength(13);
  });

  it('waits as long as Retry-After says', async () => {
    const server = await serve('a');
    connect([server.url]);
    server.fail(503, 1, { retryAfter: '1' });
    const started = Date.now();
    await echo();
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('does not wait past the deadline for a retry', async () => {
    const server = await serve('a');
    connect([server.url], { timeoutMs: 500 });
    server.fail(503, 1, { retryAfter: '2' });
    const started = Date.now();
    expect((await rejection(echo())).details.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(400);
  });

  it('gives up at once when Retry-After is longer than it may wait', async () => {
    const server = await serve('a');
    connect([server.url], { maxRetryAfterMs: 100 });
    server.fail(429, 1, { retryAfter: '120' });
    const started = Date.now();
    const error = await rejection(echo());
    expect(error).toMatchObject({ code: 'WNW_ERR_SCORE_UPSTREAM', details: { status: 429 } });
    expect(Date.now() - started).toBeLessThan(500);
    expect(server.requests).toHaveLength(1);
  });

  it('keeps one deadline over all attempts', async () => {
    const server = await serve('a');
    connect([server.url], { timeoutMs: 300, retries: 5 });
    server.hang(10);
    const started = Date.now();
    const error = await rejection(echo());
    expect(error).toMatchObject({ code: 'WNW_ERR_SCORE_TIMEOUT', details: { timeoutMs: 300 } });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('tells a caller abort from a timeout', async () => {
    const server = await serve('a');
    connect([server.url]);
    server.hang(1);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user went away')), 30);
    expect((await rejection(echo({}, controller.signal))).code).toBe('WNW_ERR_OP_ABORTED');
  });

  it('stops waiting between attempts when the caller aborts', async () => {
    const server = await serve('a');
    connect([server.url], { timeoutMs: 5_000 });
    server.fail(503, 1, { retryAfter: '2' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    expect((await rejection(echo({}, controller.signal))).code).toBe('WNW_ERR_OP_ABORTED');
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('reports a schema mismatch with the path of the bad field, and does not retry it', async () => {
    const server = await serve('a');
    connect([server.url]);
    server.malformed(1, JSON.stringify({ echo: 1, server: 7 }));
    const error = await rejection(echo());
    expect(error.code).toBe('WNW_ERR_SCORE_RESPONSE');
    expect(error.message).toMatch(/server: .*expected string/i);
    expect(server.requests).toHaveLength(1);
  });

  it('refuses calls after close, and close is idempotent', async () => {
    const server = await serve('a');
    connect([server.url]);
    await echo();
    await client!.close();
    await client!.close();
    expect((await rejection(echo())).code).toBe('WNW_ERR_OP_ABORTED');
  });

  it('rejects a configuration without URLs or with a bad one', () => {
    expect(() => createHttpClient({ urls: [], timeoutMs: 1, retries: 0 })).toThrow(
      expect.objectContaining({ code: 'WNW_ERR_CFG_INVALID' }),
    );
    expect(() => createHttpClient({ urls: ['not a url'], timeoutMs: 1, retries: 0 })).toThrow(
      expect.objectContaining({ code: 'WNW_ERR_CFG_INVALID' }),
    );
  });
});

describe('Retry-After', () => {
  it('reads delta-seconds and HTTP dates', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3_000);
    expect(retryAfterMs('Wed, 01 Jan 2025 00:00:05 GMT', now)).toBe(5_000);
    expect(retryAfterMs('Tue, 31 Dec 2024 23:59:00 GMT', now)).toBe(0);
    expect(retryAfterMs(undefined, now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
  });
});
