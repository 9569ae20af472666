/**
 * Hostile and malformed bodies, table-driven: each one is a 4xx whose error names the field (or
 * the problem), and the server still answers health checks and a valid request afterwards.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_DEPTH } from '../../src/server/guards/body-check.js';
import { gitRepo } from '../server/git-repo.js';
import { startTestApp, type TestApp } from '../server/test-app.js';

const task = { instance_id: 'demo__demo-1', problem_statement: 'x should be 2' };
const PATCH = 'diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';
const scoreBody = (candidate: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  task,
  candidates: [{ id: 'c0', patch: PATCH, ...candidate }],
  ...extra,
});
const json = (value: unknown) => Buffer.from(JSON.stringify(value));
/** A body with `meta` nested `depth` objects deep, written as text (serializing it would overflow the test's own stack). */
const deepMeta = (depth: number) =>
  Buffer.from(JSON.stringify(scoreBody({ meta: {} })).replace('"meta":{}', `"meta":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));
const newFile = (path: string) =>
  `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+pwned\n`;

interface Case {
  name: string;
  method?: 'POST' | 'GET';
  url: string;
  body?: Buffer;
  status: number;
  /** error.details.field, or a part of the message when the problem is not a field. */
  field?: string;
  message?: RegExp;
}

describe('hostile and malformed input', () => {
  let server: TestApp;
  // Made when the file is collected: the table below names paths under it.
  const root = mkdtempSync(join(tmpdir(), 'wnw-bad-input-'));
  const repo = join(root, 'allowed', 'repo');
  beforeAll(async () => {
    gitRepo(repo);
    server = await startTestApp({ valueModel: 'bundled', bodyLimitBytes: 1024 * 1024, repoRoots: [join(root, 'allowed')] });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const solve = (extra: Record<string, unknown>) =>
    json({ issue: 'x should be 2', repo: { path: repo }, n: 1, verify: { enabled: false }, ...extra });
  const cases = (): Case[] => [
    // wrong types
    { name: 'candidates not an array', url: '/score', body: json({ task, candidates: 'x' }), status: 400, field: 'body.candidates' },
    {
      name: 'problem_statement a number',
      url: '/score',
      body: json({ task: { ...task, problem_statement: 5 }, candidates: [{ id: 'c0', patch: PATCH }] }),
      status: 400,
      field: 'body.task.problem_statement',
    },
    {
      name: 'messages a string',
      url: '/rerank',
      body: json(scoreBody({ messages: 'hi' })),
      status: 400,
      field: 'body.candidates.0.messages',
    },
    { name: 'negative budget', url: '/score', body: json(scoreBody({}, { budget_tokens: -1 })), status: 400, field: 'body.budget_tokens' },
    { name: 'n a string', url: '/solve', body: solve({ n: '4' }), status: 400, field: 'body.n' },
    { name: 'unknown field', url: '/score', body: json(scoreBody({ patchh: PATCH })), status: 400, field: 'body.candidates.0.patchh' },
    { name: 'not JSON', url: '/score', body: Buffer.from('{"task": '), status: 400, message: /JSON/ },
    {
      name: '__proto__ key',
      url: '/score',
      body: Buffer.from(JSON.stringify(scoreBody({})).replace('"id":"c0"', '"id":"c0","__proto__":{"polluted":1}')),
      status: 400,
      message: /JSON/,
    },
    // huge strings
    {
      name: 'body past server.body_limit_bytes',
      url: '/score',
      body: json(scoreBody({}, { task: { ...task, problem_statement: 'x'.repeat(2 * 1024 * 1024) } })),
      status: 413,
    },
    {
      name: 'huge candidate id',
      url: '/score',
      body: json(scoreBody({ id: 'i'.repeat(10_000) })),
      status: 400,
      field: 'body.candidates.0.id',
    },
    {
      name: 'huge instance id',
      url: '/rerank',
      body: json({ ...scoreBody({}), task: { ...task, instance_id: 'i'.repeat(10_000) } }),
      status: 400,
      field: 'body.task.instance_id',
    },
    { name: 'NUL in an id', url: '/score', body: json(scoreBody({ id: 'c\u00000' })), status: 400, field: 'body.candidates.0.id' },
    // deep nesting
    {
      name: `meta nested ${MAX_BODY_DEPTH + 1} deep`,
      url: '/score',
      body: deepMeta(MAX_BODY_DEPTH + 1),
      status: 400,
      field: 'body.candidates.0.meta.a.a',
    },
    { name: 'meta nested 100000 deep', url: '/rerank', body: deepMeta(100_000), status: 400, message: /nested deeper than/ },
    {
      name: 'arrays nested 100000 deep',
      url: '/solve',
      body: Buffer.from(`{"issue":${'['.repeat(100_000)}${']'.repeat(100_000)}}`),
      status: 400,
      message: /nested deeper than/,
    },
    // invalid UTF-8
    {
      name: 'invalid UTF-8 byte',
      url: '/score',
      body: Buffer.concat([
        Buffer.from('{"task":{"instance_id":"a","problem_statement":"'),
        Buffer.from([0xc3, 0x28, 0xff]),
        Buffer.from('"},"candidates":[{"id":"c0","patch":""}]}'),
      ]),
      status: 400,
      field: 'body',
      message: /UTF-8/,
    },
    {
      name: 'overlong UTF-8 encoding of "/"',
      url: '/score',
      body: Buffer.concat([
        Buffer.from('{"task":{"instance_id":"a'),
        Buffer.from([0xc0, 0xaf]),
        Buffer.from('","problem_statement":"b"},"candidates":[{"id":"c0","patch":""}]}'),
      ]),
      status: 400,
      message: /UTF-8/,
    },
    // traversal in paths
    {
      name: 'template name with ../',
      url: '/score',
      body: json(scoreBody({}, { template: '../../../etc/passwd' })),
      status: 400,
      field: 'body.template',
    },
    {
      name: 'agent config with ../',
      url: '/solve',
      body: solve({ agent: { config: '../../../etc/passwd' } }),
      status: 400,
      field: 'body.agent.config',
    },
    {
      name: 'repo path escaping repo_roots with ..',
      url: '/solve',
      body: solve({ repo: { path: `${join(root, 'allowed')}/../../../etc` } }),
      status: 400,
      message: /server\.repo_roots/,
    },
    { name: 'job id with ../', method: 'GET', url: '/jobs/..%2F..%2F..%2Fetc%2Fpasswd', status: 404 },
    // patches that write outside the repository or into .git
    {
      name: 'patch writing ../outside',
      url: '/rerank',
      body: json(scoreBody({ patch: newFile('../outside.txt') })),
      status: 400,
      field: 'body.candidates.0.patch',
      message: /leaves the repository/,
    },
    {
      name: 'patch writing deep ../',
      url: '/score',
      body: json(scoreBody({ patch: newFile('src/../../../../etc/cron.d/x') })),
      status: 400,
      field: 'body.candidates.0.patch',
    },
    {
      name: 'patch writing an absolute path',
      url: '/rerank',
      body: json(scoreBody({ patch: 'diff --git a/a.py b/a.py\n--- a/a.py\n+++ /etc/passwd\n@@ -1 +1 @@\n-x = 1\n+x = 2\n' })),
      status: 400,
      message: /is absolute/,
    },
    {
      name: 'patch writing a git hook',
      url: '/rerank',
      body: json(scoreBody({ patch: newFile('.git/hooks/post-checkout') })),
      status: 400,
      field: 'body.candidates.0.patch',
      message: /into \.git/,
    },
    {
      name: 'patch writing .GIT/config (case)',
      url: '/score',
      body: json(scoreBody({ patch: newFile('.GIT/config') })),
      status: 400,
      message: /into \.git/,
    },
    {
      name: 'patch writing a submodule .git',
      url: '/score',
      body: json(scoreBody({ patch: newFile('vendor/lib/.git/config') })),
      status: 400,
      message: /into \.git/,
    },
    {
      name: 'patch renaming into .git',
      url: '/rerank',
      body: json(scoreBody({ patch: 'diff --git a/a.py b/.git/config\nsimilarity index 100%\nrename from a.py\nrename to .git/config\n' })),
      status: 400,
      message: /into \.git/,
    },
    {
      name: 'quoted patch path with ..',
      url: '/score',
      body: json(
        scoreBody({
          patch: 'diff --git "a/x\\t/../../y" "b/x\\t/../../y"\n--- "a/x\\t/../../y"\n+++ "b/x\\t/../../y"\n@@ -1 +1 @@\n-1\n+2\n',
        }),
      ),
      status: 400,
      field: 'body.candidates.0.patch',
    },
    {
      name: 'test_patch writing into .git',
      url: '/rerank',
      body: json({ ...scoreBody({}), task: { ...task, test_patch: newFile('.git/hooks/pre-commit') } }),
      status: 400,
      field: 'body.task.test_patch',
    },
    {
      name: '/solve test_patch writing outside',
      url: '/solve',
      body: solve({ verify: { enabled: true, test_command: 'true', test_patch: newFile('../x') } }),
      status: 400,
      field: 'body.verify.test_patch',
    },
  ];

  it.each(cases().map((each) => [each.name, each] as const))('%s: a 4xx naming the problem', async (_name, each) => {
    const response = await server.app.inject({
      method: each.method ?? 'POST',
      url: each.url,
      ...(each.body ? { payload: each.body, headers: { 'content-type': 'application/json' } } : {}),
    });
    expect(response.statusCode, response.body.slice(0, 400)).toBe(each.status);
    const error = response.json().error;
    expect(error.code).toMatch(/^WNW_ERR_/);
    if (each.field) expect(error.details?.field).toBe(each.field);
    if (each.message) expect(error.message).toMatch(each.message);
    // The error never echoes a huge input back.
    expect(response.body.length).toBeLessThan(4096);
  });

  it('accepts what only looks dangerous: ".github/", a removed "-- /etc" line, a quoted path with spaces', async () => {
    const patch = [
      newFile('.github/workflows/ci.yml'),
      'diff --git a/q.sql b/q.sql\n--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,1 @@\n-- /etc/passwd is not a path here\n select 1;\n',
      'diff --git "a/my file.py" "b/my file.py"\n--- "a/my file.py"\n+++ "b/my file.py"\n@@ -1 +1 @@\n-1\n+2\n',
    ].join('');
    const response = await server.app.inject({ method: 'POST', url: '/score', payload: scoreBody({ patch }) });
    expect(response.statusCode, response.body).toBe(200);
  });

  it('is healthy after all of it: health checks, a valid /score and nothing stored', async () => {
    expect((await server.app.inject('/healthz')).statusCode).toBe(200);
    expect((await server.app.inject('/readyz')).statusCode).toBe(200);
    const response = await server.app.inject({ method: 'POST', url: '/score', payload: scoreBody({}) });
    expect(response.statusCode).toBe(200);
    expect(response.json().scores[0].value).toBeGreaterThan(0);
    expect(await server.store.listJobs()).toEqual([]);
  });
});
