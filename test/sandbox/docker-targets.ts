/**
 * The engines the docker provider's engine tests run against: always the fake daemon, and a real
 * Docker engine when WINNOWER_DOCKER_HOST names its socket (`unix:///…`; .ci/run starts one).
 * WINNOWER_DOCKER_BASE_IMAGE is the real engine's base image (default winnower-ci/base:latest,
 * imported by .ci/run from the mmdebstrap rootfs): bash, coreutils, findutils, git, python3.
 *
 * Each target offers the same handles: an image holding the contract repository at /testbed, a
 * way to kill a container from outside, and a command the kernel kills for memory.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import type { ExecResult, Sandbox } from '../../src/sandbox/types.js';
import { FakeDocker } from '../fakes/fake-docker.js';
import { makeContractRepo } from './contract.js';

export interface DockerTarget {
  name: string;
  socketPath: string;
  /** An image with the contract repository (makeContractRepo) at /testbed. */
  contractImage: string;
  /** Whether the target enforces what only a kernel can (read-only binds for commands, users). */
  real: boolean;
  /** Kills the container from outside, as `docker kill` does. */
  kill(id: string): Promise<void>;
  /** Runs a command that dies for lack of memory in a sandbox created with memoryMb: 64. */
  runOutOfMemory(sandbox: Sandbox): Promise<ExecResult>;
  close(): Promise<void>;
}

/** The real engine's socket when WINNOWER_DOCKER_HOST asks for one. */
export function realEngineSocket(): string | undefined {
  const host = process.env.WINNOWER_DOCKER_HOST;
  if (!host) return undefined;
  if (!host.startsWith('unix://')) throw new Error(`WINNOWER_DOCKER_HOST=${host}: only unix:// sockets`);
  return host.slice('unix://'.length);
}

/** The fake daemon with the contract image. */
export async function fakeTarget(): Promise<DockerTarget> {
  const image = mkdtempSync(join(tmpdir(), 'docker-target-image-'));
  makeContractRepo(join(image, 'testbed'));
  const fake = await FakeDocker.start({ images: { 'contract-image': image } });
  return {
    name: 'fake daemon',
    socketPath: fake.socketPath,
    contractImage: 'contract-image',
    real: false,
    kill: async (id) => fake.killContainer(id),
    runOutOfMemory: async (sandbox) => {
      // The fake has no memory cgroup: the kernel's kill is played from outside.
      setTimeout(() => fake.oomKillCommands(sandbox.id), 300);
      return sandbox.exec('sleep 5');
    },
    close: async () => {
      await fake.close();
      rmSync(image, { recursive: true, force: true });
    },
  };
}

/** A real engine: builds the contract image FROM the base image through the Engine API (POST /build). */
export async function realTarget(socketPath: string): Promise<DockerTarget> {
  const agent = new Agent({ connect: { socketPath } });
  const call = async (method: 'POST' | 'DELETE', path: string, body?: Buffer): Promise<string> => {
    const response = await request(`http://docker${path}`, {
      method,
      dispatcher: agent,
      ...(body ? { body, headers: { 'content-type': 'application/x-tar' } } : {}),
    });
    const text = await response.body.text();
    if (response.statusCode >= 300) throw new Error(`${method} ${path} answered ${response.statusCode}: ${text}`);
    return text;
  };
  const base = process.env.WINNOWER_DOCKER_BASE_IMAGE ?? 'winnower-ci/base:latest';
  const tag = `winnower-test/contract:${process.pid}-${Date.now()}`;
  const context = mkdtempSync(join(tmpdir(), 'docker-target-context-'));
  try {
    makeContractRepo(join(context, 'testbed'));
    writeFileSync(join(context, 'Dockerfile'), `FROM ${base}\nCOPY testbed /testbed\n`);
    const tar = execFileSync('tar', ['-C', context, '-c', '.'], { maxBuffer: 64 * 1024 * 1024 });
    const log = await call('POST', `/build?${new URLSearchParams({ t: tag, rm: '1', forcerm: '1' })}`, tar);
    const failed = log
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { error?: string })
      .find((line) => line.error);
    if (failed) throw new Error(`building the contract image FROM ${base} failed: ${failed.error}`);
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
  return {
    name: `real engine at ${socketPath}`,
    socketPath,
    contractImage: tag,
    real: true,
    kill: async (id) => void (await call('POST', `/containers/${id}/kill`)),
    // Writes every page (bytes * n), so the cgroup's limit is really reached.
    runOutOfMemory: (sandbox) => sandbox.exec(`python3 -c "x = b'a' * (300 << 20)"`),
    close: async () => {
      await call('DELETE', `/images/${encodeURIComponent(tag)}?force=1`).catch(() => undefined);
      await agent.close();
    },
  };
}
