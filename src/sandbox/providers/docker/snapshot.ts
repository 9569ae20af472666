/**
 * Snapshots of docker sandboxes (docs/sandboxes.md#snapshots-and-forks): `docker commit` of the
 * container into an image of its own (the container paused while it is written), which forks are
 * created from. What the commit holds is the container's filesystem: the workspace, /tmp and every
 * other path the sandbox wrote; not its processes, nor what its binds show. The image is removed
 * once the snapshot is released and no fork made from it is left (the engine refuses to remove an
 * image a container or a child image still uses), and every image still held goes when the provider closes.
 */
import { randomBytes } from 'node:crypto';
import { wnwError } from '../../../errors.js';
import type { SandboxSnapshot, SandboxSpec } from '../../types.js';
import { DockerContainerSize, DockerIdResponse } from './api-types.js';
import type { DockerClient } from './client.js';

/** The repository (image name) committed snapshots are tagged under, so an operator can find them. */
export const SNAPSHOT_REPOSITORY = 'winnower-snapshot';

/** What a fork needs besides the image: the parent's spec and diff base. */
export interface DockerSnapshotSource {
  sandboxId: string;
  spec: SandboxSpec;
  workdir: string;
  /** The parent's diff base when it was taken (a tree after markBase, else its base commit). */
  base: string | undefined;
  /** The snapshot the parent was forked from: its image is this one's parent, so it stays until this one goes. */
  from?: DockerSnapshot | undefined;
}

export class DockerSnapshot implements SandboxSnapshot {
  readonly id: string;
  readonly sandboxId: string;
  readonly bytes: number;
  readonly source: DockerSnapshotSource;
  /** The committed image's id (`sha256:…`). */
  readonly image: string;
  readonly #client: DockerClient;
  readonly #onRemoved: (snapshot: DockerSnapshot) => void;
  #users = 0;
  #released = false;
  #removed: Promise<void> | undefined;

  constructor(init: {
    client: DockerClient;
    id: string;
    image: string;
    bytes: number;
    source: DockerSnapshotSource;
    onRemoved: (snapshot: DockerSnapshot) => void;
  }) {
    this.#client = init.client;
    this.id = init.id;
    this.image = init.image;
    this.bytes = init.bytes;
    this.source = init.source;
    this.sandboxId = init.source.sandboxId;
    this.#onRemoved = init.onRemoved;
    init.source.from?.use();
  }

  get released(): boolean {
    return this.#released;
  }

  /** A fork is being made from it or runs from it, or a snapshot of such a fork is held. */
  use(): void {
    this.#users += 1;
  }

  /** A fork closed (or failed to start), or a snapshot stacked on it went: the image goes if it was the last and the snapshot is released. */
  unuse(): Promise<void> {
    this.#users -= 1;
    return this.#removeIfFree();
  }

  release(): Promise<void> {
    this.#released = true;
    return this.#removeIfFree();
  }

  /** No fork may be made from it any more (the provider is closing). */
  markReleased(): void {
    this.#released = true;
  }

  /** Removes the image now, forks or not (the provider is closing, its sandboxes closed first). */
  remove(): Promise<void> {
    this.#released = true;
    this.#removed ??= this.#client
      .empty({ method: 'DELETE', path: `/images/${encodeURIComponent(this.image)}`, query: { force: true }, ok: [200, 404] })
      .then(
        async () => {
          this.#onRemoved(this);
          // The image below this one may go now (the engine refuses to remove an image with children).
          await this.source.from?.unuse();
        },
        (error: unknown) => {
          // Kept for a later try (the provider's close removes every image still held).
          this.#removed = undefined;
          throw error;
        },
      );
    return this.#removed;
  }

  #removeIfFree(): Promise<void> {
    if (!this.#released || this.#users > 0) return this.#removed ?? Promise.resolve();
    return this.remove();
  }
}

/**
 * Commits `containerId` into an image tagged `winnower-snapshot:<id>`, paused while it is written
 * so that it is one moment's files; `bytes` is what the container wrote (SizeRw), which is what the
 * commit adds on the host.
 */
export async function commitContainer(
  client: DockerClient,
  containerId: string,
  signal: AbortSignal | undefined,
): Promise<{ id: string; image: string; bytes: number }> {
  const id = `snap-${randomBytes(6).toString('hex')}`;
  const inspect = await client.json(
    { method: 'GET', path: `/containers/${containerId}/json`, query: { size: true }, signal },
    DockerContainerSize,
  );
  const committed = await client.json(
    {
      method: 'POST',
      path: '/commit',
      query: { container: containerId, repo: SNAPSHOT_REPOSITORY, tag: id, pause: true, comment: `winnower snapshot of ${containerId}` },
      signal,
      errors: {
        404: { code: 'WNW_ERR_SBX_LOST', message: `container ${containerId} is gone: nothing to snapshot`, details: { lost: true } },
      },
    },
    DockerIdResponse,
  );
  return { id, image: committed.Id, bytes: inspect.SizeRw ?? 0 };
}

/** The snapshot is one of this provider's and still held, or a coded refusal naming it. */
export function checkForkable(snapshot: SandboxSnapshot, mine: ReadonlySet<DockerSnapshot>): DockerSnapshot {
  if (!(snapshot instanceof DockerSnapshot) || !mine.has(snapshot))
    throw wnwError('WNW_ERR_INPUT_INVALID', `snapshot ${snapshot.id} is not one of this docker provider's`, {
      details: { field: 'snapshot', snapshot: snapshot.id },
    });
  if (snapshot.released)
    throw wnwError('WNW_ERR_INPUT_INVALID', `snapshot ${snapshot.id} was released: fork from a snapshot still held`, {
      details: { field: 'snapshot', snapshot: snapshot.id },
    });
  return snapshot;
}
