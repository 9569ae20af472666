/**
 * Inputs that once passed the submit check and failed only later, inside every rollout or every
 * git call, are a 400 at submit naming the field (issue 27): a git ref with a NUL byte or of
 * 200,000 characters, an API key that cannot be sent in a header, `"stop_rule": null`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createOrchardProvider } from '../../src/sandbox/providers/orchard/provider.js';
import { SolveRequest } from '../../src/solve/solve-request.js';
import { gitRepo } from './git-repo.js';
import { startTestApp, type TestApp } from './test-app.js';

const PATCH = 'diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';
const recording = { id: 'r', instance_id: 'i', source: 's', messages: [{ role: 'assistant', content: 'done' }] };

describe('refused at submit, naming the field', () => {
  let scratch: string;
  let repo: string;
  let server: TestApp;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'wnw-submit-'));
    repo = gitRepo(join(scratch, 'repo'));
    server = await startTestApp();
  });

  afterAll(async () => {
    await server?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const solveBody = (extra: Record<string, unknown>) => ({
    issue: 'x should be 2',
    repo: { path: repo },
    n: 1,
    policy: { kind: 'replay', recordings: [recording] },
    scoring: { enabled: false },
    ...extra,
  });

  async function refused(url: string, payload: Record<string, unknown>, field: string) {
    const response = await server.app.inject({ method: 'POST', url, payload });
    expect(response.statusCode, response.body.slice(0, 300)).toBe(400);
    const { error } = response.json();
    expect(error.code).toBe('WNW_ERR_INPUT_INVALID');
    expect(error.details.field).toBe(field);
    expect(error.message.startsWith(`${field}:`), error.message).toBe(true);
    return error as { message: string };
  }

  const badRefs: Array<[string, string]> = [
    ['a NUL byte', 'HEAD\u0000'],
    ['a line break', 'main\nHEAD'],
    ['an escape character', 'ma\u001bin'],
    ['200,000 characters', 'a'.repeat(200_000)],
    ['257 characters', 'a'.repeat(257)],
  ];

  // A URL: nothing on the host would look at the commit before the rollouts clone it.
  it.each(badRefs)('refuses a /solve repo.commit with %s', async (_, commit) => {
    const error = await refused('/solve', solveBody({ repo: { url: 'https://git.example.com/r.git', commit } }), 'body.repo.commit');
    expect(error.message).toMatch(/git ref/);
  });

  it.each(badRefs)('refuses a /rerank and /score task.repo.base_commit with %s', async (_, base_commit) => {
    const task = { instance_id: 'demo__demo-1', problem_statement: 'x', repo: { path: repo, base_commit } };
    for (const url of ['/rerank', '/score'])
      expect((await refused(url, { task, candidates: [{ id: 'a', patch: PATCH }] }, 'body.task.repo.base_commit')).message).toMatch(
        /git ref/,
      );
  });

  it('accepts a git ref of 256 characters at the schema, and names it only when the repository lacks it', async () => {
    const error = await refused('/solve', solveBody({ repo: { path: repo, commit: 'a'.repeat(256) } }), 'body.repo.commit');
    expect(error.message).toContain('not found in');
  });

  const badKeys: Array<[string, string]> = [
    ['a NUL byte', 'sk-\u0000abc'],
    ['a CR', 'sk-abc\r'],
    ['a LF', 'sk-abc\nX-Injected: 1'],
    ['a tab', 'sk-\tabc'],
  ];
  const openai = (api_key: string) => ({ kind: 'openai', url: 'http://127.0.0.1:9/v1', model: 'm', api_key });

  it.each(badKeys)('refuses a policy.api_key with %s, wherever a policy is named', async (_, key) => {
    for (const [extra, field] of [
      [{ policy: openai(key) }, 'body.policy.api_key'],
      [{ policy: { kind: 'anthropic', url: 'http://127.0.0.1:9/v1', model: 'm', api_key: key } }, 'body.policy.api_key'],
      [{ policies: [{ n: 1, policy: openai(key) }] }, 'body.policies.0.policy.api_key'],
      [
        { verify: { enabled: true, test_command: 'true', reproduction: { n: 1, policy: openai(key) } } },
        'body.verify.reproduction.policy.api_key',
      ],
    ] as const) {
      const error = await refused('/solve', solveBody(extra), field);
      expect(error.message).toContain('HTTP header');
      // The key itself is never echoed back.
      expect(error.message).not.toContain(key);
    }
  });

  it('accepts an ordinary API key', async () => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/solve',
      payload: solveBody({ policy: openai('sk-proj_AB-12.x~=') }),
    });
    expect(response.statusCode, response.body.slice(0, 300)).toBe(202);
    await server.jobs.cancel(response.json().job_id).catch(() => undefined);
  });
});

describe('"stop_rule": null', () => {
  let server: TestApp;
  beforeAll(async () => {
    server = await startTestApp();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('is a 400 naming body.stop_rule: leave the field out for no stop rule', async () => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/solve',
      payload: { issue: 'x', image: 'python:3.12', policy: { kind: 'replay', recordings: [recording] }, stop_rule: null },
    });
    expect(response.statusCode, response.body.slice(0, 300)).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'WNW_ERR_INPUT_INVALID', details: { field: 'body.stop_rule' } });
  });

  it('still means "no stop rule" when left out, and a given rule gets its defaults', () => {
    const base = { issue: 'x', image: 'python:3.12' };
    expect(SolveRequest.parse(base).stop_rule).toBeNull();
    expect(SolveRequest.parse({ ...base, stop_rule: {} }).stop_rule).toEqual({
      min_value: 0.8,
      require_resolved: true,
      require_checks: false,
    });
    expect(SolveRequest.safeParse({ ...base, stop_rule: null }).success).toBe(false);
  });
});

describe('API keys in the config that no header could carry', () => {
  const refusedConfig = (env: Record<string, string>, field: string) =>
    expect(() => loadConfig({ env })).toThrow(expect.objectContaining({ code: 'WNW_ERR_CFG_INVALID', details: { field } }));

  it.each([
    ['WINNOWER_POLICY_KEY', 'policy.api_key'],
    ['WINNOWER_SCORER_KEY', 'scorer.api_key'],
  ])('refuses %s with a line break, naming %s', (name, field) => {
    refusedConfig({ [name]: 'sk-abc\nX-Injected: 1' }, field);
    refusedConfig({ [name]: 'sk-\u0000abc' }, field);
    expect(() => loadConfig({ env: { [name]: 'sk-abc-123' } })).not.toThrow();
  });

  it('refuses a server API key that no client could send', () => {
    refusedConfig({ WINNOWER_API_KEYS: 'good-key-1234,bad-key\u00001234' }, 'server.api_keys.1');
    expect(loadConfig({ env: { WINNOWER_API_KEYS: 'good-key-1234' } }).server.api_keys).toEqual(['good-key-1234']);
  });

  it('refuses a sandbox API key with a line break: the one sandbox serve requires and the one sent to Orchard', () => {
    expect(() => loadConfig({ env: {}, overrides: { sandbox: { serve: { api_key: 'key-123\nX: 1' } } } })).toThrow(
      expect.objectContaining({ code: 'WNW_ERR_CFG_INVALID', details: { field: 'sandbox.serve.api_key' } }),
    );
    expect(() => createOrchardProvider({ apiKey: 'key-123\r\n' })).toThrow(
      expect.objectContaining({
        code: 'WNW_ERR_CFG_INVALID',
        details: expect.objectContaining({ field: expect.stringMatching(/^sandbox\.settings\.api_?key$/i) }),
      }),
    );
    expect(() => createOrchardProvider({ apiKey: 'key-123' })).not.toThrow();
  });
});
