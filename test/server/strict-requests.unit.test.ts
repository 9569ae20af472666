/**
 * A request says what it means or is refused: unknown keys (typos) in /solve, /rerank and /score
 * bodies and in the config file are a 400 naming the key, and options that could only fail later
 * (an unknown template, a budget too small for it, verification without tests, an unknown agent
 * config, a recording with nothing to replay) are a 400 at submit naming the field.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { packageRoot } from '../../src/util/package-root.js';
import { gitRepo } from './git-repo.js';
import { startTestApp, type TestApp } from './test-app.js';

const PATCH = 'diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';
const task = { instance_id: 'demo__demo-1', problem_statement: 'x should be 2' };
const recording = { id: 'r', instance_id: 'i', source: 's', messages: [{ role: 'assistant', content: 'done' }] };

describe('strict requests', () => {
  let scratch: string;
  let repo: string;
  let server: TestApp;
  let app: TestApp['app'];

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'wnw-strict-'));
    repo = gitRepo(join(scratch, 'repo'));
    server = await startTestApp({ valueModel: 'bundled' });
    app = server.app;
  });

  afterAll(async () => {
    await server?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const solveBody = (extra: Record<string, unknown>) => ({
    issue: 'x',
    repo: { path: repo },
    n: 1,
    policy: { kind: 'replay', recordings: [recording] },
    ...extra,
  });

  /** Posts and expects a 400 naming `field`, in details and at the start of the message; returns the error. */
  async function refused(url: string, payload: unknown, field: string, code = 'WNW_ERR_INPUT_INVALID') {
    const response = await app.inject({ method: 'POST', url, payload: payload as Record<string, unknown> });
    expect(response.statusCode, response.body).toBe(400);
    const { error } = response.json();
    expect(error.code).toBe(code);
    expect(error.details.field).toBe(field);
    expect(error.message.startsWith(`${field}:`), error.message).toBe(true);
    return error as { message: string; details: Record<string, unknown> };
  }

  it.each([
    [{ verfy: { enabled: true, test_command: 'false' } }, 'body.verfy'],
    [{ verify: { enabled: true, test_comand: 'false' } }, 'body.verify.test_comand'],
    [{ repo: { path: '/tmp/r', comit: 'HEAD' } }, 'body.repo.comit'],
    [{ scoring: { template: 'judge-v1', budget: 100 } }, 'body.scoring.budget'],
    [{ agent: { step_limt: 3 } }, 'body.agent.step_limt'],
    [{ stop_rule: { min_value: 0.5, require_resolve: false } }, 'body.stop_rule.require_resolve'],
    [{ policy: { kind: 'openai', url: 'http://127.0.0.1:9/v1', model: 'm', temprature: 0 } }, 'body.policy.temprature'],
    [{ policy: { kind: 'replay', recordings: [{ ...recording, pach: PATCH }] } }, 'body.policy.recordings.0.pach'],
  ])('/solve refuses an unknown key, naming it (%j)', async (extra, field) => {
    const error = await refused('/solve', solveBody(extra), field);
    expect(error.message).toContain('unknown field');
  });

  it.each([
    [{ setup: ['make'], fork: { at: 'bogus' } }, 'body.fork.at', /one of "setup", "first-edit" or a step number/],
    [{ setup: ['make'], fork: { at: 0 } }, 'body.fork.at', /expected number to be >0/],
    [{ setup: ['make'], fork: true }, 'body.fork', /expected object/],
    [{ setup: ['make'], fork: { at: 'setup', count: 2 } }, 'body.fork.count', /unknown field/],
    [{ fork: { at: 'setup' } }, 'body.fork.at', /forks after the setup commands: give setup/],
    [{ fork: false }, 'body.fork', /give setup/],
    [{ setup_timeout_s: 60 }, 'body.setup_timeout_s', /give setup/],
    [{ setup: [] }, 'body.setup', /./],
    [{ setup: [''] }, 'body.setup.0', /./],
    [
      { setup: ['make'], fork: { at: 'first-edit' }, agent: { config: 'default', harness: 'pi' } },
      'body.fork.at',
      /the harness CLI pi cannot be forked mid-run \(its process state is not in a snapshot\): only fork.at "setup"/,
    ],
    [
      { n: 2, fork: { at: 3 }, policies: [{ n: 1 }, { n: 1, agent: { step_limit: 5 } }] },
      'body.fork.at',
      /fork.at 3 shares one policy's prefix: not with policies/,
    ],
    [{ fork: { at: 'first-edit' } }, 'body.fork.at', /a replay policy replays its recording from its first turn/],
  ])('/solve checks setup and fork at submit (%j)', async (extra, field, message) => {
    const error = await refused('/solve', solveBody(extra), field);
    expect(error.message).toMatch(message);
  });

  it.each([
    ['/score', { task, candidates: [{ id: 'a', patch: PATCH }], templat: 'patch-v1' }, 'body.templat'],
    ['/score', { task: { ...task, problem_statment: 'x' }, candidates: [{ id: 'a', patch: PATCH }] }, 'body.task.problem_statment'],
    [
      '/score',
      { task: { ...task, repo: { path: '/tmp/r', base_comit: 'HEAD' } }, candidates: [{ id: 'a', patch: PATCH }] },
      'body.task.repo.base_comit',
    ],
    ['/rerank', { task, candidates: [{ id: 'a', pach: PATCH }] }, 'body.candidates.0.pach'],
    ['/rerank', { task, candidates: [{ id: 'a', patch: PATCH }], verfy: true }, 'body.verfy'],
  ])('%s refuses an unknown key, naming it (%j)', async (url, payload, field) => {
    await refused(url, payload, field);
  });

  it('refuses an unknown scoring template at submit, listing the valid ones', async () => {
    const error = await refused('/solve', solveBody({ scoring: { template: 'bogus' } }), 'body.scoring.template');
    expect(error.message).toContain('judge-v1');
    await refused('/rerank', { task, candidates: [{ id: 'a', patch: PATCH }], template: 'bogus' }, 'body.template');
    await refused('/score', { task, candidates: [{ id: 'a', patch: PATCH }], template: 'bogus' }, 'body.template');
  });

  it('refuses a token budget that cannot hold the template', async () => {
    await refused('/solve', solveBody({ scoring: { budget_tokens: 1 } }), 'body.scoring.budget_tokens');
    const error = await refused('/rerank', { task, candidates: [{ id: 'a', patch: PATCH }], budget_tokens: 16 }, 'body.budget_tokens');
    expect(error.message).toContain('patch-v1');
    await refused('/score', { task, candidates: [{ id: 'a', patch: PATCH }], budget_tokens: 16 }, 'body.budget_tokens');
    // A budget that holds the template is accepted and used.
    const fits = await app.inject({
      method: 'POST',
      url: '/score',
      payload: { task, candidates: [{ id: 'a', patch: PATCH }], budget_tokens: 1024 },
    });
    expect(fits.statusCode).toBe(200);
    expect(fits.json().scores[0].input_tokens).toBeLessThanOrEqual(1024);
  });

  it('refuses /rerank verification that has no tests or no repository to run them in', async () => {
    await refused(
      '/rerank',
      { task: { ...task, repo: { path: repo } }, candidates: [{ id: 'a', patch: PATCH }], verify: true },
      'body.task.test_command',
    );
    await refused(
      '/rerank',
      { task: { ...task, test_command: 'true' }, candidates: [{ id: 'a', patch: PATCH }], verify: true },
      'body.task.repo',
    );
  });

  it.each(['ftp://e/v1', 'ws://127.0.0.1:9/v1', 'file:///x', 'data:text/plain,x', 'gopher://e/', 'mailto:a@b'])(
    'refuses a policy URL with another scheme than http(s), naming body.policy.url (%s)',
    async (url) => {
      const error = await refused('/solve', solveBody({ policy: { kind: 'openai', url, model: 'm' } }), 'body.policy.url');
      expect(error.message).toContain('http or https only');
    },
  );

  it('names an unknown agent config without showing where the server is installed', async () => {
    const error = await refused('/solve', solveBody({ agent: { config: 'nope' } }), 'body.agent.config', 'WNW_ERR_CFG_INVALID');
    expect(error.message).toContain('"nope"');
    expect(error.message).toContain('available: default');
    expect(error.message).not.toContain(packageRoot());
  });

  it('names the recording that has nothing to replay', async () => {
    const silent = { id: 'quiet', instance_id: 'i', source: 's', messages: [{ role: 'user', content: 'hi' }] };
    const error = await refused(
      '/solve',
      solveBody({ n: 2, policy: { kind: 'replay', recordings: [recording, silent] } }),
      'body.policy.recordings.1',
    );
    expect(error.message).toContain('no assistant turns');
  });

  it('names the policy field when there is no policy at all', async () => {
    const { policy: _policy, ...noPolicy } = solveBody({});
    // The server has no default policy either: a configuration gap, named as the request's field.
    await refused('/solve', noPolicy, 'body.policy', 'WNW_ERR_CFG_INVALID');
  });
});

