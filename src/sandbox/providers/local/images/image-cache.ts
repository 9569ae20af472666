/**
 * The rootfs cache of the local provider: one read-only root filesystem per image manifest digest,
 * unpacked once and shared by every sandbox of that image (the lower layer of their overlays).
 *
 *   <cacheDir>/<digest hex>/rootfs       the unpacked image (owned by the sandbox user)
 *   <cacheDir>/<digest hex>/image.json   digest, source, config (written last: its presence marks the entry complete)
 *   <cacheDir>/.tmp-<pid>-<random>/      an unpack in progress, renamed into place when done
 *
 * The key is the SHA-256 of the manifest skopeo reads for the reference (`skopeo inspect --raw`),
 * so a moved tag gets a new entry and the same image under two names shares one. Concurrent
 * requests for one reference share one pull (and one abort: the last caller to give up stops it).
 * Entries outlive the process; nothing is evicted (remove a folder to drop an image).
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { abortedError, wnwError, WinnowerError } from '../../../../errors.js';
import { SharedTaskMap } from '../../../../util/shared-task.js';
import { tail } from '../../../host-command.js';
import { isAlive } from '../../../../util/process-alive.js';
import { removeTree, type Owner } from '../overlay.js';
import { readLayoutConfig, type ImageConfig } from './image-config.js';
import type { ImageReference } from '../../../image-reference.js';
import { makeDirs } from '../../../reachable.js';
import { runTool, skopeoError, sourceFlags, type ImageTools, type RegistrySettings } from './image-tools.js';

export interface CachedImage {
  /** `sha256:<hex>` of the manifest the reference resolved to. */
  digest: string;
  /** Host path of the unpacked root filesystem; never written once published. */
  rootfs: string;
  config: ImageConfig;
  /** The reference it was first pulled as. */
  source: string;
}

export interface ImageCacheOptions extends RegistrySettings {
  cacheDir: string;
  tools: ImageTools;
  /** The sandbox user: umoci unpacks as this user (rootless), so every file is the sandbox's. */
  owner: Owner | undefined;
  /** Deadline of resolving, pulling and unpacking one image (default DEFAULT_PULL_TIMEOUT_MS). */
  pullTimeoutMs?: number;
  /** How long the registry may take to answer the manifest request (default DEFAULT_REGISTRY_TIMEOUT_MS). */
  registryTimeoutMs?: number;
  /** Runs on a fresh rootfs before it is published (git index refresh); may write to it. */
  finalize?(rootfs: string, config: ImageConfig, signal: AbortSignal): Promise<void>;
}

/** SWE-bench images are several GB: half an hour for a first pull and unpack. */
export const DEFAULT_PULL_TIMEOUT_MS = 30 * 60_000;
const TAG = 'winnower';
/** Longest wait for a registry to answer the manifest request (default of registryTimeoutMs). */
export const DEFAULT_REGISTRY_TIMEOUT_MS = 120_000;

const Entry = z.object({
  digest: z.string(),
  source: z.string(),
  config: z.object({ env: z.record(z.string(), z.string()), workingDir: z.string().optional(), user: z.string().optional() }),
});

export class ImageCache {
  /** By skopeo reference; a failure is not kept: the next request tries again (the registry may be back). */
  readonly #tasks = new SharedTaskMap<CachedImage>();
  #closed = false;

  private constructor(readonly options: ImageCacheOptions) {}

  /** Opens (creates) the cache folder and removes unpacks left by processes that died. */
  static async open(options: ImageCacheOptions): Promise<ImageCache> {
    makeDirs(options.cacheDir, 0o711);
    for (const entry of await readdir(options.cacheDir).catch(() => [])) {
      const match = /^\.tmp-(\d+)-[0-9a-f]+$/.exec(entry);
      if (match && !isAlive(Number(match[1]))) await removeTree(join(options.cacheDir, entry)).catch(() => undefined);
    }
    return new ImageCache(options);
  }

