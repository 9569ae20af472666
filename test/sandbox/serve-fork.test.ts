/**
 * `winnower sandbox serve`'s snapshot and fork routes, beyond Orchard's API
 * (docs/sandbox-serve.md#snapshots-and-forks-an-extension), over the local provider: a fork of
 * `count` sandboxes that start from the parent's files and are independent of it; a held snapshot
 * forked later and released; the server's sandbox cap; a provider that cannot fork answers 501.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import { orchardEnvApi, type OrchardEnvApiOptions } from '../../src/sandbox/serve/plugin.js';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { makeContractRepo } from './contract.js';
import { bwrapMissing } from './local-helpers.js';

const KEY = 'fork-test-key';
const repoDir = mkdtempSync(join(tmpdir(), 'wnw-serve-fork-repo-'));
makeContractRepo(repoDir);
const local = createLocalProvider({ logger: { info: () => undefined, warn: () => undefined } });
const servers: FastifyInstance[] = [];

afterAll(async () => {
  for (const server of servers) await server.close();
  await local.close();
  rmSync(repoDir, { recursive: true, force: true });
});

async function serve(options: Partial<OrchardEnvApiOptions> = {}): Promise<string> {
  const app = Fastify();
  await app.register(orchardEnvApi, {
    provider: local,
    repo: { path: repoDir },
    repoMode: 'always',
    apiKey: KEY,
    cleanupIntervalMs: 0,
    ...options,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  servers.push(app);
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(base + path, {
    method,
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined };
}

async function ready(base: string): Promise<string> {
  const created = await call(base, 'POST', '/sandboxes', { image: 'contract' });
  expect(created.status).toBe(200);
  const id = created.json.sandbox_id as string;
  expect((await call(base, 'GET', `/sandboxes/${id}/wait?timeout=60`)).json.status).toBe('ready');
  return id;
}

async function sh(base: string, id: string, command: string): Promise<string> {
  const job = await call(base, 'POST', `/sandboxes/${id}/exec`, { command, wait: true, timeout_seconds: 60 });
  expect(job.status, JSON.stringify(job.json)).toBe(200);
  expect(job.json.exit_code, job.json.stderr).toBe(0);
  return job.json.stdout as string;
}

describe.skipIf(bwrapMissing)('winnower sandbox serve: snapshot and fork', () => {
  let base: string;
  beforeAll(async () => {
    base = await serve({ maxSandboxes: 4 });
  });

  it('forks count sandboxes from the parent as it stands; each is independent and deletable', { timeout: 120_000 }, async () => {
    const parent = await ready(base);
    await sh(base, parent, 'echo prefix > prefix.txt');
    const forked = await call(base, 'POST', `/sandboxes/${parent}/fork`, { count: 2 });
    expect(forked.status, JSON.stringify(forked.json)).toBe(200);
    const ids = forked.json.sandbox_ids as string[];
    expect(ids).toHaveLength(2);
    expect(forked.json.sandboxes[0]).toMatchObject({ status: 'ready', ready: true, status_message: `forked from sandbox ${parent}` });
    for (const id of ids) expect(await sh(base, id, 'cat prefix.txt')).toBe('prefix\n');
    await sh(base, ids[0]!, 'echo mine > mine.txt');
    expect(await sh(base, ids[1]!, 'test ! -e mine.txt && echo absent')).toBe('absent\n');
    expect(await sh(base, parent, 'test ! -e mine.txt && echo absent')).toBe('absent\n');
    expect((await call(base, 'GET', `/sandboxes/${ids[0]}`)).json.status).toBe('ready');

    // 1 parent + 2 forks of a cap of 4: two more do not fit.
    const full = await call(base, 'POST', `/sandboxes/${parent}/fork`, { count: 2 });
    expect(full.status).toBe(503);
    expect(full.json.detail).toMatch(/capacity/);
    expect((await call(base, 'POST', `/sandboxes/${parent}/fork`, { count: 0 })).status).toBe(422);

    for (const id of [...ids, parent]) expect((await call(base, 'DELETE', `/sandboxes/${id}`)).status).toBe(200);
  });

  it('holds a snapshot to fork from later, then releases it', { timeout: 120_000 }, async () => {
    const parent = await ready(base);
    await sh(base, parent, 'echo before > state.txt');
    const snapshot = await call(base, 'POST', `/sandboxes/${parent}/snapshot`);
    expect(snapshot.status).toBe(200);
    expect(snapshot.json.bytes).toBeGreaterThan(0);
    await sh(base, parent, 'echo after > state.txt');
    const forked = await call(base, 'POST', `/sandboxes/${parent}/fork`, { snapshot_id: snapshot.json.snapshot_id });
    expect(forked.status).toBe(200);
    expect(await sh(base, forked.json.sandbox_ids[0], 'cat state.txt')).toBe('before\n');
    const released = await call(base, 'DELETE', `/sandboxes/${parent}/snapshots/${snapshot.json.snapshot_id}`);
    expect(released.json).toEqual({ status: 'released', snapshot_id: snapshot.json.snapshot_id });
    expect((await call(base, 'DELETE', `/sandboxes/${parent}/snapshots/${snapshot.json.snapshot_id}`)).status).toBe(404);
    const unknown = await call(base, 'POST', `/sandboxes/${parent}/fork`, { snapshot_id: snapshot.json.snapshot_id });
    expect(unknown.status).toBe(400);
    expect(unknown.json.detail).toMatch(/not found/);
    // The fork still has its files after the release.
    expect(await sh(base, forked.json.sandbox_ids[0], 'cat state.txt')).toBe('before\n');
    for (const id of [forked.json.sandbox_ids[0], parent]) await call(base, 'DELETE', `/sandboxes/${id}`);
  });

  it('answers 501 over a provider that cannot fork', { timeout: 60_000 }, async () => {
    // The local provider without its snapshot and fork methods.
    const plain: SandboxProvider = {
      name: 'plain',
      describe: () => local.describe(),
      create: async (spec, options) => {
        const sandbox = await local.create(spec, options);
        return new Proxy(sandbox, {
          get: (target, key) => {
            if (key === 'snapshot') return undefined;
            const value = Reflect.get(target, key, target) as unknown;
            return typeof value === 'function' ? value.bind(target) : value;
          },
        });
      },
      close: async () => undefined,
    };
    const other = await serve({ provider: plain });
    const id = await ready(other);
    const answer = await call(other, 'POST', `/sandboxes/${id}/fork`, { count: 1 });
    expect(answer.status).toBe(501);
    expect(answer.json.detail).toMatch(/plain provider cannot snapshot or fork/);
    await call(other, 'DELETE', `/sandboxes/${id}`);
  });
});
