/**
 * `WS /sandboxes/{id}/exec/pty` of `winnower sandbox serve` over the local provider, through a double
 * of Orchard's PTY client (test/support/orchard-pty-client.ts): the agent's frame protocol (init,
 * stdin, resize, signal, close; ready, stdout, exit, error), the three auth forms, the close codes
 * 4401/4404/4409, a real pseudo-terminal inside the sandbox, and the sandbox outliving the session;
 * each with the terminal the exec agent makes and with util-linux `script` (a sandbox without the agent).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import { orchardEnvApi, type OrchardEnvApiOptions } from '../../src/sandbox/serve/plugin.js';
import type { SandboxProvider } from '../../src/sandbox/types.js';
import { OrchardSdkClient, type SdkSandbox } from '../support/orchard-sdk-client.js';
import { PtyProcess, type PtyAuth } from '../support/orchard-pty-client.js';
import { makeContractRepo } from './contract.js';
import { bwrapMissing } from './local-helpers.js';

const KEY = 'pty-test-key';
const repoDir = mkdtempSync(join(tmpdir(), 'wnw-pty-repo-'));
makeContractRepo(repoDir);
const quiet = { info: () => undefined, warn: () => undefined };
const local = createLocalProvider({ logger: quiet });
// Without the resident exec agent, serve makes the terminal itself with util-linux `script`.
const launching = createLocalProvider({ logger: quiet, exec: 'launch' });
const servers: FastifyInstance[] = [];

afterAll(async () => {
  for (const server of servers) await server.close();
  await local.close();
  await launching.close();
  rmSync(repoDir, { recursive: true, force: true });
});

async function serve(options: Partial<OrchardEnvApiOptions> = {}): Promise<string> {
  const app = Fastify();
  await app.register(orchardEnvApi, { provider: local, repo: { path: repoDir }, apiKey: KEY, cleanupIntervalMs: 0, ...options });
  await app.listen({ host: '127.0.0.1', port: 0 });
  servers.push(app);
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

const modes = [
  ['the exec agent', local, true],
  ['util-linux script (exec: launch)', launching, false],
] as const;

for (const [mode, provider, agent] of modes)
  describe.skipIf(bwrapMissing)(`winnower sandbox serve: the PTY WebSocket, the terminal made by ${mode}`, () => {
    let base: string;
    let sdk: OrchardSdkClient;
    let sandbox: SdkSandbox;
    beforeAll(async () => {
      base = await serve({ provider });
      sdk = new OrchardSdkClient(base, KEY);
      sandbox = await sdk.createSandbox('python:3.11-slim');
    });
    afterAll(async () => sdk.close());

    it.each(['query', 'header', 'protocol'] as PtyAuth[])(
      'auth by %s: init, ready with a pid, a real tty of the asked size, stdin, output and exit',
      async (auth) => {
        const pty = await PtyProcess.open({
          baseUrl: base,
          sandboxId: sandbox.sandboxId,
          apiKey: KEY,
          auth,
          command: `tty; stty size; [ -t 0 ] && echo interactive; read -r line; echo "got $line in $(pwd)"; exit 7`,
          rows: 30,
          cols: 100,
          env: { GREETING: 'x' },
        });
        await pty.until(() => pty.frames.some((frame) => frame.type === 'ready'), 'ready');
        expect(pty.frames.find((frame) => frame.type === 'ready')).toEqual({ type: 'ready', pid: expect.any(Number) });
        await pty.until(() => pty.output().includes('interactive'), 'the tty check');
        expect(pty.output()).toMatch(/^\/dev\/pts\/\d+\r\n30 100\r\ninteractive\r\n/);
        pty.writeStdin('hello\n');
        expect(await pty.wait()).toBe(7);
        // The pty echoes what was typed, and turns \n into \r\n, as a terminal does.
        expect(pty.output()).toContain('hello\r\ngot hello in /workspace\r\n');
        await pty.closed;
        expect(pty.closeCode).toBe(1000);
      },
    );

    it('ready {pid} is the first frame, before any output, also for a command that prints and exits at once', async () => {
      for (let round = 0; round < 6; round++) {
        const pty = await PtyProcess.open({ baseUrl: base, sandboxId: sandbox.sandboxId, apiKey: KEY, auth: 'query', command: 'echo $$' });
        expect(await pty.wait()).toBe(0);
        expect(pty.frames[0]).toEqual({ type: 'ready', pid: expect.any(Number) });
        expect(pty.frames.filter((frame) => frame.type === 'ready')).toHaveLength(1);
        // The pid is the command's own (the SDK's proc.pid).
        expect(pty.output()).toBe(`${pty.frames[0]!.pid}\r\n`);
      }
    });

    it('resize reaches the terminal (SIGWINCH, new size); signals reach the command; the sandbox outlives the session', async () => {
      const pty = await PtyProcess.open({
        baseUrl: base,
        sandboxId: sandbox.sandboxId,
        apiKey: KEY,
        auth: 'query',
        command: [
          'bash',
          '-c',
          `trap 'echo "winch $(stty size)"' WINCH; trap 'echo "int"' INT; trap 'echo term; exit 3' TERM; echo started; while :; do sleep 0.05; done`,
        ],
        cwd: '/tmp',
      });
      await pty.until(() => pty.output().includes('started'), 'start');
      pty.resize(40, 120);
      await pty.until(() => pty.output().includes('winch 40 120'), 'the resize');
      pty.kill('INT');
      await pty.until(() => pty.output().includes('int'), 'SIGINT');
      pty.kill('TERM');
      expect(await pty.wait()).toBe(3);
      expect(pty.output()).toContain('term');
      expect(await sandbox.exec('echo still here')).toMatchObject({ exit_code: 0, stdout: 'still here\n' });
    });

    // Defined only where the exec agent holds the terminal: the `script` fallback runs a short
    // command per frame (docs/sandbox-serve.md), so there is nothing to skip there.
    const withAgent = agent ? it : ((() => undefined) as unknown as typeof it);
    withAgent('resize and signal frames start no process in the sandbox, and each one takes effect', async () => {
      const program = [
        'import os, signal, sys',
        'signal.signal(signal.SIGWINCH, lambda *_: os.write(1, ("winch %d %d\\n" % tuple(os.get_terminal_size())[::-1]).encode()))',
        'signal.signal(signal.SIGINT, lambda *_: os.write(1, b"int\\n"))',
        'os.write(1, b"up\\n")',
        'sys.stdin.readline()',
      ].join('\n');
      const pty = await PtyProcess.open({
        baseUrl: base,
        sandboxId: sandbox.sandboxId,
        apiKey: KEY,
        auth: 'query',
        command: ['python3', '-c', program],
      });
      await pty.until(() => pty.output().includes('up'), 'start');
      // Pids in the sandbox's one pid namespace are handed out in turn: what the frames started shows between two.
      const before = Number((await sandbox.exec('echo $$')).stdout);
      for (let round = 1; round <= 10; round++) {
        pty.resize(20 + round, 80 + round);
        pty.kill('INT');
      }
      await pty.until(() => pty.output().includes('winch 30 90'), 'the last size');
      await pty.until(() => pty.output().includes('int'), 'SIGINT');
      const after = Number((await sandbox.exec('echo $$')).stdout);
      expect(after - before).toBe(1);
      pty.kill('TERM');
      expect(await pty.wait()).toBe(-15);
    });

    it(`a command killed by a signal the session did not send: ${agent ? '−9, as on Orchard' : '137 (no wait status without the agent)'}`, async () => {
      const pty = await PtyProcess.open({
        baseUrl: base,
        sandboxId: sandbox.sandboxId,
        apiKey: KEY,
        auth: 'query',
        command: 'echo up; kill -9 $$',
      });
      expect(await pty.wait()).toBe(agent ? -9 : 137);
      expect(pty.output()).toBe('up\r\n');
    });

    it('a cwd that is not a directory means /, as on the agent', async () => {
      const pty = await PtyProcess.open({
        baseUrl: base,
        sandboxId: sandbox.sandboxId,
        apiKey: KEY,
        auth: 'query',
        command: 'pwd',
        cwd: '/nowhere',
      });
      expect(await pty.wait()).toBe(0);
      expect(pty.output()).toBe('/\r\n');
    });

    it('KILL ends the command with −9, as on Orchard; close asks it to end (TERM, −15); an exit status of 137 is 137; the client leaving kills the session, not the sandbox', async () => {
      const killed = await PtyProcess.open({
        baseUrl: base,
        sandboxId: sandbox.sandboxId,
        apiKey: KEY,
        auth: 'header',
        command: 'echo up; sleep 600',
      });
      await killed.until(() => killed.output().includes('up'), 'start');
      killed.kill('KILL');
      expect(await killed.wait()).toBe(-9);

      const closing = await PtyProcess.open({
        baseUrl: base,
        sandboxId: sandbox.sandboxId,
        apiKey: KEY,
        auth: 'header',
        command: 'echo up; sleep 600',
      });
      await closing.until(() => closing.output().includes('up'), 'start');
      closing.send({ type: 'close' });
      expect(await closing.wait()).toBe(-15);

      const exited = await PtyProcess.open({
        baseUrl: base,
        sandboxId: sandbox.sandboxId,
        apiKey: KEY,
        auth: 'query',
        command: 'exit 137',
      });
      expect(await exited.wait()).toBe(137);

      const marker = `wnw-pty-left-${process.pid}-${Date.now()}`;
      const leaving = await PtyProcess.open({
        baseUrl: base,
        sandboxId: sandbox.sandboxId,
        apiKey: KEY,
        auth: 'query',
        command: `echo up; exec -a ${marker} sleep 600`,
      });
      await leaving.until(() => leaving.output().includes('up'), 'start');
      const running = (): boolean =>
        execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
          .split('\n')
          .some((line) => line.startsWith(marker));
      await expect.poll(running, { timeout: 10_000 }).toBe(true);
      leaving.close();
      await expect.poll(running, { timeout: 20_000 }).toBe(false);
      expect(await sandbox.exec('echo alive')).toMatchObject({ stdout: 'alive\n' });
    });

    it('refuses before running anything: 4401 without or with a wrong key, 4404 unknown sandbox, 4409 not ready; a bad init frame is an error frame and 4400', async () => {
      for (const [apiKey, auth] of [
        [undefined, 'none'],
        ['wrong', 'query'],
        ['wrong', 'protocol'],
        ['wrong', 'header'],
      ] as const) {
        const pty = await PtyProcess.open({ baseUrl: base, sandboxId: sandbox.sandboxId, apiKey, auth, command: 'echo never' });
        await pty.closed;
        expect(pty.closeCode, `${auth} ${apiKey}`).toBe(4401);
        expect(pty.output()).toBe('');
      }
      const unknown = await PtyProcess.open({ baseUrl: base, sandboxId: 'no-such-sandbox', apiKey: KEY, auth: 'query', command: 'true' });
      await unknown.closed;
      expect(unknown.closeCode).toBe(4404);

      let release = (): void => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const slow: SandboxProvider = {
        name: 'slow',
        describe: () => provider.describe(),
        close: async () => undefined,
        create: async (spec, options) => (await gate, provider.create(spec, options)),
      };
      const slowBase = await serve({ provider: slow });
      const pending = await new OrchardSdkClient(slowBase, KEY).createSandbox('x', { waitReady: false });
      const notReady = await PtyProcess.open({
        baseUrl: slowBase,
        sandboxId: pending.sandboxId,
        apiKey: KEY,
        auth: 'query',
        command: 'true',
      });
      await notReady.closed;
      expect(notReady.closeCode).toBe(4409);
      release();

      const bad = await PtyProcess.open({ baseUrl: base, sandboxId: sandbox.sandboxId, apiKey: KEY, auth: 'query', command: [] });
      await bad.closed;
      expect(bad.closeCode).toBe(4400);
      expect(bad.frames).toEqual([{ type: 'error', message: 'bad init frame: cmd must be a non-empty list of strings' }]);
    });
  });
