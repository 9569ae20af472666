/** Health probes and metric scrapes log nothing at info level; other requests still do (docs/design/05-defects-found.md#D13). */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './test-app.js';

describe('request logs', () => {
  const lines: string[] = [];
  let server: TestApp;

  beforeAll(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    server = await startTestApp({ logger: { level: 'info', stream } });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('writes no line for /healthz, /readyz or /metrics, and still logs other routes', async () => {
    for (const url of ['/healthz', '/readyz', '/metrics']) expect((await server.app.inject(url)).statusCode).toBeLessThan(500);
    expect(lines).toEqual([]);
    await server.app.inject('/jobs');
    expect(lines.some((line) => line.includes('"url":"/jobs"'))).toBe(true);
  });
});
