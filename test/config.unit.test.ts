import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Deprecation, processDeprecationWarner } from '../src/config-keys.js';
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
      'server:\n  port: 7000\n  host: 10.0.0.1\nscorer:\n  backend: vllm\n  model: m\n  urls: [http://v:8000]\n  timeout_ms: 5000\n',
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

/** A config file with `text`, loaded with its deprecations collected. */
function load(text: string): { config: ReturnType<typeof loadConfig>; deprecations: Deprecation[] } {
  const dir = mkdtempSync(join(tmpdir(), 'wnw-config-'));
  dirs.push(dir);
  const file = join(dir, 'winnower.yaml');
  writeFileSync(file, text);
  const deprecations: Deprecation[] = [];
  const config = loadConfig({ file, env: {}, onDeprecation: (deprecation) => deprecations.push(deprecation) });
  return { config, deprecations };
}

const fails = (text: string): { code?: string; message: string; details?: unknown } => {
  try {
    load(text);
  } catch (error) {
    return error as { code?: string; message: string; details?: unknown };
  }
  throw new Error('loaded');
};

describe('config keys: snake_case, mapped to the code once', () => {
  const scorer = 'scorer:\n  backend: vllm\n  model: m\n  urls: [http://v:8000]\n';

  it('reads the snake_case keys of the scorer and the provider settings silently, as the code names them', () => {
    const { config, deprecations } = load(
      `${scorer}  timeout_ms: 5000\n  max_input_tokens: 4096\n  chat_template: /m/tokenizer_config.json\n  label_token_ids: { yes: 1, no: 2 }\n` +
        '  batching: { max_batch_size: 8, window_ms: 2 }\n' +
        'sandbox:\n  provider: orchard\n  settings:\n    base_url: http://o:8000\n    login_shell: true\n    patch: { max_bytes: 1024, default_excludes: false }\n',
    );
    expect(deprecations).toEqual([]);
    expect(config.scorer).toMatchObject({
      timeoutMs: 5000,
      maxInputTokens: 4096,
      chatTemplate: '/m/tokenizer_config.json',
      labelTokenIds: { yes: 1, no: 2 },
      batching: { maxBatchSize: 8, windowMs: 2 },
    });
    expect(config.scorer).not.toHaveProperty('timeout_ms');
    expect(config.sandbox.settings).toEqual({
      baseUrl: 'http://o:8000',
      loginShell: true,
      patch: { maxBytes: 1024, defaultExcludes: false },
    });
  });

  it('still reads the old camelCase keys, with a numbered deprecation naming the old key and the new one', () => {
    const { config, deprecations } = load(
      `${scorer}  timeoutMs: 5000\n  batching: { windowMs: 2 }\nsandbox:\n  provider: orchard\n  settings:\n    baseUrl: http://o:8000\n    patch: { maxBytes: 10 }\n`,
    );
    expect(config.scorer).toMatchObject({ timeoutMs: 5000, batching: { windowMs: 2 } });
    expect(config.sandbox.settings).toEqual({ baseUrl: 'http://o:8000', patch: { maxBytes: 10 } });
    expect(deprecations.map(({ code, oldKey, newKey }) => [code, oldKey, newKey])).toEqual([
      ['WNW_DEP001', 'scorer.timeoutMs', 'scorer.timeout_ms'],
      ['WNW_DEP001', 'scorer.batching.windowMs', 'scorer.batching.window_ms'],
      ['WNW_DEP002', 'sandbox.settings.baseUrl', 'sandbox.settings.base_url'],
      ['WNW_DEP002', 'sandbox.settings.patch.maxBytes', 'sandbox.settings.patch.max_bytes'],
    ]);
    expect(deprecations[0]!.message).toBe('config key scorer.timeoutMs is deprecated: write scorer.timeout_ms (docs/configuration.md)');
  });

  it('warns through process.emitWarning once per old key, and not at all for the new keys', () => {
    const emit = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const warn = processDeprecationWarner();
      const old: Deprecation = { code: 'WNW_DEP001', oldKey: 'scorer.timeoutMs', newKey: 'scorer.timeout_ms', message: 'm' };
      warn(old);
      warn(old);
      warn({ ...old, oldKey: 'scorer.cacheEntries', newKey: 'scorer.cache_entries' });
      expect(emit.mock.calls).toEqual([
        ['m', { type: 'DeprecationWarning', code: 'WNW_DEP001' }],
        ['m', { type: 'DeprecationWarning', code: 'WNW_DEP001' }],
      ]);
      emit.mockClear();
      loadConfig({ env: { WINNOWER_SCORER_KEY: 'k' }, overrides: { scorer: { cache_entries: 0 } } });
      expect(emit).not.toHaveBeenCalled();
    } finally {
      emit.mockRestore();
    }
  });

  it('refuses a key written both ways, naming both', () => {
    const error = fails(`${scorer}  timeout_ms: 1\n  timeoutMs: 2\n`);
    expect(error).toMatchObject({
      code: 'WNW_ERR_CFG_INVALID',
      details: { field: 'scorer.timeout_ms', keys: ['scorer.timeoutMs', 'scorer.timeout_ms'] },
    });
    expect(error.message).toContain('scorer.timeoutMs');
    expect(fails('sandbox:\n  settings:\n    baseUrl: http://a:1\n    base_url: http://b:1\n')).toMatchObject({
      details: { field: 'sandbox.settings.base_url', keys: ['sandbox.settings.baseUrl', 'sandbox.settings.base_url'] },
    });
  });

  it('still refuses unknown keys as they were written, and names bad values in snake_case', () => {
    expect(fails(`${scorer}  timeout: 5\n`)).toMatchObject({ details: { field: 'scorer.timeout' } });
    expect(fails(`${scorer}  timeOut: 5\n`)).toMatchObject({ details: { field: 'scorer.timeOut' } });
    expect(fails(`${scorer}  batching: { max_size: 5 }\n`)).toMatchObject({ details: { field: 'scorer.batching.max_size' } });
    expect(fails('server:\n  apiKeys: [abcdefghij]\n')).toMatchObject({ details: { field: 'server.apiKeys' } });
    const bad = fails(`${scorer}  max_input_tokens: -1\n`);
    expect(bad).toMatchObject({ code: 'WNW_ERR_CFG_INVALID', details: { field: 'scorer.max_input_tokens' } });
    expect(bad.message).toMatch(/^config field scorer\.max_input_tokens: /);
  });

  it("hands a provider its settings in the code's names, and the provider names a bad one as it is written", async () => {
    const { createSandboxProvider } = await import('../src/sandbox/registry.js');
    const good = load('sandbox:\n  provider: orchard\n  settings: { base_url: http://o:8000, request_timeout_ms: 5000 }\n').config.sandbox;
    const provider = await createSandboxProvider(good.provider, good.settings);
    await provider.close();
    const bad = load('sandbox:\n  provider: orchard\n  settings: { base_url: not-a-url }\n').config.sandbox;
    await expect(createSandboxProvider(bad.provider, bad.settings)).rejects.toMatchObject({
      code: 'WNW_ERR_CFG_INVALID',
      details: { field: 'sandbox.settings.base_url' },
    });
    const unknown = load('sandbox:\n  provider: docker\n  settings: { socket_file: /x }\n').config.sandbox;
    await expect(createSandboxProvider(unknown.provider, unknown.settings)).rejects.toMatchObject({
      details: { field: 'sandbox.settings.socket_file' },
    });
  });

  it('reads a later layer over an earlier one after renaming (the file, then the environment)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wnw-config-'));
    dirs.push(dir);
    const file = join(dir, 'winnower.yaml');
    writeFileSync(file, `${scorer}  api_key: from-file\n`);
    expect(loadConfig({ file, env: { WINNOWER_SCORER_KEY: 'from-env' } }).scorer).toMatchObject({ apiKey: 'from-env' });
  });
});

describe('the example configurations', () => {
  it('use the current key names only', () => {
    for (const name of ['scale-out.yaml', 'openhands-critic.yaml']) {
      const deprecations: Deprecation[] = [];
      loadConfig({
        file: new URL(`../examples/config/${name}`, import.meta.url).pathname,
        env: {},
        onDeprecation: (d) => deprecations.push(d),
      });
      expect(deprecations, name).toEqual([]);
    }
  });

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
