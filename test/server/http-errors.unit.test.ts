/**
 * Every error is `{error: {code, message, details}}` with a WNW code, including those answered
 * before routing (a malformed URL, a path segment too long, headers too large, not HTTP at all),
 * and none echoes the URL back; a known path with the wrong method is a 405 with `Allow`; a
 * DELETE with `content-type: application/json` and no body is a cancel.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnLoopback, startTestApp, type TestApp } from './test-app.js';

/** Writes `raw` to the server and reads the whole answer (the server closes the connection). */
function rawRequest(port: number, raw: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no answer: ${JSON.stringify(text.slice(0, 200))}`));
      resolve({ status: Number(text.split(' ')[1]), headers: text.slice(0, split), body: text.slice(split + 4) });
    });
    socket.write(raw);
  });
}

describe('errors before and around routing', () => {
  let server: TestApp;
  let jobs: TestApp['jobs'];
  let store: TestApp['store'];
  let app: TestApp['app'];
  let port: number;

  beforeAll(async () => {
    server = await startTestApp();
    ({ app, jobs, store } = server);
    ({ port } = await listenOnLoopback(app));
  });

  afterAll(async () => {
    await server?.close();
  });

  const expectShape = (body: string, status: number) => {
    const parsed = JSON.parse(body);
    expect(Object.keys(parsed)).toEqual(['error']);
    expect(parsed.error.code).toMatch(/^WNW_ERR_/);
    expect(typeof parsed.error.message).toBe('string');
    expect(parsed.error.details).toMatchObject({ status });
    return parsed.error as { code: string; message: string };
  };

  it('answers a path segment over the router limit with 414, without echoing it', async () => {
    const long = 'a'.repeat(200);
    const response = await app.inject(`/jobs/${long}`);
    expect(response.statusCode).toBe(414);
    const error = expectShape(response.body, 414);
    expect(error.code).toBe('WNW_ERR_INPUT_INVALID');
    expect(response.body).not.toContain(long.slice(0, 50));
  });

  it('answers a malformed percent-encoding with 400, without echoing it', async () => {
    const response = await app.inject('/jobs/%ZZsecret');
    expect(response.statusCode).toBe(400);
    expectShape(response.body, 400);
    expect(response.body).not.toContain('secret');
  });

  it('answers headers too large (a 100 KB URL) with 431 in the same shape', async () => {
    const url = `/jobs/${'b'.repeat(100_000)}`;
    const response = await rawRequest(port, `GET ${url} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(response.status).toBe(431);
    expect(response.headers).toMatch(/content-type: application\/json/i);
    expectShape(response.body, 431);
    expect(response.body).not.toContain('bbbbbbbbbb');
  });

  it('answers a request that is not HTTP with 400 in the same shape', async () => {
    const response = await rawRequest(port, 'HELLO THERE\r\n\r\n');
    expect(response.status).toBe(400);
    expectShape(response.body, 400);
  });

  it.each([
    ['PUT', '/solve', 'POST'],
    ['GET', '/solve', 'POST'],
    ['PUT', '/jobs/some-id', 'DELETE, GET, HEAD'],
    ['POST', '/jobs/some-id/events', 'GET, HEAD'],
    ['DELETE', '/healthz', 'GET, HEAD'],
  ])('answers %s %s with 405 and Allow: %s', async (method, url, allow) => {
    const response = await app.inject({ method: method as 'PUT', url });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe(allow);
    expect(response.json().error).toMatchObject({ code: 'WNW_ERR_INPUT_INVALID', details: { allow: allow.split(', ') } });
  });

  it('still answers 404 for a path no route has, without its query string', async () => {
    const response = await app.inject('/nope/jobs?token=secret');
    expect(response.statusCode).toBe(404);
    expect(response.json().error.code).toBe('WNW_ERR_INPUT_INVALID');
    expect(response.body).not.toContain('secret');
  });

  it('cancels with DELETE sent as JSON with an empty body', async () => {
    const job = await jobs.start(
      'solve',
      {},
      (_id, { signal }) =>
        new Promise((_resolve, reject) =>
          signal.aborted ? reject(signal.reason) : signal.addEventListener('abort', () => reject(signal.reason)),
        ),
    );
    const response = await app.inject({
      method: 'DELETE',
      url: `/jobs/${job.id}`,
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().status).toBe('cancelled');
    const unknown = await app.inject({ method: 'DELETE', url: '/jobs/unknown', headers: { 'content-type': 'application/json' } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('WNW_ERR_JOB_NOT_FOUND');
  });

  it('still refuses malformed JSON and prototype poisoning', async () => {
    const bad = await app.inject({ method: 'POST', url: '/solve', headers: { 'content-type': 'application/json' }, payload: '{"issue":' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('WNW_ERR_INPUT_INVALID');
    // A body the schema would accept but for the poisoning key, refused by the JSON parser itself
    // (fastify's code, no field): the strict body schema refuses unknown keys too, so a bare 400
    // would not show that the parser's prototype-poisoning protection still holds.
    const jobsBefore = (await store.listJobs()).length;
    const valid =
      '"issue":"x","image":"127.0.0.1:9/img:1","n":1,"policy":{"kind":"replay","recordings":[{"id":"r","instance_id":"i","source":"s","messages":[{"role":"assistant","content":"done"}]}]}';
    for (const poison of ['"__proto__":{"n":2}', '"constructor":{"prototype":{"n":2}}']) {
      const poisoned = await app.inject({
        method: 'POST',
        url: '/solve',
        headers: { 'content-type': 'application/json' },
        payload: `{${valid},${poison}}`,
      });
      expect(poisoned.statusCode, poison).toBe(400);
      expect(poisoned.json().error, poison).toEqual({
        code: 'WNW_ERR_INPUT_INVALID',
        message: expect.stringContaining('not valid JSON'),
        details: { field: 'body', fastify_code: 'FST_ERR_CTP_INVALID_JSON_BODY' },
      });
    }
    // Not JSON at all: the same 400, naming the body.
    const garbled = await app.inject({
      method: 'POST',
      url: '/rerank',
      headers: { 'content-type': 'application/json' },
      payload: '{"task":',
    });
    expect(garbled.statusCode).toBe(400);
    expect(garbled.json().error.details).toMatchObject({ field: 'body', fastify_code: 'FST_ERR_CTP_INVALID_JSON_BODY' });
    expect(await store.listJobs()).toHaveLength(jobsBefore);
    const empty = await app.inject({ method: 'POST', url: '/solve', headers: { 'content-type': 'application/json' }, payload: '' });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().error.details.field).toBe('body');
  });
});
