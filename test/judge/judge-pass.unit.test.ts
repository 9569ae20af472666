import { afterEach, describe, expect, it } from 'vitest';
import { createJudge, MAX_ANSWER_BYTES, type Judge } from '../../src/judge/judge-client.js';
import { JudgeOptions } from '../../src/judge/judge-options.js';
import { judgePass } from '../../src/judge/judge-pass.js';
import { select, type Candidate } from '../../src/select/index.js';
import { FIX_A, candidate } from '../select/fixtures.js';
import { startFakeJudge, type FakeJudge } from '../fakes/fake-judge.js';

const MARK = 'JUDGE-PREFERS-ME';
const variant = (n: number, marked = false): string =>
  FIX_A.replace('+    return a + b', `+    return a + b + ${n}${marked ? ` # ${MARK}` : ''}`);

let fake: FakeJudge | undefined;
let judge: Judge | undefined;
afterEach(async () => {
  await judge?.close();
  await fake?.close();
  judge = undefined;
  fake = undefined;
});

async function setUp(options: { bias?: number; apiKey?: string; timeout_s?: number } = {}): Promise<{ fake: FakeJudge; judge: Judge }> {
  fake = await startFakeJudge({
    ...(options.bias === undefined ? {} : { bias: options.bias }),
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
  });
  judge = createJudge(
    JudgeOptions.parse({
      url: `${fake.url}/v1`,
      model: 'judge-m',
      ...(options.apiKey ? { api_key: options.apiKey } : {}),
      timeout_s: options.timeout_s ?? 5,
    }),
    { retries: 1 },
  );
  return { fake, judge };
}

const pairKey = (a: string, b: string) => `${a}|${b}`;

describe('judgePass against an OpenAI-compatible judge with logprobs', () => {
  it('asks each pair in both orders, at most N·k pairs, and ranks by judged wins', async () => {
    const { fake, judge } = await setUp();
    const pool: Candidate[] = Array.from({ length: 8 }, (_, index) =>
      candidate(`c${index}`, variant(index, index === 5), 0.5 + index / 100),
    );
    const result = await judgePass(judge, { strategy: 'judge', candidates: pool, issue: 'add adds', k: 2 });
    expect(result.report.pairs).toBe(16);
    expect(result.report.comparisons).toBe(32);
    expect(fake.bodies('/v1/chat/completions')).toHaveLength(32);
    // Every ordered pair asked once, and its reverse too.
    const asked = new Set(fake.asked.map(({ a, b }) => pairKey(a, b)));
    expect(asked.size).toBe(32);
    for (const { a, b } of fake.asked) expect(asked.has(pairKey(b, a))).toBe(true);
    const body = fake.bodies('/v1/chat/completions')[0];
    expect(body).toMatchObject({ model: 'judge-m', max_tokens: 1, temperature: 0, logprobs: true, top_logprobs: 20 });
    expect(result.report.prompt_tokens).toBeGreaterThan(0);
    expect(result.report.completion_tokens).toBe(32);
    expect(result.report.error).toBeNull();

    const selection = select('judge', pool, { judge: result.scores });
    expect(selection.chosen).toBe('c5');
    expect(selection.degraded_to).toBeNull();
  });

  it('cancels a position bias by averaging both orders', async () => {
    // The judge adds 4 digits to whichever patch it sees first: asked once, with the plain patch
    // first (it is first in the current order: same value, smaller id), it prefers the plain one.
    const { judge } = await setUp({ bias: 4 });
    const plainFirst = await judge.compare({ issue: 'i', a: variant(1), b: variant(2, true) });
    expect(plainFirst.preference).toBeGreaterThan(0.5);

    const pool = [candidate('a-plain', variant(1), 0.5), candidate('b-marked', variant(2, true), 0.5)];
    const result = await judgePass(judge, { strategy: 'hybrid', candidates: pool, issue: 'i', k: 2 });
    expect(result.scores!.byId.get('b-marked')!.wins).toBeGreaterThan(0.5);
    expect(select('hybrid', pool, { judge: result.scores }).chosen).toBe('b-marked');

    // Two equally good patches under the same bias: 0.5 each, still tied.
    const even = [candidate('p', variant(3), 0.5), candidate('q', variant(4), 0.5)];
    const evenResult = await judgePass(judge, { strategy: 'hybrid', candidates: even, issue: 'i', k: 2 });
    expect(evenResult.scores!.byId.get('p')!.wins).toBeCloseTo(0.5, 9);
    expect(evenResult.report.tied_after).toBe(2);
  });

  it('reports the tie rate before and after, asking only about the ties under hybrid', async () => {
    const { fake, judge } = await setUp();
    const pool = [
      candidate('t1', variant(1), 0.6, 'resolved'),
      candidate('t2', variant(2, true), 0.6, 'resolved'),
      candidate('t3', variant(3), 0.6, 'resolved'),
      candidate('t4', variant(4), 0.6, 'resolved'),
      candidate('solo', variant(5), 0.9, 'unresolved'),
      candidate('top', variant(6), 0.8, 'resolved'),
    ];
    const result = await judgePass(judge, { strategy: 'hybrid', candidates: pool, issue: 'i', k: 2 });
    // Only the four tied candidates meet: 6 pairs (every pair of 4), 12 calls.
    expect(result.report.pairs).toBe(6);
    expect(fake.asked).toHaveLength(12);
    expect(result.report).toMatchObject({ usable: 6, tied_before: 4, tied_after: 3, tie_rate_before: 4 / 6, tie_rate_after: 3 / 6 });
    const selection = select('hybrid', pool, { judge: result.scores });
    expect(selection.ranking.map((entry) => entry.trajectory_id)).toEqual(['top', 't2', 't1', 't3', 't4', 'solo']);
  });

  it('asks nothing when nothing is tied', async () => {
    const { fake, judge } = await setUp();
    const pool = [candidate('a', variant(1), 0.6), candidate('b', variant(2), 0.7)];
    const result = await judgePass(judge, { strategy: 'hybrid', candidates: pool, issue: 'i', k: 2 });
    expect(fake.requests).toHaveLength(0);
    expect(result.scores).toBeUndefined();
    expect(result.report).toMatchObject({ comparisons: 0, tied_before: 0, tied_after: 0, error: null });
  });

  it('sends the API key as a bearer token and never puts it in the report', async () => {
    const { fake, judge } = await setUp({ apiKey: 'sk-judge-secret' });
    const pool = [candidate('a', variant(1), 0.5), candidate('b', variant(2, true), 0.5)];
    const result = await judgePass(judge, { strategy: 'judge', candidates: pool, issue: 'i', k: 1 });
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer sk-judge-secret');
    expect(JSON.stringify(result.report)).not.toContain('sk-judge-secret');
    expect(result.report.error).toBeNull();
  });
});

describe('judgePass when the judge fails', () => {
  const pool = [candidate('a', variant(1), 0.9), candidate('b', variant(2, true), 0.5), candidate('c', variant(3), 0.4)];

  it('a server error: no verdicts, selection goes on as value and says why', async () => {
    const { fake, judge } = await setUp();
    fake.fail(500, 100);
    const result = await judgePass(judge, { strategy: 'judge', candidates: pool, issue: 'i', k: 2 });
    expect(result.scores).toBeUndefined();
    expect(result.report.error?.code).toBe('WNW_ERR_JUDGE_UPSTREAM');
    expect(result.report.tied_after).toBe(result.report.tied_before);
    const selection = select('judge', pool, { judgeUnavailable: result.unavailable });
    expect(selection.chosen).toBe('a');
    expect(selection.degraded_to).toBe('value');
    expect(selection.reason).toMatch(/^The judge failed \(WNW_ERR_JUDGE_UPSTREAM: .*\), so judge selection fell back to value/);
  });

  it('a timeout: WNW_ERR_JUDGE_TIMEOUT, nothing thrown', async () => {
    const { fake, judge } = await setUp({ timeout_s: 0.3 });
    fake.hang(100);
    const result = await judgePass(judge, { strategy: 'judge', candidates: pool, issue: 'i', k: 2 });
    expect(result.report.error?.code).toBe('WNW_ERR_JUDGE_TIMEOUT');
    expect(result.scores).toBeUndefined();
  });

  it('an answer without score digits, or one over the size cap: WNW_ERR_JUDGE_RESPONSE', async () => {
    const { fake, judge } = await setUp();
    fake.noDigits = true;
    const talking = await judgePass(judge, { strategy: 'judge', candidates: pool, issue: 'i', k: 2 });
    expect(talking.report.error).toMatchObject({ code: 'WNW_ERR_JUDGE_RESPONSE', message: expect.stringMatching(/no score digit/) });
    fake.noDigits = false;
    fake.padBytes = MAX_ANSWER_BYTES + 10;
    const huge = await judgePass(judge, { strategy: 'judge', candidates: pool, issue: 'i', k: 2 });
    expect(huge.report.error).toMatchObject({ code: 'WNW_ERR_JUDGE_RESPONSE', message: expect.stringMatching(/larger than/) });
  });

  it('a 503 once is retried and the pass succeeds', async () => {
    const { fake, judge } = await setUp();
    fake.fail(503, 1);
    const result = await judgePass(judge, { strategy: 'judge', candidates: pool, issue: 'i', k: 2, concurrency: 1 });
    expect(result.report.error).toBeNull();
    expect(result.report.comparisons).toBe(6);
  });

  it("the caller's cancellation is thrown, not swallowed", async () => {
    const { fake, judge } = await setUp();
    fake.hang(100);
    const controller = new AbortController();
    const pass = judgePass(judge, { strategy: 'judge', candidates: pool, issue: 'i', k: 2, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('job cancelled')), 50);
    await expect(pass).rejects.toThrow('job cancelled');
  });
});
