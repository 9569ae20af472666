/**
 * The recording proxy on its unix socket, spoken to as a harness would (undici over the socket),
 * forwarding to the fake policy server in the same protocol: only the rollout token gets in;
 * streamed answers carry exactly the upstream's content in each protocol's SSE framing; side
 * calls (no main tools, token counting) are answered without reaching the upstream; every main
 * exchange is recorded with its usage.
 */
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingProxy, type RecordingProxy } from '../../../src/rollout/proxy/recording-proxy.js';
import type { HarnessProtocol } from '../../../src/rollout/proxy/protocols.js';
import { createUpstream } from '../../../src/rollout/proxy/upstream.js';
import { startFakeHarnessPolicy, type FakeHarnessPolicy } from '../../fakes/fake-harness-policy.js';

type Json = Record<string, any>;

let fake: FakeHarnessPolicy;
const open: Array<{ proxy: RecordingProxy; client: Client }> = [];

beforeAll(async () => {
  fake = await startFakeHarnessPolicy({ m: { tool: 'bash', commands: ['ls -la', 'cat README'], final: 'All done.' } });
});
afterAll(async () => {
  for (const { proxy, client } of open) {
    await client.close();
    await proxy.close();
  }
  await fake.close();
});

async function proxyFor(protocol: HarnessProtocol, mainTools = ['bash']) {
  const policy =
    protocol === 'anthropic-messages'
      ? { kind: 'anthropic' as const, url: fake.url, model: 'm', api_key: 'sk-up', timeout_s: 10 }
      : {
          kind: 'openai' as const,
          url: fake.url,
          model: 'm',
          api_key: 'sk-up',
          temperature: 0.7,
          top_p: 1,
          max_tokens: 64,
          mode: 'tools' as const,
          timeout_s: 10,
        };
  const proxy = await startRecordingProxy({
    protocol,
    upstream: createUpstream(protocol, policy, { sampling: { seed: 1 }, recordingIndex: 0 }),
    mainTools,
    budget: { maxCalls: 10, tokenLimit: 1e6 },
  });
  const client = new Client('http://localhost', { socketPath: `${proxy.socketDir}/${proxy.socketName}` });
  open.push({ proxy, client });
  const post = async (path: string, body: Json, headers: Record<string, string> = { authorization: `Bearer ${proxy.token}` }) => {
    const response = await client.request({
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.statusCode, type: String(response.headers['content-type']), text: await response.body.text() };
  };
  return { proxy, post };
}

/** The `data:` payloads of an SSE body, with their event names. */
const events = (text: string) =>
  text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => ({ event: /^event: (.*)$/m.exec(block)?.[1], data: /^data: (.*)$/m.exec(block)![1]! }));

const chatTools = [{ type: 'function', function: { name: 'bash', parameters: {} } }];

