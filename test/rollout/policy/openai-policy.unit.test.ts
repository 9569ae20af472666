/** The OpenAI-compatible policy client against a real fake chat server on port 0. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAIPolicy } from '../../../src/rollout/policy/openai-policy.js';
import { parseActions } from '../../../src/rollout/agent/parse-actions.js';
import { BASH_TOOL } from '../../../src/rollout/policy/types.js';
import { WinnowerError } from '../../../src/errors.js';
import type { ChatMessage } from '../../../src/types/trajectory.js';
import { startFakePolicy, type FakePolicyServer } from '../../fakes/fake-policy.js';

const conversation: ChatMessage[] = [
  { role: 'system', content: 'You are an agent.', meta: { template: 'system_template' } },
  { role: 'user', content: 'Fix the bug.' },
  {
    role: 'assistant',
    content: 'Look first.',
    reasoning: 'I should list the files.',
    tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } }],
    meta: { usage: { prompt_tokens: 1, completion_tokens: 2 } },
  },
  { role: 'tool', tool_call_id: 'call_a', name: 'bash', content: '<returncode>0</returncode>', meta: { exit_code: 0, observation: true } },
];

/** Runs `promise` and returns the WinnowerError it rejects with (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<WinnowerError> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome, 'expected a rejection').toBeDefined();
  expect(WinnowerError.isInstance(outcome)).toBe(true);
  return outcome as WinnowerError;
}

describe('createOpenAIPolicy', () => {
  let server: FakePolicyServer;
  let textServer: FakePolicyServer;

  beforeAll(async () => {
    const scripts = {
      plain: [{ commands: ['ls -la', 'cat a.py'] }],
      thinking: [
        {
          commands: [],
          messages: [
            {
              content: null,
              reasoning_content: 'The parser takes one digit; widen it.',
              tool_calls: [{ id: 'call_r', function: { name: 'bash', arguments: '{"command":"grep -n PART durations.py"}' } }],
            },
          ],
          usage: [{ prompt_tokens: 1234, completion_tokens: 56 }],
        },
      ],
      'no-usage': [{ commands: ['true'], usage: [null] }],
      'bad-shape': [{ commands: [], messages: [{ content: 42 }] }],
    };
    server = await startFakePolicy({ scripts });
    textServer = await startFakePolicy({ scripts, mode: 'text' });
  });

  afterAll(async () => {
    await server?.close();
    await textServer?.close();
  });

  beforeEach(() => {
    server.requests.length = 0;
    server.headers.length = 0;
    server.faults.length = 0;
  });

  it('sends a tools-mode request in wire format and maps the answer', async () => {
    const policy = createOpenAIPolicy({ url: server.url, model: 'plain', apiKey: 'sk-test', temperature: 0.3, topP: 0.9, maxTokens: 512 });
    expect(policy.name).toBe('openai:plain');
    expect(policy.mode).toBe('tools');
    const turn = await policy.next({ messages: conversation, seed: 0 });

    expect(server.requests).toHaveLength(1);
    const body = server.requests[0]!;
    expect(body).toEqual({
      model: 'plain',
      messages: [
        { role: 'system', content: 'You are an agent.' },
        { role: 'user', content: 'Fix the bug.' },
        {
          role: 'assistant',
          content: 'Look first.',
          tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } }],
        },
        { role: 'tool', content: '<returncode>0</returncode>', tool_call_id: 'call_a', name: 'bash' },
      ],
      temperature: 0.3,
      top_p: 0.9,
      max_tokens: 512,
      seed: 0,
      tools: [BASH_TOOL],
      tool_choice: 'auto',
    });
    expect(JSON.stringify(body)).not.toContain('meta');
    expect(JSON.stringify(body)).not.toContain('reasoning');
    expect(server.headers[0]!.authorization).toBe('Bearer sk-test');
    expect(server.headers[0]!['content-type']).toBe('application/json');

    // The fake answers turn 1 (one assistant message so far) with the second command.
    expect(turn.finishReason).toBe('tool_calls');
    expect(turn.message).toEqual({
      role: 'assistant',
      content: 'Step 1.',
      tool_calls: [{ id: 'call_0_1', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: 'cat a.py' }) } }],
    });
    expect(turn.usage).toEqual({ prompt_tokens: 150, completion_tokens: 20 });
    expect(parseActions(turn.message, 'tools')).toEqual({ ok: true, actions: [{ command: 'cat a.py', toolCallId: 'call_0_1' }] });
  });

  it('uses the documented defaults and leaves out seed when none is given', async () => {
    const policy = createOpenAIPolicy({ url: `${server.url}/`, model: 'plain', name: 'my-policy' });
    expect(policy.name).toBe('my-policy');
    await policy.next({ messages: conversation.slice(0, 2) });
    const body = server.requests[0]!;
    expect(body).toMatchObject({ temperature: 0.7, top_p: 1, max_tokens: 4096 });
    expect('seed' in body).toBe(false);
    expect(server.headers[0]!.authorization).toBeUndefined();
  });

  it('text mode sends no tools and returns the fenced block as content', async () => {
    const policy = createOpenAIPolicy({ url: textServer.url, model: 'plain', mode: 'text' });
    expect(policy.mode).toBe('text');
    const turn = await policy.next({ messages: conversation.slice(0, 2), seed: 0 });
    const body = textServer.requests.at(-1)!;
    expect('tools' in body).toBe(false);
    expect('tool_choice' in body).toBe(false);
    expect(turn.message.tool_calls).toBeUndefined();
    expect(turn.message.content).toBe('Step 0.\n\n```bash\nls -la\n```');
    expect(turn.finishReason).toBe('stop');
    expect(parseActions(turn.message, 'text')).toEqual({ ok: true, actions: [{ command: 'ls -la' }] });
  });

  it('keeps reasoning_content as `reasoning`, null content as "", and records usage', async () => {
    const policy = createOpenAIPolicy({ url: server.url, model: 'thinking' });
    const turn = await policy.next({ messages: conversation.slice(0, 2), seed: 0 });
    expect(turn.message).toEqual({
      role: 'assistant',
      content: '',
      reasoning: 'The parser takes one digit; widen it.',
      tool_calls: [{ id: 'call_r', type: 'function', function: { name: 'bash', arguments: '{"command":"grep -n PART durations.py"}' } }],
    });
    expect(turn.usage).toEqual({ prompt_tokens: 1234, completion_tokens: 56 });
  });

  it('reads a missing usage as zero tokens', async () => {
    const policy = createOpenAIPolicy({ url: server.url, model: 'no-usage' });
    const turn = await policy.next({ messages: conversation.slice(0, 2), seed: 0 });
    expect(turn.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0 });
  });

  it.each([429, 503, 500])('retries %i and then succeeds', async (status) => {
    server.fail(status, 2);
    const policy = createOpenAIPolicy({ url: server.url, model: 'plain', retries: 3, timeoutMs: 20_000 });
    const turn = await policy.next({ messages: conversation.slice(0, 2), seed: 0 });
    expect(turn.message.tool_calls?.[0]?.function.arguments).toBe(JSON.stringify({ command: 'ls -la' }));
    expect(server.requests).toHaveLength(3);
    // The same request each time.
    expect(server.requests[1]).toEqual(server.requests[0]);
    expect(server.requests[2]).toEqual(server.requests[0]);
  });

  it('honours Retry-After on a 429', async () => {
    server.fail(429, 1, { retryAfter: '1' });
    const policy = createOpenAIPolicy({ url: server.url, model: 'plain', retries: 2, timeoutMs: 20_000 });
    const started = Date.now();
    await policy.next({ messages: conversation.slice(0, 2), seed: 0 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(server.requests).toHaveLength(2);
  });

  it('gives up after the retries with WNW_ERR_POLICY_UPSTREAM (retryable, status kept)', async () => {
    server.fail(503, 10);
    const policy = createOpenAIPolicy({ url: server.url, model: 'plain', retries: 2, timeoutMs: 20_000 });
    const error = await rejection(policy.next({ messages: conversation.slice(0, 2), seed: 0 }));
    expect(error.code).toBe('WNW_ERR_POLICY_UPSTREAM');
    expect(error.retryable).toBe(true);
    expect(error.details.status).toBe(503);
    expect(server.requests).toHaveLength(3);
  });

  it('does not retry a 400: WNW_ERR_POLICY_UPSTREAM with the body excerpt', async () => {
    server.fail(400, 1, { body: '{"error":{"message":"context length exceeded"}}' });
    const policy = createOpenAIPolicy({ url: server.url, model: 'plain', retries: 4 });
    const error = await rejection(policy.next({ messages: conversation.slice(0, 2), seed: 0 }));
    expect(error.code).toBe('WNW_ERR_POLICY_UPSTREAM');
    expect(error.status).toBe(502);
    expect(error.retryable).toBe(false);
    expect(error.details.status).toBe(400);
    expect(error.details.url).toBe(`${server.url.replace('/v1', '')}/v1/chat/completions`);
    expect(error.message).toContain('context length exceeded');
    expect(server.requests).toHaveLength(1);
  });

  it('turns a body that is not JSON into WNW_ERR_POLICY_RESPONSE, without retrying', async () => {
    server.malformed(1);
    const policy = createOpenAIPolicy({ url: server.url, model: 'plain', retries: 4 });
    const error = await rejection(policy.next({ messages: conversation.slice(0, 2), seed: 0 }));
    expect(error.code).toBe('WNW_ERR_POLICY_RESPONSE');
    expect(error.message).toContain('not JSON');
    expect(server.requests).toHaveLength(1);
  });

  it('turns JSON of the wrong shape into WNW_ERR_POLICY_RESPONSE naming the field', async () => {
    server.malformed(1, JSON.stringify({ id: 'x', choices: [] }));
    const policy = createOpenAIPolicy({ url: server.url, model: 'plain' });
    const empty = await rejection(policy.next({ messages: conversation.slice(0, 2), seed: 0 }));
    expect(empty.code).toBe('WNW_ERR_POLICY_RESPONSE');
    expect(empty.message).toContain('choices');

    const typed = await rejection(
      createOpenAIPolicy({ url: server.url, model: 'bad-shape' }).next({ messages: conversation.slice(0, 2), seed: 0 }),
    );
    expect(typed.code).toBe('WNW_ERR_POLICY_RESPONSE');
    expect(typed.message).toContain('choices[0].message.content');
  });

  it('ends a call that gets no answer at the deadline with WNW_ERR_POLICY_TIMEOUT', async () => {
    server.hang(5);
    const policy = createOpenAIPolicy({ url: server.url, model: 'plain', timeoutMs: 400, retries: 2 });
    const started = Date.now();
    const error = await rejection(policy.next({ messages: conversation.slice(0, 2), seed: 0 }));
    const elapsed = Date.now() - started;
    expect(error.code).toBe('WNW_ERR_POLICY_TIMEOUT');
    expect(error.status).toBe(504);
    expect(elapsed).toBeGreaterThanOrEqual(380);
    expect(elapsed).toBeLessThan(2_000);
    expect(server.requests).toHaveLength(1);
  });

  it('the deadline covers the retries too', async () => {
    server.fail(503, 50);
    const policy = createOpenAIPolicy({ url: server.url, model: 'plain', timeoutMs: 600, retries: 50 });
    const started = Date.now();
    const error = await rejection(policy.next({ messages: conversation.slice(0, 2), seed: 0 }));
    expect(['WNW_ERR_POLICY_TIMEOUT', 'WNW_ERR_POLICY_UPSTREAM']).toContain(error.code);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('cancels promptly through the AbortSignal: WNW_ERR_OP_ABORTED', async () => {
    server.hang(1);
    const policy = createOpenAIPolicy({ url: server.url, model: 'plain', timeoutMs: 60_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user cancelled')), 150);
    const started = Date.now();
    const error = await rejection(policy.next({ messages: conversation.slice(0, 2), seed: 0, signal: controller.signal }));
    expect(error.code).toBe('WNW_ERR_OP_ABORTED');
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('cancels during the backoff between retries', async () => {
    server.fail(503, 1, { retryAfter: '20' });
    const policy = createOpenAIPolicy({ url: server.url, model: 'plain', timeoutMs: 60_000, retries: 3 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    const error = await rejection(policy.next({ messages: conversation.slice(0, 2), seed: 0, signal: controller.signal }));
    expect(error.code).toBe('WNW_ERR_OP_ABORTED');
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(server.requests).toHaveLength(1);
  });

  it('refuses to start when the signal has already fired', async () => {
    const policy = createOpenAIPolicy({ url: server.url, model: 'plain' });
    const error = await rejection(policy.next({ messages: conversation.slice(0, 2), seed: 0, signal: AbortSignal.abort() }));
    expect(error.code).toBe('WNW_ERR_OP_ABORTED');
  });

  it('names a refused connection WNW_ERR_POLICY_UPSTREAM', async () => {
    const dead = await startFakePolicy({ scripts: {} });
    const url = dead.url;
    await dead.close();
    const policy = createOpenAIPolicy({ url, model: 'plain', retries: 1, timeoutMs: 5_000 });
    const error = await rejection(policy.next({ messages: conversation.slice(0, 2), seed: 0 }));
    expect(error.code).toBe('WNW_ERR_POLICY_UPSTREAM');
    expect(error.details.errorCode).toBe('ECONNREFUSED');
  });
});
