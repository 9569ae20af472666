/**
 * A git remote that never answers: a TCP server on loopback that accepts every connection and
 * then sends nothing (or, with `trickleMs`, one byte of an HTTP response that never completes
 * every so often), as a stalled or hostile server does. `http://127.0.0.1:<port>/repo.git` makes
 * `git clone` hang in git-remote-http until it is killed. Also how a test sees the git processes
 * talking to it.
 */
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { eventually, hostCommandLines } from '../sandbox/local-helpers.js';

export interface Tarpit {
  url: string;
  port: number;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Connections still open (a killed client closes its socket). */
  readonly open: number;
  /** Resolves at the first connection. */
  connected(): Promise<void>;
  close(): Promise<void>;
}

export async function startTarpit(options: { trickleMs?: number } = {}): Promise<Tarpit> {
  const sockets = new Set<Socket>();
  let connections = 0;
  let onFirst: (() => void) | undefined;
  const first = new Promise<void>((resolve) => (onFirst = resolve));
  const server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    // Read (and drop) the request, so that the client's close is seen.
    socket.resume();
    if (options.trickleMs !== undefined) {
      const header = 'HTTP/1.1 200 OK\r\n';
      let sent = 0;
      const timer = setInterval(() => socket.write(header[sent++ % header.length]!), options.trickleMs);
      socket.on('close', () => clearInterval(timer));
    }
    onFirst?.();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/repo.git`,
    port,
    get connections() {
      return connections;
    },
    get open() {
      return sockets.size;
    },
    connected: () => first,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Host processes (other than this one) whose command line names the tarpit: git clone and its remote helpers. */
export function gitProcessesFor(tarpit: Tarpit): string[] {
  return hostCommandLines()
    .filter((entry) => entry.pid !== process.pid && entry.cmdline.includes(`127.0.0.1:${tarpit.port}`))
    .map((entry) => entry.cmdline);
}

/** Waits until git is connected to the tarpit and its remote helper runs. */
export async function cloneHanging(tarpit: Tarpit): Promise<void> {
  await tarpit.connected();
  const found = await eventually(
    () => gitProcessesFor(tarpit),
    (lines) => lines.some((line) => line.includes('git-remote-http')),
  );
  expect(found).toContainEqual(expect.stringContaining('git-remote-http'));
}