describe('strict configuration file', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const configFile = (text: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'wnw-config-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'winnower.yaml'), text);
    return join(dir, 'winnower.yaml');
  };

  it.each([
    ['server:\n  prot: 9000\n', 'server.prot'],
    ['polcy:\n  url: http://p:8000/v1\n', 'polcy'],
    ['policy:\n  allow_request_url: false\n', 'policy.allow_request_url'],
    ['sandbox:\n  provider: local\n  setting: {}\n', 'sandbox.setting'],
    ['scorer:\n  backend: sglang\n  model: m\n  urls: [http://v:1]\n  timeout: 5\n', 'scorer.timeout'],
  ])('refuses an unknown key, naming it (%j)', (text, field) => {
    expect(() => loadConfig({ file: configFile(text), env: {} })).toThrow(
      expect.objectContaining({ code: 'WNW_ERR_CFG_INVALID', details: { field } }),
    );
    expect(() => loadConfig({ file: configFile(text), env: {} })).toThrow(
      new RegExp(`config field ${field.replace('.', '\\.')}: unknown key`),
    );
  });

  it('refuses a default policy URL with another scheme than http(s)', () => {
    expect(() => loadConfig({ file: configFile('policy:\n  url: ftp://p/v1\n'), env: {} })).toThrow(
      expect.objectContaining({ code: 'WNW_ERR_CFG_INVALID', details: { field: 'policy.url' } }),
    );
    expect(() => loadConfig({ env: { WINNOWER_POLICY_URL: 'ws://p:1/v1' } })).toThrow(/policy\.url: http or https only/);
    expect(loadConfig({ env: { WINNOWER_POLICY_URL: 'https://p/v1' } }).policy.url).toBe('https://p/v1');
  });

  it('still accepts every documented scorer setting', () => {
    const config = loadConfig({
      file: configFile('scorer:\n  backend: sglang\n  model: m\n  urls: [http://v:1]\n  timeout_ms: 5\n  retries: 1\n  batching: false\n'),
      env: {},
    });
    expect(config.scorer).toMatchObject({ timeoutMs: 5, retries: 1, batching: false });
  });
});
