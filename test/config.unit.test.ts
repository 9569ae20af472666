import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('configuration', () => {
  it('has working defaults with an empty environment', () => {
    const config = loadConfig({ env: {} });
    expect(config.server).toMatchObject({ host: '127.0.0.1', port: 8080, api_keys: [], data_dir: '.winnower', repo_roots: [] });
    expect(config.scorer.backend).toBe('onnx');
    expect(config.sandbox.provider).toBe('local');
  });

  it('reads the documented WINNOWER_* variables', () => {
    const config = loadConfig({
      env: {
        WINNOWER_HOST: '0.0.0.0',
        WINNOWER_PORT: '9000',
        WINNOWER_API_KEYS: 'first-key-123, second-key-456',
        WINNOWER_DATA_DIR: '/var/lib/winnower',
        WINNOWER_REPO_ROOTS: '/srv/repos',
        WINNOWER_SCORER: 'sglang',
        WINNOWER_SCORER_MODEL: 'value-4b',
        WINNOWER_SCORER_URLS: 'http://a:30000,http://b:30000',
        WINNOWER_SCORER_KEY: 'scorer-key',
        WINNOWER_SANDBOX: 'orchard',
        WINNOWER_POLICY_URL: 'http://policy:8000/v1',
        WINNOWER_POLICY_MODEL: 'agent',
        WINNOWER_POLICY_KEY: 'policy-key',
        WINNOWER_POLICY_MODE: 'text',
        WINNOWER_LOG_LEVEL: 'debug',
      },
    });
    expect(config.server).toMatchObject({
      host: '0.0.0.0',
      port: 9000,
      api_keys: ['first-key-123', 'second-key-456'],
      data_dir: '/var/lib/winnower',
      repo_roots: ['/srv/repos'],
    });
    expect(config.scorer).toMatchObject({
      backend: 'sglang',
      model: 'value-4b',
      urls: ['http://a:30000', 'http://b:30000'],
      apiKey: 'scorer-key',
    });
    expect(config.sandbox.provider).toBe('orchard');
    expect(config.policy).toEqual({
      url: 'http://policy:8000/v1',
      model: 'agent',
      api_key: 'policy-key',
      mode: 'text',
      allow_request_urls: true,
    });
    expect(loadConfig({ env: { WINNOWER_POLICY_FROM_REQUESTS: 'false' } }).policy.allow_request_urls).toBe(false);
    expect(config.log_level).toBe('debug');
  });

  it('treats an empty variable as unset', () => {
    const config = loadConfig({ env: { WINNOWER_POLICY_URL: '', WINNOWER_PORT: '', WINNOWER_CONFIG: '' } });
    expect(config.policy.url).toBeUndefined();
    expect(config.server.port).toBe(8080);
  });

  it('layers file < environment < flags', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wnw-config-'));
    dirs.push(dir);
    const file = join(dir, 'winnower.yaml');
    writeFileSync(
      file,
      'server:\n  port: 7000\n  host: 10.0.0.1\nscorer:\n  backend: vllm\n  model: m\n  urls: [http://v:8000]\n  timeoutMs: 5000\n',
    );
    const config = loadConfig({ file, env: { WINNOWER_PORT: '7100' }, overrides: { server: { host: '127.0.0.2' } } });
    expect(config.server.port).toBe(7100);
    expect(config.server.host).toBe('127.0.0.2');
    expect(config.scorer).toMatchObject({ backend: 'vllm', model: 'm', timeoutMs: 5000 });
  });

  it('names the bad field', () => {
    expect(() => loadConfig({ env: { WINNOWER_PORT: '99999' } })).toThrow(
      expect.objectContaining({ code: 'WNW_ERR_CFG_INVALID', details: { field: 'server.port' } }),
    );
    expect(() => loadConfig({ env: { WINNOWER_SANDBOX: 'kvm' } })).toThrow(/sandbox\.provider/);
    expect(() => loadConfig({ env: {}, file: '/nonexistent/winnower.yaml' })).toThrow(
      expect.objectContaining({ code: 'WNW_ERR_CFG_INVALID' }),
    );
  });
});

describe('the example configurations', () => {
  it('examples/config/scale-out.yaml is a valid configuration, and its scorer and sandbox settings are accepted', async () => {
    const file = new URL('../examples/config/scale-out.yaml', import.meta.url).pathname;
    const config = loadConfig({ file, env: {} });
    expect(config.scorer).toMatchObject({ backend: 'sglang', urls: ['http://value-0.value:30000', 'http://value-1.value:30000'] });
    expect(config.sandbox.provider).toBe('orchard');
    expect(config.policy.allow_request_urls).toBe(false);
    const { ScorerConfig } = await import('../src/scoring/registry.js');
    expect(ScorerConfig.safeParse(config.scorer).success).toBe(true);
    const { createSandboxProvider } = await import('../src/sandbox/registry.js');
    const provider = await createSandboxProvider(config.sandbox.provider, config.sandbox.settings);
    expect(provider.name).toBe('orchard');
    await provider.close();
  });
});
