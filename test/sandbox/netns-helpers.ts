/**
 * A network namespace of the test's own, standing for "the outside": a veth pair from the host
 * (`ip netns add` + `ip link add ... type veth`, as root), with a TCP listener on the far end that
 * answers a fixed text to whoever connects.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TestNamespace {
  /** The host's end of the veth pair: an address of the host, like any other. */
  hostAddress: string;
  /** The listener's address and port, inside the namespace. */
  farAddress: string;
  farPort: number;
  /** What the listener answers. */
  farText: string;
  remove(): void;
}

const ip = (...args: string[]): string => execFileSync('ip', args, { encoding: 'utf8' });

/** Creates the namespace, its veth pair and the listener; resolves once the listener listens. */
export async function createTestNamespace(farText: string): Promise<TestNamespace> {
  const id = process.pid;
  const name = `wnw-test-${id}`;
  const hostIf = `wnwh${id}`;
  const farIf = `wnwn${id}`;
  // A /30 of its own per test process, out of the way of the usual private ranges' first blocks.
  const net = `10.${200 + (id % 50)}.${(id >> 6) % 250}`;
  const hostAddress = `${net}.1`;
  const farAddress = `${net}.2`;
  let listener: ChildProcess | undefined;
  const remove = (): void => {
    listener?.kill('SIGKILL');
    try {
      ip('netns', 'del', name);
    } catch {
      // not created
    }
    try {
      ip('link', 'del', hostIf);
    } catch {
      // gone with the namespace
    }
  };
  try {
    ip('netns', 'add', name);
    ip('link', 'add', hostIf, 'type', 'veth', 'peer', 'name', farIf);
    ip('link', 'set', farIf, 'netns', name);
    ip('addr', 'add', `${hostAddress}/30`, 'dev', hostIf);
    ip('link', 'set', hostIf, 'up');
    ip('netns', 'exec', name, 'ip', 'addr', 'add', `${farAddress}/30`, 'dev', farIf);
    ip('netns', 'exec', name, 'ip', 'link', 'set', farIf, 'up');
    ip('netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up');
    const code = `const s = require('node:net').createServer((c) => c.end(${JSON.stringify(farText)})); s.listen(0, ${JSON.stringify(farAddress)}, () => console.log(s.address().port));`;
    const child = spawn('ip', ['netns', 'exec', name, process.execPath, '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    listener = child;
    const farPort = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(Number(out.trim()));
      });
      child.once('exit', (status) => reject(new Error(`the test namespace's listener exited (${status})`)));
    });
    return { hostAddress, farAddress, farPort, farText, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

/** A TCP listener on the host answering `text`, on `host` (127.0.0.1, 0.0.0.0 ...). */
export async function hostListener(host: string, text: string): Promise<{ port: number; server: Server }> {
  const server = createServer((socket) => socket.end(text));
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { port: (server.address() as AddressInfo).port, server };
}