  /**
   * The unpacked image of `ref`, pulled on first request. `signal` stops this caller's wait; the
   * pull itself stops when every caller has given up, or at the deadline.
   */
  get(ref: ImageReference, signal?: AbortSignal): Promise<CachedImage> {
    if (this.#closed) return Promise.reject(wnwError('WNW_ERR_SBX_CLOSED', 'the local sandbox provider is closed'));
    return this.#tasks.join(ref.skopeo, (abort) => this.#resolve(ref, abort), signal);
  }

  /** Stops pulls in progress; the entries on disk stay. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#tasks.abortAll(wnwError('WNW_ERR_SBX_CLOSED', 'the local sandbox provider is closed'));
  }

  async #resolve(ref: ImageReference, abort: AbortSignal): Promise<CachedImage> {
    const timeoutMs = this.options.pullTimeoutMs ?? DEFAULT_PULL_TIMEOUT_MS;
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([abort, deadline]);
    const started = Date.now();
    const left = (): number => Math.max(1, timeoutMs - (Date.now() - started));
    const pastDeadline = (): WinnowerError =>
      wnwError(
        'WNW_ERR_SBX_TIMEOUT',
        `pulling and unpacking ${ref.display} did not finish within ${Math.round(timeoutMs / 1000)} s (sandbox.settings.pullTimeoutMs)`,
        {
          details: { image: ref.display, timeout_ms: timeoutMs },
        },
      );
    try {
      // A registry that takes the connection and never answers is named after two minutes, not at the pull's deadline.
      const registryMs = this.options.registryTimeoutMs ?? DEFAULT_REGISTRY_TIMEOUT_MS;
      const inspectMs = Math.min(left(), registryMs);
      const inspect = await runTool(
        this.options.tools.skopeo,
        ['inspect', '--raw', ...sourceFlags(ref, this.options, 'inspect'), '--', ref.skopeo],
        { signal, timeoutMs: inspectMs },
      );
      if (inspect.timedOut && inspectMs < registryMs) throw pastDeadline();
      if (inspect.timedOut) {
        throw wnwError(
          'WNW_ERR_SBX_REGISTRY',
          `reading the manifest of ${ref.display}: no answer within ${Math.round(registryMs / 1000)} s (sandbox.settings.registryTimeoutMs)`,
          {
            details: { image: ref.display, registry: ref.registry ?? 'docker.io', reason: 'timeout' },
            retryable: true,
          },
        );
      }
      if (inspect.code !== 0) throw skopeoError(ref, 'cannot read the manifest of', inspect);
      const digest = `sha256:${createHash('sha256').update(inspect.stdout).digest('hex')}`;
      const dir = join(this.options.cacheDir, digest.slice('sha256:'.length));
      return (await this.#load(dir)) ?? (await this.#pull(ref, digest, dir, signal, left, pastDeadline));
    } catch (error) {
      if (abort.aborted) throw WinnowerError.isInstance(abort.reason) ? abort.reason : abortedError(abort);
      if (deadline.aborted) throw pastDeadline();
      if (WinnowerError.isInstance(error)) throw error;
      throw wnwError('WNW_ERR_SBX_IMAGE', `cannot prepare ${ref.display}: ${(error as Error).message}`, {
        cause: error,
        details: { image: ref.display },
      });
    }
  }

  async #load(dir: string): Promise<CachedImage | undefined> {
    const text = await readFile(join(dir, 'image.json'), 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    const entry = Entry.parse(JSON.parse(text));
    return { ...entry, rootfs: join(dir, 'rootfs') };
  }

  async #pull(
    ref: ImageReference,
    digest: string,
    dir: string,
    signal: AbortSignal,
    left: () => number,
    pastDeadline: () => WinnowerError,
  ): Promise<CachedImage> {
    const { tools, owner, cacheDir } = this.options;
    const tmp = join(cacheDir, `.tmp-${process.pid}-${randomBytes(6).toString('hex')}`);
    const layout = join(tmp, 'layout');
    const rootfs = join(tmp, 'rootfs');
    try {
      await mkdir(tmp);
      await chmod(tmp, 0o711);
      if (owner) await chown(tmp, owner.uid, owner.gid);
      const copy = await runTool(
        tools.skopeo,
        ['copy', '--quiet', ...sourceFlags(ref, this.options, 'copy'), '--', ref.skopeo, `oci:${layout}:${TAG}`],
        {
          signal,
          timeoutMs: left(),
        },
      );
      if (copy.timedOut) throw pastDeadline();
      if (copy.code !== 0) throw skopeoError(ref, 'cannot pull', copy);
      const config = await readLayoutConfig(layout, TAG);
      // Rootless: no device nodes, ownership of every entry = the unpacking user (the sandbox's),
      // which is what the sandbox user needs to change any file through its overlay.
      const unpack = await runTool(tools.umoci, ['raw', 'unpack', '--rootless', '--image', `${layout}:${TAG}`, rootfs], {
        signal,
        timeoutMs: left(),
        as: owner,
      });
      if (unpack.timedOut) throw pastDeadline();
      if (unpack.code !== 0)
        throw wnwError('WNW_ERR_SBX_IMAGE', `cannot unpack ${ref.display}: ${tail(unpack.stderr)}`, {
          details: { image: ref.display, stderr: tail(unpack.stderr) },
        });
      await rm(layout, { recursive: true, force: true });
      await this.options.finalize?.(rootfs, config, signal);
      await writeFile(join(tmp, 'image.json'), `${JSON.stringify({ digest, source: ref.display, config }, null, 2)}\n`, { mode: 0o644 });
      try {
        await rename(tmp, dir);
      } catch (error) {
        // Another process published the same digest first: theirs is as good as ours.
        const theirs = await this.#load(dir).catch(() => undefined);
        if (!theirs) throw error;
        await removeTree(tmp).catch(() => undefined);
        return theirs;
      }
      return { digest, source: ref.display, config, rootfs: join(dir, 'rootfs') };
    } catch (error) {
      await removeTree(tmp).catch(() => undefined);
      throw error;
    }
  }
}
