/**
 * `winnower sandbox serve`'s request timeout (sandbox.serve.request_timeout_s, --request-timeout):
 * a client that never finishes sending its request gets 408 and a closed connection, instead of
 * holding the connection (and its buffered body) for as long as it likes.
 */
import { connect, type AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalProvider } from '../../src/sandbox/providers/local/provider.js';
import { orchardEnvApi } from '../../src/sandbox/serve/plugin.js';
import { requestTimeoutOptions, SandboxServeConfigSchema } from '../../src/sandbox/serve/serve-config.js';
import { quietLogger } from './local-helpers.js';

const provider = createLocalProvider({ logger: quietLogger });
afterAll(() => provider.close());

describe('sandbox serve: request timeout', () => {
  it('answers 408 and closes the connection of a client that stops sending its body', { timeout: 30_000 }, async () => {
    const app = Fastify({ ...requestTimeoutOptions({ request_timeout_s: 0.5 }) });
    await app.register(orchardEnvApi, { provider, apiKey: 'key' });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const { port } = app.server.address() as AddressInfo;
      const socket = connect(port, '127.0.0.1');
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.write(
        'POST /sandboxes HTTP/1.1\r\nHost: localhost\r\nX-API-Key: key\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"image":',
      );
      await closed;
      expect(answer).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      await app.close();
    }
  });

  it('takes the timeout from sandbox.serve.request_timeout_s (default 300 s) and refuses a non-positive one', () => {
    expect(requestTimeoutOptions(undefined).requestTimeout).toBe(300_000);
    expect(requestTimeoutOptions(SandboxServeConfigSchema.parse({ request_timeout_s: 2 })).requestTimeout).toBe(2000);
    expect(SandboxServeConfigSchema.safeParse({ request_timeout_s: 0 }).success).toBe(false);
  });
});
