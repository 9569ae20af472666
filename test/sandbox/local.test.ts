import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WinnowerError } from '../../src/errors.js';
import { createLocalProvider, type LocalProviderSettings } from '../../src/sandbox/providers/local/provider.js';
import { patchError } from '../../src/sandbox/providers/local/sandbox.js';
import { createSandboxProvider } from '../../src/sandbox/registry.js';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { runSandboxContract } from './contract.js';
import { bwrapMissing, hostCommandLines, makeTestRepo, tempDir } from './local-helpers.js';

const quiet: LocalProviderSettings['logger'] = { info: () => undefined, warn: () => undefined };
const repo = tempDir('wnw-local-repo-');
const { base, second } = makeTestRepo(repo.dir);
afterAll(() => repo.remove());

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    return WinnowerError.isInstance(error) ? error.code : `not a WinnowerError: ${String(error)}`;
  }
}

describe.skipIf(bwrapMissing)('local provider', () => {
  const provider = createLocalProvider({ logger: quiet });
  afterAll(() => provider.close());

  const contractProvider = createLocalProvider({ logger: quiet });
  runSandboxContract({
    name: 'local (overlay)',
    create: async (settings) => ({
      provider: settings ? createLocalProvider({ logger: quiet, ...settings }) : contractProvider,
      spec: { repo: { path: repo.dir, base_commit: base } },
    }),
  });

  it('starts at the base commit and shares one snapshot between sandboxes', async () => {
    const [one, two] = await Promise.all([1, 2].map(() => provider.create({ repo: { path: repo.dir, base_commit: base } })));
    try {
      expect((await one!.exec('git rev-parse HEAD')).stdout.trim()).toBe(base);
      expect((await one!.exec('cat README.md')).stdout).not.toContain('second commit');
      await one!.exec('echo private > mine.txt');
      expect((await two!.exec('test -e mine.txt')).exitCode).toBe(1);
      const description = await provider.describe();
      const snapshots = readdirSync(join(String(description.rootDir), 'snapshots'));
      expect(snapshots).toHaveLength(1);
    } finally {
      await Promise.all([one!.close(), two!.close()]);
    }
  });

  it('checks out another commit, and HEAD when none is given', async () => {
    const sandbox = await provider.create({ repo: { path: repo.dir } });
    try {
      expect((await sandbox.exec('git rev-parse HEAD')).stdout.trim()).toBe(second);
      expect(await sandbox.diff()).toBe('');
    } finally {
      await sandbox.close();
    }
  });

  it('takes a new snapshot when the named commit moves (HEAD or a branch), not the one of its old position', async () => {
    const moving = tempDir('wnw-local-moving-');
    try {
      const { second: before } = makeTestRepo(moving.dir);
      const first = await provider.create({ repo: { path: moving.dir } });
      try {
        expect((await first.exec('git rev-parse HEAD')).stdout.trim()).toBe(before);
      } finally {
        await first.close();
      }
      execFileSync('sh', ['-c', 'echo third >> README.md && git -c user.name=t -c user.email=t@example.com commit -qam third'], {
        cwd: moving.dir,
      });
      const after = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: moving.dir, encoding: 'utf8' }).trim();
      for (const repoSpec of [
        { path: moving.dir },
        { path: moving.dir, base_commit: 'HEAD' },
        { path: `${moving.dir}/.`, base_commit: 'main' },
      ]) {
        const sandbox = await provider.create({ repo: repoSpec });
        try {
          expect((await sandbox.exec('git rev-parse HEAD')).stdout.trim()).toBe(after);
        } finally {
          await sandbox.close();
        }
      }
    } finally {
      moving.remove();
    }
  });

  it('removes at start the folders of a winnower process killed before it could clean up, and only those', async () => {
    const parent = tempDir('wnw-local-parent-');
    chmodSync(parent.dir, 0o711);
    try {
      const dead = spawnSync('true').pid!;
      const stale = join(parent.dir, `winnower-local-${dead}-AbC123`);
      const live = join(parent.dir, `winnower-local-${process.pid}-XyZ789`);
      const foreign = join(parent.dir, 'winnower-local-notours');
      for (const dir of [stale, live, foreign]) mkdirSync(join(dir, 'snapshots', 'x', 'tree'), { recursive: true });
      const local = createLocalProvider({ logger: quiet, rootDir: parent.dir });
      try {
        const description = await local.describe();
        expect(String(description.rootDir)).toMatch(new RegExp(`/winnower-local-${process.pid}-`));
        expect(existsSync(stale)).toBe(false);
        expect(existsSync(live)).toBe(true);
        expect(existsSync(foreign)).toBe(true);
      } finally {
        await local.close();
      }
    } finally {
      parent.remove();
    }
  });

  it('clones a URL on the host side (file://)', async () => {
    const sandbox = await provider.create({ repo: { url: `file://${repo.dir}`, base_commit: base } });
    try {
      expect((await sandbox.exec('git rev-parse HEAD && git remote')).stdout.trim()).toBe(base);
    } finally {
      await sandbox.close();
    }
  });

  it('reports a missing repository, a non-repository and an unknown commit as WNW_ERR_SBX_REPO', async () => {
    expect(await codeOf(provider.create({ repo: { path: join(repo.dir, 'nope') } }))).toBe('WNW_ERR_SBX_REPO');
    expect(await codeOf(provider.create({ repo: { path: join(repo.dir, 'src') + '/../../' } }))).toBe('WNW_ERR_SBX_REPO');
    const unknown = provider.create({ repo: { path: repo.dir, base_commit: 'deadbeefdeadbeefdeadbeefdeadbeefdeadbeef' } });
    await expect(unknown).rejects.toThrow(/commit deadbeef.* not found/);
    expect(await codeOf(provider.create({ repo: { url: `file://${repo.dir}/missing.git` } }))).toBe('WNW_ERR_SBX_REPO');
  });

  it('rejects specs it cannot honour', async () => {
    expect(await codeOf(provider.create({ image: 'Not An Image' }))).toBe('WNW_ERR_INPUT_INVALID');
    expect(await codeOf(provider.create({ image: 'docker-daemon:python:3.12' }))).toBe('WNW_ERR_INPUT_INVALID');
    expect(await codeOf(provider.create({}))).toBe('WNW_ERR_INPUT_INVALID');
    expect(await codeOf(provider.create({ repo: { path: repo.dir }, workdir: '/usr/src' }))).toBe('WNW_ERR_INPUT_INVALID');
    expect(await codeOf(provider.create({ repo: { path: repo.dir }, env: { 'BAD-NAME': 'x' } }))).toBe('WNW_ERR_INPUT_INVALID');
    expect(await codeOf(provider.create({ repo: { path: repo.dir }, memoryMb: -1 }))).toBe('WNW_ERR_INPUT_INVALID');
  });

  it('honours workdir, spec env, a persistent /tmp and long commands', async () => {
    const sandbox = await provider.create({ repo: { path: repo.dir, base_commit: base }, workdir: '/testbed', env: { FROM_SPEC: 'spec' } });
    try {
      expect(sandbox.workdir).toBe('/testbed');
      expect((await sandbox.exec('pwd; echo $FROM_SPEC; echo kept > /tmp/note')).stdout).toBe('/testbed\nspec\n');
      expect((await sandbox.exec('cat /tmp/note')).stdout).toBe('kept\n');
      const long = `printf '%s' '${'x'.repeat(200_000)}' | wc -c`;
      expect((await sandbox.exec(long)).stdout.trim()).toBe('200000');
    } finally {
      await sandbox.close();
    }
  });

  it('runs concurrent execs in one sandbox', async () => {
    const sandbox = await provider.create({ repo: { path: repo.dir, base_commit: base } });
    try {
      const results = await Promise.all([1, 2, 3, 4].map((index) => sandbox.exec(`echo ${index} > f${index}.txt && cat f${index}.txt`)));
      expect(results.map((result) => result.stdout)).toEqual(['1\n', '2\n', '3\n', '4\n']);
      expect((await sandbox.diff()).match(/^diff --git/gm)).toHaveLength(4);
    } finally {
      await sandbox.close();
    }
  });

  it('fails an exec whose cwd is missing with WNW_ERR_SBX_EXEC, and one cut by close with WNW_ERR_SBX_CLOSED', async () => {
    const sandbox = await provider.create({ repo: { path: repo.dir, base_commit: base } });
    expect(await codeOf(sandbox.exec('true', { cwd: 'missing/dir' }))).toBe('WNW_ERR_SBX_EXEC');
    const running = codeOf(sandbox.exec('sleep 30'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await sandbox.close();
    expect(await running).toBe('WNW_ERR_SBX_CLOSED');
  });

  it('fails execs with WNW_ERR_SBX_LOST once its workspace holder has died, and still closes', async () => {
    const sandbox = await provider.create({ repo: { path: repo.dir, base_commit: base } });
    const holder = hostCommandLines().find((entry) => entry.cmdline.includes(`${sandbox.id}/merged`) && entry.cmdline.includes('holder'));
    expect(holder).toBeDefined();
    process.kill(holder!.pid, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const error = await sandbox.exec('true').catch((caught: unknown) => caught);
    expect(WinnowerError.isInstance(error) && error.code).toBe('WNW_ERR_SBX_LOST');
    expect((error as Error).message).toContain('holder');
    await sandbox.close();
  });

  it('describes its isolation and limits', async () => {
    // With a network helper installed (CI installs passt) networked sandboxes get their own namespace; without one they are refused.
    const description = await provider.describe();
    expect(description).toMatchObject({
      provider: 'local',
      network: expect.stringMatching(
        /^off unless the spec asks; then its own network namespace through (pasta|slirp4netns), egress only: .*no host loopback|^off; a spec asking for network is refused \(install: /,
      ),
      workspace: 'overlay',
    });
    expect(description.limits).toHaveProperty('memory');
    expect(description.runsAs).toMatchObject({ sandboxUid: 1000 });
    if (process.getuid?.() === 0) expect(description.runsAs).toMatchObject({ hostUid: 65534, droppedFromRoot: true });
  });

  it('falls back to copies when asked, and says so at start-up', async () => {
    const warnings: string[] = [];
    const copying = createLocalProvider({
      workspace: 'copy',
      logger: { info: () => undefined, warn: (message) => warnings.push(message) },
    });
    try {
      expect((await copying.describe()).workspace).toBe('copy');
      expect(warnings.join('\n')).toMatch(/copy/);
      const sandbox = await copying.create({ repo: { path: repo.dir, base_commit: base } });
      await sandbox.exec('echo more >> README.md');
      expect(await sandbox.diff()).toContain('+more');
      await sandbox.close();
    } finally {
      await copying.close();
    }
  });

  it('removes its snapshots and folders on close, and refuses to create afterwards', async () => {
    const own = createLocalProvider({ logger: quiet });
    const sandbox = await own.create({ repo: { path: repo.dir, base_commit: base } });
    const rootDir = String((await own.describe()).rootDir);
    await own.close();
    await own.close();
    expect(await codeOf(sandbox.exec('true'))).toBe('WNW_ERR_SBX_CLOSED');
    expect(() => readdirSync(rootDir)).toThrow(/ENOENT/);
    expect(await codeOf(own.create({ repo: { path: repo.dir } }))).toBe('WNW_ERR_SBX_CLOSED');
  });
});

describe('local provider without bubblewrap', () => {
  it('fails with WNW_ERR_SBX_UNAVAILABLE and the install command', async () => {
    const provider = createLocalProvider({ bwrapPath: '/nonexistent/bwrap', logger: quiet });
    const error = await provider.describe().catch((caught: unknown) => caught);
    expect(WinnowerError.isInstance(error) && error.code).toBe('WNW_ERR_SBX_UNAVAILABLE');
    expect((error as Error).message).toContain('apt-get install -y bubblewrap');
    await provider.close();
  });
});

describe('patch errors', () => {
  it('name the file and line git rejected', () => {
    const error = patchError('error: patch failed: src/app.py:12\nerror: src/app.py: patch does not apply\n', 'sbx');
    expect(error.code).toBe('WNW_ERR_SBX_PATCH');
    expect(error.message).toContain('hunk at src/app.py:12 rejected');
    expect(error.details).toMatchObject({ file: 'src/app.py', line: 12 });
    expect(patchError('error: new.txt: already exists in working directory\n', 'sbx').details).toMatchObject({ file: 'new.txt' });
    expect(patchError('error: corrupt patch at line 7\n', 'sbx').message).toContain('corrupt patch at line 7');
  });
});

describe('sandbox registry', () => {
  it('creates the local provider lazily by name', async () => {
    const provider: SandboxProvider = await createSandboxProvider('local', { logger: quiet });
    expect(provider.name).toBe('local');
    await provider.close();
  });

  it('lists the valid names for an unknown one', async () => {
    const error = await createSandboxProvider('kubernetes').catch((caught: unknown) => caught);
    expect(WinnowerError.isInstance(error) && error.code).toBe('WNW_ERR_SBX_PROVIDER');
    expect((error as Error).message).toContain('local, orchard, docker');
  });
});

// Sanity: the test repository really has two commits.
execFileSync('git', ['cat-file', '-e', `${base}^{commit}`], { cwd: repo.dir });

describe.skipIf(bwrapMissing !== undefined)('local provider: streamed output', () => {
  it('delivers output while the command still runs', async () => {
    const { dir, remove } = tempDir('wnw-stream-');
    const provider = createLocalProvider();
    try {
      makeTestRepo(dir);
      const sandbox = await provider.create({ repo: { path: dir } });
      try {
        let firstAt = 0;
        const done = sandbox.exec('echo early; sleep 1; echo late', {
          onOutput: () => {
            firstAt ||= Date.now();
          },
        });
        const result = await done;
        const endedAt = Date.now();
        expect(result.stdout).toBe('early\nlate\n');
        expect(firstAt).toBeGreaterThan(0);
        expect(endedAt - firstAt).toBeGreaterThan(700);
      } finally {
        await sandbox.close();
      }
    } finally {
      await provider.close();
      remove();
    }
  }, 20_000);
});
