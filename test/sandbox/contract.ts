/**
 * The sandbox conformance suite: every provider's test calls runSandboxContract with a factory,
 * and lists what it skips, each with its reason (as hono's router suite does).
 *
 * The factory's spec must start the workspace at a commit holding CONTRACT_REPO_FILES
 * (makeContractRepo builds such a repository; image-based providers copy it into their image).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WinnowerError } from '../../src/errors.js';
import type { Sandbox, SandboxProvider, SandboxSpec } from '../../src/sandbox/types.js';

export interface SandboxContractOptions {
  name: string;
  /** Called once per test; the provider is closed after the suite (the same one may be returned each time). */
  create: () => Promise<{ provider: SandboxProvider; spec: SandboxSpec }>;
  /** Test name → why this provider skips it. */
  skip?: Record<string, string>;
}

/** The base commit of the contract's workspace. */
export const CONTRACT_REPO_FILES: Record<string, string | Uint8Array> = {
  'README.md': '# contract\n\nfirst line\nsecond line\nthird line\n',
  'src/app.py': 'def main():\n    return 42\n',
  'data.bin': Uint8Array.from({ length: 256 }, (_, index) => index),
};

/** git init + CONTRACT_REPO_FILES + one commit in `dir`; returns the commit's SHA. */
export function makeContractRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]): string =>
    execFileSync('git', ['-c', 'user.name=contract', '-c', 'user.email=contract@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd: dir, encoding: 'utf8' }).trim();
  git('init', '-q');
  for (const [path, content] of Object.entries(CONTRACT_REPO_FILES)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  git('add', '-A');
  git('commit', '-qm', 'contract base');
  return git('rev-parse', 'HEAD');
}

async function expectCode(promise: Promise<unknown>, code: string): Promise<WinnowerError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(WinnowerError.isInstance(error), `expected ${code}, got ${String(error)}`).toBe(true);
  expect((error as WinnowerError).code).toBe(code);
  return error as WinnowerError;
}

export function runSandboxContract(options: SandboxContractOptions): void {
  const skip = options.skip ?? {};
  const providers = new Set<SandboxProvider>();
  let provider: SandboxProvider;
  let spec: SandboxSpec;
  let sandbox: Sandbox;

  const test = (name: string, body: () => Promise<void>, timeoutMs?: number): void => {
    const reason = skip[name];
    if (reason) it.skip(`${name} (skipped: ${reason})`, body);
    else it(name, body, timeoutMs);
  };

  describe(`sandbox contract: ${options.name}`, () => {
    beforeEach(async () => {
      ({ provider, spec } = await options.create());
      providers.add(provider);
      sandbox = await provider.create(spec);
    });
    afterEach(async () => {
      await sandbox?.close();
    });
    afterAll(async () => {
      for (const each of providers) await each.close();
    });

    test('exec returns exit code, stdout and stderr', async () => {
      const result = await sandbox.exec('echo out; echo err >&2; exit 3');
      expect(result).toMatchObject({ exitCode: 3, stdout: 'out\n', stderr: 'err\n', timedOut: false, truncated: false });
      expect(result.durationMs).toBeGreaterThanOrEqual(0);
      expect((await sandbox.exec('true')).exitCode).toBe(0);
    });

    test('exec runs bash in the workdir, and honours cwd', async () => {
      expect((await sandbox.exec('[[ -n "$BASH_VERSION" ]] && head -1 README.md')).stdout).toBe('# contract\n');
      await sandbox.writeFile('sub/inner.txt', 'inner\n');
      expect((await sandbox.exec('cat inner.txt', { cwd: 'sub' })).stdout).toBe('inner\n');
      expect((await sandbox.exec('cat sub/inner.txt', { cwd: sandbox.workdir })).stdout).toBe('inner\n');
    });

    test('exec passes env and stdin', async () => {
      const result = await sandbox.exec('echo "$GREETING"; cat', { env: { GREETING: 'hello there' }, stdin: 'from stdin' });
      expect(result.stdout).toBe('hello there\nfrom stdin');
    });

    test('exec hands output to onOutput, per stream, within the cap', async () => {
      const seen = { stdout: '', stderr: '' };
      const result = await sandbox.exec('echo one; echo two >&2; echo three', {
        onOutput: (stream, chunk) => (seen[stream] += Buffer.from(chunk).toString()),
      });
      expect(seen).toEqual({ stdout: result.stdout, stderr: result.stderr });
      expect(seen.stdout).toBe('one\nthree\n');
      const capped = { stdout: '' };
      await sandbox.exec('head -c 5000 /dev/zero | tr "\\0" b', { maxOutputBytes: 100, onOutput: (_stream, chunk) => (capped.stdout += Buffer.from(chunk).toString()) });
      expect(capped.stdout).toBe('b'.repeat(100));
    });

    test('exec caps each stream and sets truncated', async () => {
      const result = await sandbox.exec('head -c 100000 /dev/zero | tr "\\0" a; echo tail >&2', { maxOutputBytes: 1000 });
      expect(result.stdout).toBe('a'.repeat(1000));
      expect(result.stderr).toBe('tail\n');
      expect(result.truncated).toBe(true);
      expect(result.exitCode).toBe(0);
    });

    test(
      'exec timeout kills the command and returns promptly',
      async () => {
        const started = Date.now();
        const result = await sandbox.exec('echo started; sleep 30 & sleep 30', { timeoutMs: 500 });
        expect(result.timedOut).toBe(true);
        expect(result.exitCode).toBeNull();
        expect(Date.now() - started).toBeLessThan(5000);
        expect((await sandbox.exec('echo alive')).stdout).toBe('alive\n');
      },
      15_000,
    );

    test('exec abort rejects with WNW_ERR_OP_ABORTED', async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 200);
      const started = Date.now();
      await expectCode(sandbox.exec('sleep 30', { signal: controller.signal }), 'WNW_ERR_OP_ABORTED');
      expect(Date.now() - started).toBeLessThan(5000);
    });

    test('writeFile, readFile and listFiles round-trip, binary included', async () => {
      const bytes = Uint8Array.from([0, 1, 2, 255, 254, 10, 13, 0]);
      await sandbox.writeFile('out/nested/blob.bin', bytes);
      await sandbox.writeFile('out/text.txt', 'héllo\n');
      expect(Buffer.from(await sandbox.readFile('out/nested/blob.bin'))).toEqual(Buffer.from(bytes));
      expect(new TextDecoder().decode(await sandbox.readFile(`${sandbox.workdir}/out/text.txt`))).toBe('héllo\n');
      const entries = await sandbox.listFiles('out');
      expect(entries.map(({ name, type }) => ({ name, type }))).toEqual([
        { name: 'nested', type: 'directory' },
        { name: 'text.txt', type: 'file' },
      ]);
      expect(entries.find((entry) => entry.name === 'text.txt')?.size).toBe(7);
      expect((await sandbox.listFiles('.')).map((entry) => entry.name)).toEqual(expect.arrayContaining(['README.md', 'data.bin', 'out', 'src']));
    });

    test('reading or listing something missing is WNW_ERR_SBX_FILE', async () => {
      await expectCode(sandbox.readFile('no/such/file.txt'), 'WNW_ERR_SBX_FILE');
      await expectCode(sandbox.listFiles('no/such/dir'), 'WNW_ERR_SBX_FILE');
    });

    test('diff is empty for an untouched workspace', async () => {
      expect(await sandbox.diff()).toBe('');
    });

    test('diff includes new, modified, deleted and binary files', async () => {
      await sandbox.exec('echo appended >> README.md && rm data.bin && mkdir -p pkg && printf "new\\n" > pkg/new.txt');
      await sandbox.writeFile('pkg/new.bin', Uint8Array.from([0, 159, 146, 150, 0, 1]));
      const diff = await sandbox.diff();
      expect(diff).toContain('diff --git a/README.md b/README.md');
      expect(diff).toContain('+appended');
      expect(diff).toMatch(/diff --git a\/data.bin b\/data.bin\ndeleted file mode/);
      expect(diff).toMatch(/diff --git a\/pkg\/new.txt b\/pkg\/new.txt\nnew file mode/);
      expect(diff).toMatch(/diff --git a\/pkg\/new.bin b\/pkg\/new.bin\nnew file mode[^]*GIT binary patch/);
    });

    test('applyPatch applies a diff taken from another sandbox', async () => {
      await sandbox.exec('echo changed >> README.md && rm data.bin && printf "x = 1\\n" > src/extra.py');
      await sandbox.writeFile('pkg/new.bin', Uint8Array.from([0, 1, 2, 3]));
      const patch = await sandbox.diff();
      const other = await provider.create(spec);
      try {
        await other.applyPatch(patch);
        expect(await other.diff()).toBe(patch);
        expect(Buffer.from(await other.readFile('pkg/new.bin'))).toEqual(Buffer.from([0, 1, 2, 3]));
        await other.applyPatch('');
      } finally {
        await other.close();
      }
    });

    test('applyPatch rejects a bad hunk with WNW_ERR_SBX_PATCH naming the file', async () => {
      const patch = ['diff --git a/README.md b/README.md', '--- a/README.md', '+++ b/README.md', '@@ -1,3 +1,3 @@', ' # not the content', '-nothing here', '+something', ' at all', ''].join('\n');
      const error = await expectCode(sandbox.applyPatch(patch), 'WNW_ERR_SBX_PATCH');
      expect(error.message).toContain('README.md');
      expect(await sandbox.diff()).toBe('');
    });

    test('close is idempotent and later calls fail with WNW_ERR_SBX_CLOSED', async () => {
      await Promise.all([sandbox.close(), sandbox.close()]);
      await sandbox.close();
      await expectCode(sandbox.exec('true'), 'WNW_ERR_SBX_CLOSED');
      await expectCode(sandbox.readFile('README.md'), 'WNW_ERR_SBX_CLOSED');
      await expectCode(sandbox.writeFile('x', 'y'), 'WNW_ERR_SBX_CLOSED');
      await expectCode(sandbox.listFiles('.'), 'WNW_ERR_SBX_CLOSED');
      await expectCode(sandbox.diff(), 'WNW_ERR_SBX_CLOSED');
      await expectCode(sandbox.applyPatch('x'), 'WNW_ERR_SBX_CLOSED');
    });
  });
}
