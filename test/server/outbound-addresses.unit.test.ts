/**
 * Where a request may point the server (docs/design/05-defects-found.md#D8): odd `repo.url` values are a 400
 * naming the field at submit, whatever the configuration; `server.repo_hosts` and
 * `server.policy_hosts`, when set, confine clones and policy calls to the hosts they list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostAllowed } from '../../src/server/guards/outbound-hosts.js';
import { checkRepoUrl } from '../../src/server/guards/repo-url.js';
import { startTestApp, type TestApp } from './test-app.js';

const replay = {
  kind: 'replay',
  recordings: [{ id: 'r', instance_id: 'i', source: 's', messages: [{ role: 'assistant', content: 'hi' }] }],
};
const PATCH = 'diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';

function expectRefused(
  response: { statusCode: number; json(): { error: { code: string; message: string; details: { field: string; setting?: string } } } },
  field: string,
  setting?: string,
) {
  expect(response.statusCode).toBe(400);
  const { error } = response.json();
  expect(error.code).toBe('WNW_ERR_INPUT_INVALID');
  expect(error.details.field).toBe(field);
  expect(error.message).toContain(field);
  if (setting) expect(error.details.setting).toBe(setting);
}

describe('outbound addresses', () => {
  let open: TestApp;
  let confined: TestApp;

  beforeAll(async () => {
    open = await startTestApp();
    confined = await startTestApp({ repoHosts: ['github.com', '*.example.org'], policyHosts: ['gpu-1:8000'] });
  });

  afterAll(async () => {
    await open?.close();
    await confined?.close();
  });

  it.each([
    'javascript:alert(1)',
    'data:text/plain,hello',
    '-oProxyCommand=touch /tmp/pwned',
    '--upload-pack=touch /tmp/pwned',
    'ext::sh -c touch% /tmp/pwned',
    'fd::3',
    'ftp://example.org/repo.git',
    'not a url',
  ])('refuses repo.url %j at submit with a 400 naming body.repo.url, without any allowlist', async (url) => {
    const response = await open.app.inject({ method: 'POST', url: '/solve', payload: { issue: 'x', repo: { url }, policy: replay } });
    expectRefused(response, 'body.repo.url');
  });

  it('refuses the same in /rerank with verification, naming body.task.repo.url', async () => {
    const payload = {
      task: { instance_id: 'i', problem_statement: 'x', repo: { url: 'javascript:alert(1)' }, test_command: 'true' },
      verify: true,
      candidates: [{ id: 'a', patch: PATCH }],
    };
    expectRefused(await open.app.inject({ method: 'POST', url: '/rerank', payload }), 'body.task.repo.url');
  });

  it('with server.repo_hosts, refuses a remote repository on another host, in every git syntax', async () => {
    for (const url of [
      'https://gitlab.com/org/repo.git',
      'http://127.0.0.1:8080/repo.git',
      'ssh://git@evil.test/repo',
      'git@evil.test:org/repo.git',
      'git://10.0.0.1/repo',
    ]) {
      const response = await confined.app.inject({ method: 'POST', url: '/solve', payload: { issue: 'x', repo: { url }, policy: replay } });
      expectRefused(response, 'body.repo.url', 'server.repo_hosts');
    }
  });

  it("with server.policy_hosts, refuses a policy server on another host or port, the test writers' too", async () => {
    const policy = (url: string) => ({ kind: 'openai', url, model: 'm' });
    const base = { issue: 'x', repo: { url: 'https://github.com/org/repo.git' } };
    for (const url of ['http://127.0.0.1:8080/v1', 'http://gpu-1:9000/v1', 'http://169.254.169.254/latest']) {
      expectRefused(
        await confined.app.inject({ method: 'POST', url: '/solve', payload: { ...base, policy: policy(url) } }),
        'body.policy.url',
        'server.policy_hosts',
      );
    }
    const writers = {
      ...base,
      policy: policy('http://gpu-1:8000/v1'),
      verify: { enabled: true, test_command: 'true', reproduction: { policy: policy('http://127.0.0.1:1/v1') } },
    };
    expectRefused(
      await confined.app.inject({ method: 'POST', url: '/solve', payload: writers }),
      'body.verify.reproduction.policy.url',
      'server.policy_hosts',
    );
  });

  it('accepts what git remotes look like, and the hosts an allowlist names', () => {
    for (const url of [
      'https://github.com/org/repo.git',
      'ssh://git@github.com/org/repo',
      'git@github.com:org/repo.git',
      'github.com:org/repo',
      'git://github.com/org/repo',
      'file:///srv/repo',
      '/srv/repo',
    ]) {
      expect(() => checkRepoUrl(url, 'body.repo.url', [])).not.toThrow();
    }
    for (const url of [
      'https://github.com/org/repo.git',
      'https://git.example.org/repo',
      'git@github.com:org/repo.git',
      '/srv/local-repos-are-repo_roots-business',
    ]) {
      expect(() => checkRepoUrl(url, 'body.repo.url', ['github.com', '*.example.org'])).not.toThrow();
    }
    expect(hostAllowed({ host: 'example.org', port: '' }, ['*.example.org'])).toBe(false);
    expect(hostAllowed({ host: 'gpu-1', port: '8000' }, ['GPU-1:8000'])).toBe(true);
    expect(hostAllowed({ host: 'gpu-1', port: '8001' }, ['gpu-1:8000'])).toBe(false);
    expect(hostAllowed({ host: 'gpu-1', port: '8001' }, ['gpu-1'])).toBe(true);
  });
});
