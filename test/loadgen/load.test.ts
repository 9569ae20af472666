/** The autocannon runner of `winnower bench`: distinct bodies per request, failures counted, one summary. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLoad } from '../../src/loadgen/load.js';
import { formatReport } from '../../src/loadgen/report.js';
import { scoringBody, unscored } from '../../src/loadgen/scenarios.js';

describe('runLoad', () => {
  let server: Server;
  let base: string;
  const bodies: string[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        bodies.push(body);
        // Every fifth request fails, so the summary must count non-2xx.
        response.writeHead(bodies.length % 5 === 0 ? 503 : 200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends `amount` requests, each with its own number in the body, and counts the non-2xx', async () => {
    const result = await runLoad(
      base,
      { method: 'POST', path: '/score', bodyParts: ['{"n":', '}'] },
      { connections: 2, durationS: 10, amount: 20, timeoutS: 5, label: 'test', progress: false },
    );
    expect(result.requests).toBe(20);
    expect(new Set(bodies.map((body) => JSON.parse(body).n)).size).toBe(20);
    expect(result.non_2xx).toBe(4);
    expect(result.status_codes).toEqual({ 200: 16, 503: 4 });
    expect(result.errors).toBe(0);
    expect(result.latency_ms.p99).toBeGreaterThanOrEqual(result.latency_ms.p50);
  });

  it('puts the number in every place of the body, draws it from a shared source, and counts 2xx answers called failures', async () => {
    bodies.length = 0;
    let next = 100;
    const request = {
      method: 'POST' as const,
      path: '/classify',
      bodyParts: ['{"a":', ',"b":', '}'],
      failedAnswer: (body: string) => body === '{}',
    };
    const result = await runLoad(base, request, {
      connections: 1,
      durationS: 10,
      amount: 3,
      timeoutS: 5,
      label: 'test',
      progress: false,
      nextNumber: () => (next += 1),
    });
    expect(bodies.map((body) => JSON.parse(body))).toEqual([
      { a: 101, b: 101 },
      { a: 102, b: 102 },
      { a: 103, b: 103 },
    ]);
    // Every answer is `{}`, the 200s among them are the failed answers.
    expect(result.failed_answers).toBe(result.status_codes[200]);
    expect(result.failed_answers).toBeGreaterThan(0);
  });
});

describe('runLoad when nothing finishes in the window', () => {
  let held: Server;
  let base: string;
  beforeAll(async () => {
    // Takes every request and never answers (a scorer slower than the window).
    held = createServer(() => undefined);
    await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(held.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    held.closeAllConnections();
    return new Promise<void>((resolve) => held.close(() => resolve()));
  });

  it('counts the requests still in flight and marks the row incomplete, with no zero figures', async () => {
    const result = await runLoad(
      base,
      { method: 'POST', path: '/score', bodyParts: ['{"n":', '}'] },
      { connections: 3, durationS: 1, timeoutS: 30, label: 'test', progress: false },
    );
    expect(result).toMatchObject({ requests: 0, errors: 0, in_flight: 3, incomplete: true });
    const report = formatReport({
      scenario: 'score',
      target: base,
      server: {},
      request: {},
      load: { duration_s: 1, warmup_s: 0, timeout_s: 30 },
      runs: [{ connections: 3, winnower: result }],
    });
    const row = report.split('\n').find((line) => line.startsWith('winnower /score'))!;
    expect(row).toContain('(incomplete)');
    expect(row).not.toMatch(/\b0\.0\b/);
    expect(report).toContain('0 finished, 3 still in flight');
  });
});

describe('unscored', () => {
  it('calls a /score answer with an error in place of a score a failure, and a full one not', () => {
    expect(
      unscored(
        JSON.stringify({
          scores: [
            { trajectory_id: 'a', value: 0.5 },
            { trajectory_id: 'b', value: 0.1 },
          ],
        }),
      ),
    ).toBe(false);
    expect(
      unscored(
        JSON.stringify({
          scores: [
            { trajectory_id: 'a', value: 0.5 },
            { trajectory_id: 'b', error: { code: 'WNW_ERR_SCORE_UPSTREAM', message: 'down' } },
          ],
        }),
      ),
    ).toBe(true);
    expect(unscored('{"scores": [')).toBe(true);
  });
});

describe('scoring scenario body', () => {
  it('holds N distinct candidates and one place for the request number, in the issue text', () => {
    const [head, tail] = scoringBody({ candidates: 3, tokens: 500 });
    const body = JSON.parse(`${head}7${tail}`);
    expect(body.task.problem_statement).toMatch(/\(bench request 7\)$/);
    expect(body.candidates.map((candidate: { id: string }) => candidate.id)).toEqual(['bench-0', 'bench-1', 'bench-2']);
    expect(new Set(body.candidates.map((candidate: { messages: unknown[] }) => JSON.stringify(candidate.messages))).size).toBe(3);
    const longer = JSON.parse(`${scoringBody({ candidates: 1, tokens: 4000 }).join('1')}`);
    expect(JSON.stringify(longer.candidates[0].messages).length).toBeGreaterThan(JSON.stringify(body.candidates[0].messages).length * 4);
  });
});
