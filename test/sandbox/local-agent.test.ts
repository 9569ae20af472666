/**
 * The local provider's resident exec agent (src/sandbox/providers/local/exec-agent.ts): what it changes
 * for callers and what it must not. The isolation checks themselves run on both paths in
 * local-isolation.test.ts.
 */
import { chmodSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WinnowerError } from '../../src/errors.js';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { runSandboxContract } from './contract.js';
import { bwrapMissing, eventually, hostCommandLines, localProviders, makeTestRepo, quietLogger, tempDir } from './local-helpers.js';
import { imageToolsMissing, writeTinyImage } from './local-image-helpers.js';

const repo = tempDir('wnw-agent-repo-');
const { base } = makeTestRepo(repo.dir);
const spec = { repo: { path: repo.dir, base_commit: base } };
const providers = localProviders();
afterAll(async () => {
  await providers.closeAll();
  repo.remove();
});

const execMode = (sandbox: Sandbox): string => (sandbox as unknown as { execMode: string }).execMode;

/** Host pids of this sandbox's agent chain (the outer bwrap and the agent), found by its cgroup. */
function agentPids(sandbox: Sandbox): number[] {
  return hostCommandLines()
    .filter((entry) => entry.cmdline.includes('winnower-exec-agent'))
    .filter((entry) => {
      try {
        return readFileSync(`/proc/${entry.pid}/cgroup`, 'utf8').includes(`/${sandbox.id}`);
      } catch {
        return false;
      }
    })
    .map((entry) => entry.pid);
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return WinnowerError.isInstance(error) ? error.code : String(error);
}

describe.skipIf(bwrapMissing)('local provider: resident exec agent', () => {
  const provider = providers.make();

  it('runs commands through one agent per sandbox by default, and a bwrap per exec when asked', async () => {
    const sandbox = await provider.create(spec);
    const launching = await providers.make({ exec: 'launch' }).create(spec);
    try {
      expect(execMode(sandbox)).toBe('agent');
      expect(execMode(launching)).toBe('launch');
      expect(agentPids(sandbox).length).toBeGreaterThan(0);
      expect(agentPids(launching)).toEqual([]);
      const first = await sandbox.exec('echo $$');
      const second = await sandbox.exec('echo $$');
      // One long-lived pid namespace: the shells get new pids (a bwrap per exec starts at 2 each time).
      expect(Number(second.stdout)).toBeGreaterThan(Number(first.stdout));
      expect((await sandbox.exec('echo out; echo err >&2; exit 7', { env: { X: 'y' } })).exitCode).toBe(7);
      expect((await sandbox.exec('kill -TERM $$')).exitCode).toBe(128 + 15);
    } finally {
      await sandbox.close();
      await launching.close();
    }
  });

  it('refuses an exec setting that is not agent or launch, naming it', () => {
    expect(() => providers.make({ exec: 'fast' as 'agent' })).toThrow(/sandbox\.settings\.exec/);
  });

  it('survives a command that kills every process it can (kill -9 -1, kill -9 1)', async () => {
    const sandbox = await provider.create(spec);
    try {
      await sandbox.exec('kill -9 -1; kill -9 1; pkill -9 python3; true');
      expect((await sandbox.exec('echo alive')).stdout).toBe('alive\n');
      expect(execMode(sandbox)).toBe('agent');
    } finally {
      await sandbox.close();
    }
  });

  it('keeps a running command alive when another one ends, and cleans up once both have', async () => {
    const sandbox = await provider.create(spec);
    try {
      expect(execMode(sandbox)).toBe('agent');
      const long = sandbox.exec('sleep 1.5; echo survived');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await sandbox.exec('echo quick')).stdout).toBe('quick\n');
      expect((await long).stdout).toBe('survived\n');
      await sandbox.exec('setsid sleep 4242.77 >/dev/null 2>&1 < /dev/null &');
      const left = await eventually(
        () => hostCommandLines().filter((entry) => entry.cmdline.includes('sleep 4242.77')),
        (found) => found.length === 0,
      );
      expect(left).toEqual([]);
    } finally {
      await sandbox.close();
    }
  });

  it('marks the sandbox lost when its agent dies: WNW_ERR_SBX_LOST now and on every later call, never recreated', async () => {
    const sandbox = await provider.create(spec);
    try {
      await sandbox.exec('echo kept > /tmp/state');
      const running = codeOf(sandbox.exec('sleep 30'));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const pids = agentPids(sandbox);
      expect(pids.length).toBeGreaterThan(0);
      for (const pid of pids) process.kill(pid, 'SIGKILL');
      expect(await running).toBe('WNW_ERR_SBX_LOST');
      expect(await codeOf(sandbox.exec('cat /tmp/state'))).toBe('WNW_ERR_SBX_LOST');
      expect(await codeOf(sandbox.readFile('README.md'))).toBe('WNW_ERR_SBX_LOST');
      expect(await codeOf(sandbox.diff())).toBe('WNW_ERR_SBX_LOST');
      expect(agentPids(sandbox)).toEqual([]);
    } finally {
      await sandbox.close();
    }
  });

  it('ends a command cut by close with WNW_ERR_SBX_CLOSED and leaves no agent behind', async () => {
    const sandbox = await provider.create(spec);
    const running = codeOf(sandbox.exec('sleep 30'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await sandbox.close();
    expect(await running).toBe('WNW_ERR_SBX_CLOSED');
    expect(agentPids(sandbox)).toEqual([]);
  });
});

describe.skipIf(bwrapMissing || imageToolsMissing)('local provider: an image without python3', () => {
  it('runs its commands with a bwrap per exec (the fallback), with the same results', { timeout: 120_000 }, async () => {
    const scratch = tempDir('wnw-agent-image-');
    // As root the sandbox user unpacks into the cache: it must be able to pass through this folder.
    chmodSync(scratch.dir, 0o711);
    try {
      const image = writeTinyImage(join(scratch.dir, 'image'));
      const provider = providers.make({ imageCacheDir: join(scratch.dir, 'cache') });
      const sandbox = await provider.create({ image: image.reference });
      try {
        expect(execMode(sandbox)).toBe('launch');
        expect((await sandbox.exec('echo from-image; exit 3')).exitCode).toBe(3);
      } finally {
        await sandbox.close();
      }
    } finally {
      scratch.remove();
    }
  });
});

// The fallback path keeps the whole sandbox contract (local.test.ts runs it on the default, the agent).
describe.skipIf(bwrapMissing)('local provider, a bwrap per exec (exec: launch)', () => {
  const launching = providers.make({ exec: 'launch' });
  runSandboxContract({
    name: 'local (exec: launch)',
    create: async (settings) => ({
      provider: settings ? createLocalProvider({ logger: quietLogger, exec: 'launch', ...settings }) : launching,
      spec,
    }),
  });
});