describe('recording proxy', () => {
  it('accepts only the rollout token: not the upstream key, not nothing', async () => {
    const { proxy, post } = await proxyFor('openai-chat');
    const body = { model: 'x', messages: [{ role: 'user', content: 'hi' }], tools: chatTools };
    expect((await post('/v1/chat/completions', body, {})).status).toBe(401);
    expect((await post('/v1/chat/completions', body, { authorization: 'Bearer sk-up' })).status).toBe(401);
    expect((await post('/v1/chat/completions', body, { 'x-api-key': proxy.token })).status).toBe(200);
    expect((await post('/v1/responses', body)).status).toBe(404);
  });

  it('chat completions: streams the upstream answer as chunks, usage last when asked, and records it', async () => {
    const { proxy, post } = await proxyFor('openai-chat');
    const before = fake.requests.length;
    const answer = await post('/v1/chat/completions', {
      model: 'x',
      messages: [{ role: 'user', content: 'hi' }],
      tools: chatTools,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(answer.type).toBe('text/event-stream');
    const chunks = events(answer.text);
    expect(chunks.at(-1)!.data).toBe('[DONE]');
    const parsed = chunks.slice(0, -1).map((chunk) => JSON.parse(chunk.data));
    const calls = parsed.flatMap((chunk) => chunk.choices.flatMap((choice: Json) => choice.delta.tool_calls ?? []));
    expect(calls).toEqual([{ index: 0, id: 'call_0', type: 'function', function: { name: 'bash', arguments: '{"command":"ls -la"}' } }]);
    expect(parsed.at(-1).usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 20 });
    // Upstream: whole answers, the policy's model, the rollout's seed.
    expect(fake.requests[before]!.body).toMatchObject({ model: 'm', seed: 1, temperature: 0.7 });
    expect(fake.requests[before]!.body.stream).toBeUndefined();
    expect(proxy.exchanges).toMatchObject([
      { kind: 'main', status: 200, stream: true, usage: { prompt_tokens: 100, completion_tokens: 20 } },
    ]);
  });

  it('anthropic messages: message_start … message_stop carry the same blocks; count_tokens and tool-less calls stay local', async () => {
    const { proxy, post } = await proxyFor('anthropic-messages', ['bash']);
    const before = fake.requests.length;
    const request = {
      model: 'x',
      max_tokens: 100,
      system: 'sys',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ name: 'bash', input_schema: {} }],
      stream: true,
    };
    const answer = await post('/v1/messages?beta=true', request, {
      'x-api-key': proxy.token,
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'context-management-2025-06-27',
    });
    const frames = events(answer.text).map((frame) => ({ event: frame.event, data: JSON.parse(frame.data) }));
    expect(frames.map((frame) => frame.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(frames[2]!.data.delta).toEqual({ type: 'text_delta', text: 'Step 0.' });
    expect(frames[4]!.data.content_block).toMatchObject({ type: 'tool_use', id: 'toolu_0', name: 'bash', input: {} });
    expect(JSON.parse(frames[5]!.data.delta.partial_json)).toEqual({ command: 'ls -la' });
    expect(frames[7]!.data).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 20 } });
    // The policy's key, and the harness's version and betas (a body using a beta feature needs its header).
    expect(fake.requests[before]!.headers).toMatchObject({
      'x-api-key': 'sk-up',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'context-management-2025-06-27',
    });

    const counted = await post('/v1/messages/count_tokens', { model: 'x', messages: [{ role: 'user', content: 'hi' }] });
    expect(JSON.parse(counted.text).input_tokens).toBeGreaterThan(0);
    const side = await post('/v1/messages', { model: 'x', max_tokens: 1, messages: [{ role: 'user', content: 'quota' }] });
    expect(JSON.parse(side.text)).toMatchObject({ type: 'message', content: [], stop_reason: 'end_turn' });
    expect(fake.requests.length - before).toBe(1);
    expect(proxy.exchanges.map((exchange) => exchange.kind)).toEqual(['main', 'side', 'side']);
    expect(proxy.usage.calls).toBe(1);
  });

  it('responses: response.created … response.completed, with the function call item whole', async () => {
    const { post } = await proxyFor('openai-responses');
    const answer = await post('/v1/responses', {
      model: 'x',
      input: 'hi',
      tools: [{ type: 'function', name: 'bash', parameters: {} }],
      stream: true,
    });
    const frames = events(answer.text).map((frame) => JSON.parse(frame.data));
    expect(frames.map((frame) => frame.type)).toEqual([
      'response.created',
      'response.output_item.added',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(frames[3].item).toMatchObject({ type: 'function_call', call_id: 'call_0', name: 'bash', arguments: '{"command":"ls -la"}' });
    expect(frames[4].response).toMatchObject({ status: 'completed', usage: { input_tokens: 100, output_tokens: 20 } });
    expect(frames.map((frame) => frame.sequence_number)).toEqual([0, 1, 2, 3, 4]);
  });
});
