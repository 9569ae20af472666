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
import { expectCode } from '../support/expect-code.js';
import { encodePatch } from '../../src/sandbox/patch-bytes.js';
import type { PatchSettings } from '../../src/sandbox/patch-policy.js';
import type { Sandbox, SandboxProvider, SandboxSpec } from '../../src/sandbox/types.js';

/** Provider settings every provider takes (a test that needs them gets its own provider). */
export interface ContractSettings {
  patch?: PatchSettings;
}

export interface SandboxContractOptions {
  name: string;
  /**
   * Called once per test without settings, and once per distinct `settings`; the providers are
   * closed after the suite (the same one may be returned for the calls without settings).
   */
  create: (settings?: ContractSettings) => Promise<{ provider: SandboxProvider; spec: SandboxSpec }>;
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
    execFileSync('git', ['-c', 'user.name=contract', '-c', 'user.email=contract@example.com', '-c', 'init.defaultBranch=main', ...args], {
      cwd: dir,
      encoding: 'utf8',
    }).trim();
  git('init', '-q');
  for (const [path, content] of Object.entries(CONTRACT_REPO_FILES)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  git('add', '-A');
  git('commit', '-qm', 'contract base');
  return git('rev-parse', 'HEAD');
}

export function runSandboxContract(options: SandboxContractOptions): void {
  const skip = options.skip ?? {};
  const providers = new Set<SandboxProvider>();
  let provider: SandboxProvider;
  let spec: SandboxSpec;
  let sandbox: Sandbox;

  const variants = new Map<string, Promise<{ provider: SandboxProvider; spec: SandboxSpec }>>();
  /** A sandbox of a provider made with `settings` (one provider per distinct settings); closed by the caller. */
  const sandboxWith = async (settings: ContractSettings): Promise<Sandbox> => {
    const key = JSON.stringify(settings);
    if (!variants.has(key)) variants.set(key, options.create(settings));
    const made = await variants.get(key)!;
    providers.add(made.provider);
    return made.provider.create(made.spec);
  };

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
      await sandbox.exec('head -c 5000 /dev/zero | tr "\\0" b', {
        maxOutputBytes: 100,
        onOutput: (_stream, chunk) => (capped.stdout += Buffer.from(chunk).toString()),
      });
      expect(capped.stdout).toBe('b'.repeat(100));
    });

    test('exec caps each stream and sets truncated', async () => {
      const result = await sandbox.exec('head -c 100000 /dev/zero | tr "\\0" a; echo tail >&2', { maxOutputBytes: 1000 });
      expect(result.stdout).toBe('a'.repeat(1000));
      expect(result.stderr).toBe('tail\n');
      expect(result.truncated).toBe(true);
      expect(result.exitCode).toBe(0);
    });

    test('exec timeout kills the command and returns promptly', async () => {
      const started = Date.now();
      const result = await sandbox.exec('echo started; sleep 30 & sleep 30', { timeoutMs: 500 });
      expect(result.timedOut).toBe(true);
      expect(result.exitCode).toBeNull();
      expect(Date.now() - started).toBeLessThan(5000);
      expect((await sandbox.exec('echo alive')).stdout).toBe('alive\n');
    }, 15_000);

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
      expect((await sandbox.listFiles('.')).map((entry) => entry.name)).toEqual(
        expect.arrayContaining(['README.md', 'data.bin', 'out', 'src']),
      );
    });

    test('reading or listing something missing is WNW_ERR_SBX_FILE', async () => {
      await expectCode(sandbox.readFile('no/such/file.txt'), 'WNW_ERR_SBX_FILE');
      await expectCode(sandbox.listFiles('no/such/dir'), 'WNW_ERR_SBX_FILE');
    });

    test('diff is empty for an untouched workspace', async () => {
      expect(await sandbox.diff()).toBe('');
    });

    test('diff includes new, modified and deleted text files, and leaves binary changes out', async () => {
      await sandbox.exec('echo appended >> README.md && rm data.bin && mkdir -p pkg && printf "new\\n" > pkg/new.txt');
      await sandbox.writeFile('pkg/new.bin', Uint8Array.from([0, 159, 146, 150, 0, 1]));
      const diff = await sandbox.diff();
      expect(diff).toContain('diff --git a/README.md b/README.md');
      expect(diff).toContain('+appended');
      expect(diff).toMatch(/diff --git a\/pkg\/new.txt b\/pkg\/new.txt\nnew file mode/);
      expect(diff).not.toContain('data.bin');
      expect(diff).not.toContain('new.bin');
      expect(diff).not.toContain('Binary files');
    });

    test('markBase: later diffs hold only what changed after it (setup outputs, build outputs and the real index left alone)', async () => {
      if (!sandbox.markBase) throw new Error(`the ${provider.name} provider has no markBase`);
      // A setup: a tracked file edited, an untracked file and a build output written.
      await sandbox.exec('echo setup >> README.md && echo generated > gen.txt && mkdir -p build && echo o > build/out.o');
      const tree = await sandbox.markBase();
      expect(tree).toMatch(/^[0-9a-f]{40}$/);
      expect(await sandbox.diff()).toBe('');
      // The agent's index is as it was: the setup's files are still untracked there.
      expect((await sandbox.exec('git status --porcelain -- gen.txt')).stdout).toBe('?? gen.txt\n');
      await sandbox.exec('echo agent >> gen.txt && printf "n\\n" > new.txt && rm README.md && echo p > build/more.o');
      const diff = await sandbox.diff();
      expect(diff).toMatch(
        /diff --git a\/gen.txt b\/gen.txt\nindex [0-9a-f]+\.\.[0-9a-f]+ 100644\n--- a\/gen.txt\n\+\+\+ b\/gen.txt\n@@ -1 \+1,2 @@\n generated\n\+agent\n/,
      );
      expect(diff).toMatch(/diff --git a\/new.txt b\/new.txt\nnew file mode/);
      // The deleted README holds the setup's line: its content is the post-setup one.
      expect(diff).toMatch(/deleted file mode[^]*\n-setup\n/);
      expect(diff).not.toContain('build/');
    });

    test('diff takes binary changes, as git binary patches, when the provider is asked to', async () => {
      const binary = await sandboxWith({ patch: { binary: true } });
      try {
        await binary.exec('rm data.bin');
        await binary.writeFile('pkg/new.bin', Uint8Array.from([0, 159, 146, 150, 0, 1]));
        const diff = await binary.diff();
        expect(diff).toMatch(/diff --git a\/data.bin b\/data.bin\ndeleted file mode/);
        expect(diff).toMatch(/diff --git a\/pkg\/new.bin b\/pkg\/new.bin\nnew file mode[^]*GIT binary patch/);
      } finally {
        await binary.close();
      }
    });

    test('diff leaves out build artifacts and caches, tracked files excepted, with no .gitignore', async () => {
      expect((await sandbox.exec('test -e .gitignore')).exitCode).not.toBe(0);
      expect((await sandbox.exec('printf %s "$PYTHONDONTWRITEBYTECODE"')).stdout).toBe('1');
      const junk = [
        '__pycache__/app.cpython-311.pyc',
        'src/__pycache__/app.cpython-311.pyc',
        'src/app.pyc',
        '.pytest_cache/v/cache/lastfailed',
        'node_modules/left-pad/index.js',
        '.venv/pyvenv.cfg',
        'venv/pyvenv.cfg',
        'pkg.egg-info/PKG-INFO',
        'build/lib/app.py',
        'dist/app.tar.gz',
        '.mypy_cache/CACHEDIR.TAG',
        '.tox/py311/log.txt',
      ];
      for (const path of junk) await sandbox.writeFile(path, 'generated\n');
      await sandbox.writeFile('src/kept.py', 'kept = True\n');
      const diff = await sandbox.diff();
      expect(diff.match(/^diff --git .*$/gm)).toEqual(['diff --git a/src/kept.py b/src/kept.py']);
      // A folder in the exclude list that the repository tracks still has its changes in the patch.
      const tracked = await sandboxWith({ patch: { exclude: ['src/', '*.md'] } });
      try {
        await tracked.exec(
          'echo "# changed" >> src/app.py && echo more >> README.md && printf "x\\n" > src/untracked.py && printf "y\\n" > notes.md && printf "z\\n" > __pycache__.txt',
        );
        const names = (await tracked.diff()).match(/^diff --git .*$/gm);
        expect(names).toEqual([
          'diff --git a/README.md b/README.md',
          'diff --git a/__pycache__.txt b/__pycache__.txt',
          'diff --git a/src/app.py b/src/app.py',
        ]);
      } finally {
        await tracked.close();
      }
    });

    test('diff past the patch cap is WNW_ERR_SBX_PATCH_SIZE naming the file', async () => {
      const capped = await sandboxWith({ patch: { maxBytes: 64 * 1024 } });
      try {
        await capped.exec('printf "small\\n" > a-small.txt && seq 1 200000 > huge.log');
        const error = await expectCode(capped.diff(), 'WNW_ERR_SBX_PATCH_SIZE');
        expect(error.message).toContain('64 KiB');
        expect(error.details.file).toBe('huge.log');
        await capped.exec('rm huge.log');
        expect((await capped.diff()).match(/^diff --git .*$/gm)).toEqual(['diff --git a/a-small.txt b/a-small.txt']);
      } finally {
        await capped.close();
      }
    });

    test('applyPatch applies a diff taken from another sandbox', async () => {
      const binary = await sandboxWith({ patch: { binary: true } });
      const other = await sandboxWith({ patch: { binary: true } });
      try {
        await binary.exec('echo changed >> README.md && rm data.bin && printf "x = 1\\n" > src/extra.py');
        await binary.writeFile('pkg/new.bin', Uint8Array.from([0, 1, 2, 3]));
        const patch = await binary.diff();
        await other.applyPatch(patch);
        expect(await other.diff()).toBe(patch);
        expect(Buffer.from(await other.readFile('pkg/new.bin'))).toEqual(Buffer.from([0, 1, 2, 3]));
        await other.applyPatch('');
      } finally {
        await Promise.all([binary.close(), other.close()]);
      }
    });

    test('a diff of non-UTF-8 text keeps its bytes: diff, a fresh sandbox, applyPatch, same bytes', async () => {
      const latin1 = Buffer.from('caf\xe9 cr\xe8me\n', 'latin1');
      const other = await provider.create(spec);
      try {
        await sandbox.writeFile('latin1.txt', latin1);
        await sandbox.writeFile('README.md', Buffer.concat([Buffer.from(CONTRACT_REPO_FILES['README.md'] as string), latin1]));
        const patch = await sandbox.diff();
        expect(encodePatch(patch).includes(Buffer.from('+caf\xe9 cr\xe8me\n', 'latin1'))).toBe(true);
        await other.applyPatch(patch);
        expect(Buffer.from(await other.readFile('latin1.txt'))).toEqual(latin1);
        expect(Buffer.from(await other.readFile('README.md')).subarray(-latin1.length)).toEqual(latin1);
        expect(encodePatch(await other.diff())).toEqual(encodePatch(patch));
      } finally {
        await other.close();
      }
    });

    test('applyPatch leaves submodule sections out, applies the rest and names what it left out', async () => {
      const other = await provider.create(spec);
      try {
        await sandbox.exec('echo submodule >> README.md');
        const fix = await sandbox.diff();
        const sha = 'c'.repeat(40);
        const gitlink = [
          'diff --git a/vendor/lib b/vendor/lib',
          '--- a/vendor/lib',
          '+++ b/vendor/lib',
          '@@ -1 +1 @@',
          `-Subproject commit ${sha}`,
          `+Subproject commit ${sha}-dirty`,
          '',
        ].join('\n');
        expect(await other.applyPatch(gitlink + fix)).toEqual({ dropped: [{ path: 'vendor/lib', kind: 'dirty' }] });
        expect(await other.diff()).toBe(fix);
        expect(await other.applyPatch(gitlink)).toEqual({ dropped: [{ path: 'vendor/lib', kind: 'dirty' }] });
      } finally {
        await other.close();
      }
    });

    test('applyPatch rejects a bad hunk with WNW_ERR_SBX_PATCH naming the file', async () => {
      const patch = [
        'diff --git a/README.md b/README.md',
        '--- a/README.md',
        '+++ b/README.md',
        '@@ -1,3 +1,3 @@',
        ' # not the content',
        '-nothing here',
        '+something',
        ' at all',
        '',
      ].join('\n');
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
