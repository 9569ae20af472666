/**
 * GET /openapi.json describes what the API really answers: the status codes (202 for /solve, 200
 * with ?wait=true), the error shape on every route, the response schemas of jobs, /score and
 * /rerank, the SSE stream, and the API-key schemes. Also: the Bearer scheme in any case.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './test-app.js';

type Spec = Record<string, any>;

describe('the OpenAPI description', () => {
  let openServer: TestApp;
  let keyedServer: TestApp;
  let open: TestApp['app'];
  let keyed: TestApp['app'];
  let spec: Spec;

  beforeAll(async () => {
    openServer = await startTestApp({ apiKeys: [] });
    keyedServer = await startTestApp({ apiKeys: ['secret-key-123'] });
    ({ app: open } = openServer);
    ({ app: keyed } = keyedServer);
    spec = (await open.inject('/openapi.json')).json();
  });

  afterAll(async () => {
    await openServer?.close();
    await keyedServer?.close();
  });

  const schemaOf = (path: string, method: string, status: string) =>
    spec.paths[path][method].responses[status]?.content?.['application/json']?.schema;

  it('gives /solve its real answers: 202 with the job id, 200 with the job for ?wait=true, and the errors', () => {
    const responses = spec.paths['/solve'].post.responses;
    expect(Object.keys(responses).sort()).toEqual(['200', '202', '400', '401', '403', '413', '415', '429', '500', '503']);
    expect(schemaOf('/solve', 'post', '202').required).toEqual(expect.arrayContaining(['job_id', 'status']));
    expect(schemaOf('/solve', 'post', '200').properties).toHaveProperty('candidates');
    expect(responses['200'].description).toMatch(/wait=true/);
  });

  it('documents the error shape {error: {code, message, details}} on every route', () => {
    for (const [path, methods] of Object.entries(spec.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>)) {
      if (path === '/healthz' || path === '/readyz' || path === '/metrics') continue;
      for (const [method] of Object.entries(methods)) {
        if (method === 'head') continue;
        const error = schemaOf(path, method, '500');
        expect(error, `${method} ${path}`).toBeDefined();
        expect(error.required).toEqual(['error']);
        expect(error.properties.error.required).toEqual(expect.arrayContaining(['code', 'message']));
        expect(error.properties.error.properties).toHaveProperty('details');
      }
    }
    expect(spec.paths['/jobs/{id}'].get.responses).toHaveProperty('404');
    expect(spec.paths['/jobs/{id}'].delete.responses).toHaveProperty('409');
  });

  it('describes the responses of jobs, /score and /rerank', () => {
    const job = schemaOf('/jobs/{id}', 'get', '200');
    expect(job.required).toEqual(expect.arrayContaining(['job_id', 'status', 'progress', 'candidates', 'result']));
    expect(job.properties.status.enum).toEqual(expect.arrayContaining(['queued', 'running', 'succeeded', 'interrupted']));
    expect(job.properties.candidates.items.properties).toHaveProperty('verify');
    expect(schemaOf('/jobs/{id}', 'delete', '200').properties).toHaveProperty('job_id');
    expect(schemaOf('/score', 'post', '200').properties.scores.type).toBe('array');
    const rerank = schemaOf('/rerank', 'post', '200');
    expect(rerank.properties.selection.properties).toHaveProperty('chosen');
    expect(rerank.properties).toHaveProperty('chosen_patch');
    const events = spec.paths['/jobs/{id}/events'].get.responses['200'];
    expect(Object.keys(events.content)).toEqual(['text/event-stream']);
    expect(events.description).toMatch(/Last-Event-ID/);
  });

  it('describes POST /admin/model: its body, the loaded model with its identity, and the refusals', () => {
    const responses = spec.paths['/admin/model'].post.responses;
    expect(Object.keys(responses).sort()).toEqual(['200', '400', '401', '403', '415', '422', '429', '500']);
    expect(responses['422'].description).toMatch(/current model keeps serving/);
    expect(responses['403'].description).toMatch(/WNW_ERR_AUTH_ADMIN/);
    const loaded = schemaOf('/admin/model', 'post', '200');
    expect(loaded.required).toEqual(expect.arrayContaining(['backend', 'model', 'identity', 'previous']));
    const body = spec.paths['/admin/model'].post.requestBody.content['application/json'].schema;
    expect(JSON.stringify(body)).toContain('"path"');
    // Every job result, /rerank and /score say which model scored them.
    expect(schemaOf('/rerank', 'post', '200').properties.scored_by).toBeDefined();
    expect(schemaOf('/score', 'post', '200').properties.scored_by).toBeDefined();
    expect(JSON.stringify(schemaOf('/jobs/{id}', 'get', '200').properties.result)).toContain('scored_by');
  });

  it('names the API-key schemes, and requires them on a server with keys (not on its health checks)', async () => {
    expect(spec.components.securitySchemes).toEqual({
      bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      apiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
    });
    expect(spec.security).toBeUndefined();
    const withKeys = (await keyed.inject({ url: '/openapi.json', headers: { 'x-api-key': 'secret-key-123' } })).json();
    expect(withKeys.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
    expect(withKeys.paths['/healthz'].get.security).toEqual([]);
    expect(withKeys.paths['/solve'].post.security).toBeUndefined();
  });

  it('accepts the Bearer scheme in any case', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      expect((await keyed.inject({ url: '/jobs/x', headers: { authorization: `${scheme} secret-key-123` } })).statusCode, scheme).toBe(404);
    }
    expect((await keyed.inject({ url: '/jobs/x', headers: { authorization: 'bearer wrong-key-000' } })).statusCode).toBe(403);
    expect((await keyed.inject({ url: '/jobs/x', headers: { authorization: 'Basic secret-key-123' } })).statusCode).toBe(401);
  });

  it('serializes real answers through those schemas without losing fields', async () => {
    const { store } = openServer;
    await store.createJob({ id: 'j', kind: 'solve', request: {}, status: 'succeeded' });
    await store.putCandidate('j', 0, { status: 'failed', error: { code: 'WNW_ERR_SBX_REPO', message: 'gone' } });
    await store.updateJob('j', {
      result: {
        instance_id: 'i',
        chosen: null,
        selection: { instance_id: 'i', strategy: 'value', degraded_to: null, chosen: null, ranking: [], reason: 'none', extra: 1 },
        candidates: [{ index: 0, status: 'failed', exit: 'error' }],
        rollouts: { planned: 1 },
        compute: { tokens: 0 },
        stopped_early: null,
        duration_ms: 3,
      },
    });
    const response = await open.inject('/jobs/j');
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    expect(body.candidates[0]).toMatchObject({
      index: 0,
      status: 'failed',
      error: { code: 'WNW_ERR_SBX_REPO', message: 'gone' },
      trajectory_id: null,
    });
    expect(body.result).toMatchObject({ stopped_early: null, duration_ms: 3, selection: { extra: 1 }, candidates: [{ exit: 'error' }] });
    const accepted = await open.inject({
      method: 'POST',
      url: '/solve',
      payload: {
        issue: 'x',
        image: '127.0.0.1:9/img:1',
        n: 1,
        policy: {
          kind: 'replay',
          recordings: [{ id: 'r', instance_id: 'i', source: 's', messages: [{ role: 'assistant', content: 'done' }] }],
        },
      },
    });
    expect(accepted.statusCode).toBe(202);
    expect(Object.keys(accepted.json()).sort()).toEqual(['job_id', 'status']);
    await open.winnower.jobs.wait(accepted.json().job_id);
  });
});
