/**
 * A host-side clone from a remote that never answers (a tarpit on loopback) ends when its callers
 * give up, when the provider closes, or at its deadline, and takes every git process it started
 * (git clone, git remote-http, git-remote-http) with it. A clone shared by several creates is
 * aborted only when all of them have given up. Transports other than file, git, http(s) and ssh
 * are refused before anything runs.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { cloneHanging, gitProcessesFor, startTarpit, type Tarpit } from '../fakes/tarpit-server.js';
import { bwrapMissing, eventually, tempDir } from './local-helpers.js';

const quiet = { info: () => undefined, warn: () => undefined };

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  const error = (await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )) as { code?: string } | undefined;
  return error?.code;
}

describe.skipIf(bwrapMissing)('local provider: host-side clones', () => {
  let provider: SandboxProvider;
  let tarpit: Tarpit;

  beforeAll(() => {
    provider = createLocalProvider({ logger: quiet });
  });

  afterAll(async () => {
    await provider?.close();
  });

  afterEach(async () => {
    await tarpit?.close();
  });

  it('an aborted create kills the clone and every git process it started', async () => {
    tarpit = await startTarpit();
    const controller = new AbortController();
    const creating = codeOf(provider.create({ repo: { url: tarpit.url } }, { signal: controller.signal }));
    await cloneHanging(tarpit);

    controller.abort();
    expect(await creating).toBe('WNW_ERR_OP_ABORTED');
    expect(
      await eventually(
        () => gitProcessesFor(tarpit),
        (found) => found.length === 0,
      ),
    ).toEqual([]);
    expect(
      await eventually(
        () => tarpit.open,
        (open) => open === 0,
      ),
    ).toBe(0);
  }, 60_000);

  it('a clone shared by two creates goes on while one of them waits, and stops when both gave up', async () => {
    tarpit = await startTarpit();
    const first = new AbortController();
    const second = new AbortController();
    const creatingFirst = codeOf(provider.create({ repo: { url: tarpit.url } }, { signal: first.signal }));
    const creatingSecond = codeOf(provider.create({ repo: { url: tarpit.url } }, { signal: second.signal }));
    await cloneHanging(tarpit);

    first.abort();
    expect(await creatingFirst).toBe('WNW_ERR_OP_ABORTED');
    // The second create still waits on the same clone: nothing was killed, nothing cloned twice.
    expect(gitProcessesFor(tarpit).some((line) => line.includes('git-remote-http'))).toBe(true);
    expect(tarpit.connections).toBe(1);
    expect(tarpit.open).toBe(1);

    second.abort();
    expect(await creatingSecond).toBe('WNW_ERR_OP_ABORTED');
    expect(
      await eventually(
        () => gitProcessesFor(tarpit),
        (found) => found.length === 0,
      ),
    ).toEqual([]);
  }, 60_000);

  it('close() ends a clone in progress instead of waiting for it', async () => {
    tarpit = await startTarpit();
    const own = createLocalProvider({ logger: quiet });
    const creating = codeOf(own.create({ repo: { url: tarpit.url } }));
    await cloneHanging(tarpit);

    await own.close();
    expect(await creating).toBe('WNW_ERR_SBX_CLOSED');
    expect(
      await eventually(
        () => gitProcessesFor(tarpit),
        (found) => found.length === 0,
      ),
    ).toEqual([]);
  }, 60_000);

  it('gives up a clone that trickles past cloneTimeoutMs with WNW_ERR_SBX_TIMEOUT, leaving no git process', async () => {
    tarpit = await startTarpit({ trickleMs: 200 });
    const own = createLocalProvider({ logger: quiet, cloneTimeoutMs: 2000 });
    try {
      const creating = own.create({ repo: { url: tarpit.url } }).then(
        () => ({}),
        (caught: unknown) => caught as { code?: string; message?: string },
      );
      await cloneHanging(tarpit);
      const error: { code?: string; message?: string } = await creating;
      expect(error.code).toBe('WNW_ERR_SBX_TIMEOUT');
      expect(error.message).toContain('sandbox.settings.cloneTimeoutMs');
      expect(
        await eventually(
          () => gitProcessesFor(tarpit),
          (found) => found.length === 0,
        ),
      ).toEqual([]);
    } finally {
      await own.close();
    }
  }, 60_000);

  it('refuses fd:: and ext:: transports without running them, even with no repository roots', async () => {
    const scratch = tempDir('wnw-transport-');
    try {
      const marker = join(scratch.dir, 'ran');
      // Without the restriction git-remote-fd waits forever on a descriptor nobody writes.
      expect(await codeOf(provider.create({ repo: { url: 'fd::17' } }))).toBe('WNW_ERR_SBX_REPO');
      // git itself refuses ext:: by default (protocol.ext.allow is `never`), so this case passes
      // without our GIT_ALLOW_PROTOCOL too; fd:: above is the one that proves our setting.
      expect(await codeOf(provider.create({ repo: { url: `ext::sh -c touch% ${marker}` } }))).toBe('WNW_ERR_SBX_REPO');
      expect(existsSync(marker)).toBe(false);
    } finally {
      scratch.remove();
    }
  }, 60_000);
});
