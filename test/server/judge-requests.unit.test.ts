/**
 * The pairwise judge through the API: `judge` on /rerank (against the fake judge server) and the
 * refusals at submit on /rerank and /solve, each naming its field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JudgeOptions } from '../../src/judge/judge-options.js';
import { startFakeJudge, type FakeJudge } from '../fakes/fake-judge.js';
import { startTestApp, type TestApp } from './test-app.js';

const patch = (line: string) => `diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+${line}\n`;
const candidates = [
  { id: 'c1', patch: patch('x = 2'), messages: [] },
  { id: 'c2', patch: patch('x = 3  # JUDGE-PREFERS-ME'), messages: [] },
  { id: 'c3', patch: patch('x = 4'), messages: [] },
];
const task = { instance_id: 'o__r-1', problem_statement: 'x must change' };
const replay = {
  kind: 'replay',
  recordings: [{ id: 'r', instance_id: 'i', source: 's', messages: [{ role: 'assistant', content: 'hi' }] }],
};

function expectRefused(response: { statusCode: number; json(): any }, field: string) {
  expect(response.statusCode).toBe(400);
  const { error } = response.json();
  expect(error.code).toBe('WNW_ERR_INPUT_INVALID');
  expect(error.details.field).toBe(field);
  expect(error.message).toContain(field);
}

describe('judge on /rerank and /solve', () => {
  let fake: FakeJudge;
  let open: TestApp;
  let withDefault: TestApp;
  let confined: TestApp;

  beforeAll(async () => {
    fake = await startFakeJudge({ apiKey: 'sk-judge-12345' });
    open = await startTestApp();
    withDefault = await startTestApp({
      judge: JudgeOptions.parse({ url: `${fake.url}/v1`, model: 'server-judge', api_key: 'sk-judge-12345' }),
    });
    confined = await startTestApp({ policyHosts: ['gpu-1:8000'] });
  });
  afterAll(async () => {
    await open?.close();
    await withDefault?.close();
    await confined?.close();
    await fake?.close();
  });

  it('a request judge with no strategy selects with judge and reports what it did', async () => {
    const response = await open.app.inject({
      method: 'POST',
      url: '/rerank',
      payload: { task, candidates, judge: { url: `${fake.url}/v1`, model: 'req-judge', api_key: 'sk-judge-12345', k: 1 } },
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.selection.strategy).toBe('judge');
    expect(body.selection.chosen).toBe('c2');
    expect(body.selection.reason).toMatch(/pairwise wins by judge req-judge/);
    expect(body.judge).toMatchObject({ model: 'req-judge', strategy: 'judge', pairs: 3, comparisons: 6, usable: 3, error: null });
    expect(body.judge.prompt_tokens).toBeGreaterThan(0);
    expect(response.body).not.toContain('sk-judge-12345');
  });

  it("the server's default judge serves strategy judge and hybrid", async () => {
    const judged = await withDefault.app.inject({ method: 'POST', url: '/rerank', payload: { task, candidates, strategy: 'judge' } });
    expect(judged.statusCode).toBe(200);
    expect(judged.json().judge).toMatchObject({ model: 'server-judge', comparisons: 6 });
    expect(judged.json().selection.chosen).toBe('c2');
    // Unscored and untested, hybrid falls back to consensus, whose cluster order leaves no tie: nothing to ask.
    const before = fake.requests.length;
    const hybrid = await withDefault.app.inject({ method: 'POST', url: '/rerank', payload: { task, candidates, strategy: 'hybrid' } });
    expect(hybrid.statusCode).toBe(200);
    expect(hybrid.json().judge).toMatchObject({ strategy: 'hybrid', tied_before: 0, tied_after: 0, comparisons: 0, error: null });
    expect(fake.requests.length).toBe(before);
    // value reads no judge: the server's default is not asked.
    const value = await withDefault.app.inject({ method: 'POST', url: '/rerank', payload: { task, candidates, strategy: 'value' } });
    expect(value.statusCode).toBe(200);
    expect(value.json().judge).toBeUndefined();
    expect(fake.requests.length).toBe(before);
  });

  it('a judge that cannot be reached does not fail the request: selection goes on and says why', async () => {
    const response = await open.app.inject({
      method: 'POST',
      url: '/rerank',
      payload: { task, candidates, strategy: 'judge', judge: { url: 'http://127.0.0.1:9/v1', model: 'gone', timeout_s: 2 } },
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.judge.error.code).toBe('WNW_ERR_JUDGE_UPSTREAM');
    expect(body.selection.degraded_to).not.toBeNull();
    expect(body.selection.reason).toMatch(
      /^The judge failed \(WNW_ERR_JUDGE_UPSTREAM: .*\), and no candidate had a score, so judge selection fell back to consensus/,
    );
    expect(body.selection.chosen).not.toBeNull();
  });

  it('refuses strategy judge with no judge anywhere, naming body.strategy', async () => {
    expectRefused(
      await open.app.inject({ method: 'POST', url: '/rerank', payload: { task, candidates, strategy: 'judge' } }),
      'body.strategy',
    );
    expectRefused(
      await open.app.inject({
        method: 'POST',
        url: '/solve',
        payload: { issue: 'x', repo: { path: '/tmp' }, policy: replay, strategy: 'judge' },
      }),
      'body.strategy',
    );
  });

  it('refuses a judge with a strategy that reads none, naming body.judge', async () => {
    const judge = { url: `${fake.url}/v1`, model: 'm' };
    expectRefused(
      await open.app.inject({ method: 'POST', url: '/rerank', payload: { task, candidates, strategy: 'value', judge } }),
      'body.judge',
    );
    expectRefused(
      await open.app.inject({
        method: 'POST',
        url: '/solve',
        payload: { issue: 'x', repo: { path: '/tmp' }, policy: replay, strategy: 'robust', judge },
      }),
      'body.judge',
    );
  });

  it.each([
    [{ url: 'ftp://j/v1', model: 'm' }, 'body.judge.url'],
    [{ url: 'http://j/v1' }, 'body.judge.model'],
    [{ url: 'http://j/v1', model: 'm', k: 0 }, 'body.judge.k'],
    [{ url: 'http://j/v1', model: 'm', timeout_s: -1 }, 'body.judge.timeout_s'],
    [{ url: 'http://j/v1', model: 'm', api_key: 'a\nb' }, 'body.judge.api_key'],
  ])('validates judge %j at submit, naming %s', async (judge, field) => {
    const rerank = await open.app.inject({ method: 'POST', url: '/rerank', payload: { task, candidates, judge } });
    expect(rerank.statusCode).toBe(400);
    expect(JSON.stringify(rerank.json().error)).toContain(field);
    const solve = await open.app.inject({
      method: 'POST',
      url: '/solve',
      payload: { issue: 'x', repo: { path: '/tmp' }, policy: replay, judge },
    });
    expect(solve.statusCode).toBe(400);
    expect(JSON.stringify(solve.json().error)).toContain(field);
  });

  it('refuses an unknown judge key', async () => {
    const response = await open.app.inject({
      method: 'POST',
      url: '/rerank',
      payload: { task, candidates, judge: { url: 'http://j/v1', model: 'm', temperature: 1 } },
    });
    expect(response.statusCode).toBe(400);
    expect(JSON.stringify(response.json().error)).toContain('temperature');
  });

  it('confines judge.url to server.policy_hosts when they are set', async () => {
    const judge = { url: 'http://169.254.169.254/v1', model: 'm' };
    expectRefused(await confined.app.inject({ method: 'POST', url: '/rerank', payload: { task, candidates, judge } }), 'body.judge.url');
    expectRefused(
      await confined.app.inject({ method: 'POST', url: '/solve', payload: { issue: 'x', repo: { path: '/tmp' }, policy: replay, judge } }),
      'body.judge.url',
    );
  });
});
