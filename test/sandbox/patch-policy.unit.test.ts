import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { WinnowerError } from '../../src/errors.js';
import {
  DEFAULT_PATCH_EXCLUDES,
  DEFAULT_PATCH_MAX_BYTES,
  finishPatch,
  patchPolicy,
  patchSettingsFromConfig,
} from '../../src/sandbox/patch-policy.js';
import { createSandboxProvider } from '../../src/sandbox/registry.js';
import { bwrapMissing, makeTestRepo, tempDir } from './local-helpers.js';

function codeAndField(run: () => unknown): { code?: string; field?: unknown } {
  try {
    run();
    return {};
  } catch (error) {
    return WinnowerError.isInstance(error) ? { code: error.code, field: error.details.field } : { code: String(error) };
  }
}

describe('patch policy: settings', () => {
  it('defaults to the build-artifact excludes, no binary changes and a 4 MiB cap', () => {
    expect(patchPolicy(undefined)).toEqual({ excludes: DEFAULT_PATCH_EXCLUDES, binary: false, maxBytes: 4 * 1024 * 1024 });
    expect(DEFAULT_PATCH_MAX_BYTES).toBe(4 * 1024 * 1024);
    for (const pattern of [
      '__pycache__/',
      '*.py[cod]',
      '.pytest_cache/',
      'node_modules/',
      '.venv/',
      'venv/',
      '*.egg-info/',
      'build/',
      'dist/',
      '.mypy_cache/',
      '.tox/',
    ]) {
      expect(DEFAULT_PATCH_EXCLUDES).toContain(pattern);
    }
  });

  it('adds patterns, drops the defaults on request, and takes binary and the cap', () => {
    expect(patchPolicy({ exclude: ['*.log'], binary: true, maxBytes: 1000 })).toEqual({
      excludes: [...DEFAULT_PATCH_EXCLUDES, '*.log'],
      binary: true,
      maxBytes: 1000,
    });
    expect(patchPolicy({ defaultExcludes: false, exclude: ['/out/'] }).excludes).toEqual(['/out/']);
  });

  it('refuses unknown keys, bad caps and patterns with line breaks, naming the field', () => {
    expect(codeAndField(() => patchPolicy({ maxbytes: 10 }))).toEqual({ code: 'WNW_ERR_CFG_INVALID', field: 'sandbox.settings.patch' });
    expect(codeAndField(() => patchPolicy({ maxBytes: 0 }))).toEqual({
      code: 'WNW_ERR_CFG_INVALID',
      field: 'sandbox.settings.patch.maxBytes',
    });
    expect(codeAndField(() => patchPolicy({ exclude: ['a\n!b'] }))).toEqual({
      code: 'WNW_ERR_CFG_INVALID',
      field: 'sandbox.settings.patch.exclude.0',
    });
  });

  it('reads sandbox.patch from the config file (snake_case) and refuses unknown keys there', () => {
    const dir = tempDir('wnw-patch-config-');
    try {
      const file = join(dir.dir, 'config.yaml');
      writeFileSync(
        file,
        'sandbox:\n  patch:\n    exclude: ["*.log"]\n    default_excludes: false\n    binary: true\n    max_bytes: 1048576\n',
      );
      const config = loadConfig({ file, env: {} });
      expect(patchSettingsFromConfig(config.sandbox.patch!)).toEqual({
        exclude: ['*.log'],
        defaultExcludes: false,
        binary: true,
        maxBytes: 1048576,
      });
      writeFileSync(file, 'sandbox:\n  patch:\n    max_byte: 10\n');
      expect(codeAndField(() => loadConfig({ file, env: {} })).code).toBe('WNW_ERR_CFG_INVALID');
    } finally {
      dir.remove();
    }
  });
});

describe('patch policy: the output check', () => {
  const text = [
    'diff --git a/a.py b/a.py',
    'index 1111111..2222222 100644',
    '--- a/a.py',
    '+++ b/a.py',
    '@@ -1 +1 @@',
    '-Binary files x and y differ',
    '+x',
    '',
  ].join('\n');
  const stub = [
    'diff --git a/img.png b/img.png',
    'new file mode 100644',
    'index 0000000..3333333',
    'Binary files /dev/null and b/img.png differ',
    '',
  ].join('\n');

  it('drops binary stubs unless binary changes are asked for', () => {
    expect(finishPatch(stub + text + stub, patchPolicy({}), 'sbx')).toBe(text);
    expect(finishPatch(stub + text, patchPolicy({ binary: true }), 'sbx')).toBe(stub + text);
    expect(finishPatch('', patchPolicy({}), 'sbx')).toBe('');
  });

  it('past the cap throws WNW_ERR_SBX_PATCH_SIZE naming the file where it was reached and the largest ones', () => {
    const big = `diff --git a/big.txt b/big.txt\n${'+line\n'.repeat(50)}`;
    let caught: unknown;
    try {
      finishPatch(text + big, patchPolicy({ maxBytes: 200 }), 'sbx-1');
    } catch (error) {
      caught = error;
    }
    expect(WinnowerError.isInstance(caught)).toBe(true);
    const error = caught as WinnowerError;
    expect(error.code).toBe('WNW_ERR_SBX_PATCH_SIZE');
    expect(error.message).toContain('200 bytes cap (reached in big.txt)');
    expect(error.details).toMatchObject({
      sandbox: 'sbx-1',
      maxBytes: 200,
      file: 'big.txt',
      largest: [{ path: 'big.txt' }, { path: 'a.py' }],
    });
  });
});

describe.skipIf(bwrapMissing)('patch policy: sandbox.patch of the config reaches the provider', () => {
  const repo = tempDir('wnw-patch-repo-');
  const { base } = makeTestRepo(repo.dir);
  afterAll(() => repo.remove());

  it('a cap given as config applies to the sandboxes of the provider the registry makes', async () => {
    const provider = await createSandboxProvider(
      'local',
      { logger: { info: () => undefined, warn: () => undefined } },
      { max_bytes: 1024 },
    );
    try {
      const sandbox = await provider.create({ repo: { path: repo.dir, base_commit: base } });
      try {
        await sandbox.exec('seq 1 2000 > numbers.txt');
        await expect(sandbox.diff()).rejects.toMatchObject({
          code: 'WNW_ERR_SBX_PATCH_SIZE',
          details: { file: 'numbers.txt', maxBytes: 1024 },
        });
      } finally {
        await sandbox.close();
      }
    } finally {
      await provider.close();
    }
  });
});
