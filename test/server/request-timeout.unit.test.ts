/**
 * A request whose body never finishes is answered 408 and its socket closed once
 * server.request_timeout_s has passed, with and without API keys (docs/design/05-defects-found.md#D7:
 * without keys such connections were held open indefinitely). Over a raw socket, since `inject()` has none.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { listenOnLoopback, startTestApp, type TestApp } from './test-app.js';

const KEY = 'secret-key-123';

/** Sends headers announcing 1000 bytes and only the body's first few, then waits for the server to close; what it answered. */
function sendPartialBody(port: number, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    const extra = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(
      `POST /score HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n${extra}\r\n{"task":`,
    );
  });
}

describe('request timeout', () => {
  let open: TestApp;
  let keyed: TestApp;
  let openPort: number;
  let keyedPort: number;

  beforeAll(async () => {
    open = await startTestApp({ requestTimeoutMs: 400 });
    keyed = await startTestApp({ requestTimeoutMs: 400, apiKeys: [KEY] });
    ({ port: openPort } = await listenOnLoopback(open.app));
    ({ port: keyedPort } = await listenOnLoopback(keyed.app));
  });

  afterAll(async () => {
    await open?.close();
    await keyed?.close();
  });

  it('answers 408 and closes a half-sent body without API keys', async () => {
    const answer = await sendPartialBody(openPort);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain('"reason":"timeout"');
  });

  it('answers 408 and closes a half-sent body from a client with a valid key', async () => {
    const answer = await sendPartialBody(keyedPort, { authorization: `Bearer ${KEY}` });
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('is configurable, a minute or less by default', () => {
    expect(loadConfig({ env: {} }).server.request_timeout_s).toBeLessThanOrEqual(60);
    expect(loadConfig({ env: { WINNOWER_REQUEST_TIMEOUT_S: '5' } }).server.request_timeout_s).toBe(5);
  });
});
