/**
 * `winnower policy serve`'s chat server (src/rollout/policy/replay-server.ts) as OpenAI clients
 * call it: the recording named by `model` or picked by `seed`, the next turn by the number of
 * assistant turns sent, tool calls or fenced blocks, streaming, and the errors.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { buildReplayServer } from '../../../src/rollout/policy/replay-server.js';
import { demoRecordings } from '../../solve/helpers.js';

const recordings = Object.values(demoRecordings());
const app = buildReplayServer({ recordings });
afterAll(() => app.close());

const ask = (body: Record<string, unknown>) => app.inject({ method: 'POST', url: '/v1/chat/completions', payload: body });
const tools = [{ type: 'function', function: { name: 'bash', parameters: { type: 'object' } } }];
const sorted = [...recordings].sort((a, b) => (a.id < b.id ? -1 : 1));

describe('replay policy server', () => {
  it('lists the recordings as models', async () => {
    const models = (await app.inject({ method: 'GET', url: '/v1/models' })).json() as { data: Array<{ id: string }> };
    expect(models.data.map((model) => model.id)).toEqual(['replay', ...sorted.map((r) => r.id)]);
  });

  it('answers seed k with recording k (in id order) and the turn after the assistant turns sent', async () => {
    for (const [seed, recording] of sorted.entries()) {
      const turns = recording.messages.filter((m) => m.role === 'assistant');
      const first = (await ask({ model: 'my-agent', seed, tools, messages: [{ role: 'user', content: 'fix it' }] })).json();
      expect(first.object).toBe('chat.completion');
      expect(first.choices[0].message.tool_calls).toEqual(turns[0]!.tool_calls);
      expect(first.choices[0].finish_reason).toBe('tool_calls');
      const history = [
        { role: 'user', content: 'fix it' },
        { ...turns[0], meta: undefined },
        { role: 'tool', tool_call_id: 'x', content: 'ok' },
      ];
      const second = (await ask({ model: 'my-agent', seed: seed + sorted.length, tools, messages: history })).json();
      expect(second.choices[0].message.tool_calls).toEqual(turns[1]!.tool_calls);
    }
  });

  it('replays the recording the model names, whatever the seed', async () => {
    const named = sorted[2]!;
    const answer = (await ask({ model: named.id, seed: 0, tools, messages: [{ role: 'user', content: 'x' }] })).json();
    expect(answer.choices[0].message.tool_calls).toEqual(named.messages.find((m) => m.role === 'assistant')!.tool_calls);
    expect(answer.model).toBe(named.id);
  });

  it('sends fenced bash blocks when the client offers no tools', async () => {
    const answer = (await ask({ seed: 0, messages: [{ role: 'user', content: 'x' }] })).json();
    const command = JSON.parse(sorted[0]!.messages.find((m) => m.role === 'assistant')!.tool_calls![0]!.function.arguments).command;
    expect(answer.choices[0].message.tool_calls).toBeUndefined();
    expect(answer.choices[0].message.content).toContain(`\`\`\`bash\n${command}\n\`\`\``);
  });

  it('streams one chunk, the finish reason with usage, then [DONE]', async () => {
    const response = await ask({ seed: 1, stream: true, tools, messages: [{ role: 'user', content: 'x' }] });
    expect(response.headers['content-type']).toContain('text/event-stream');
    const events = response.body.trim().split('\n\n');
    expect(events.at(-1)).toBe('data: [DONE]');
    const [head, tail] = events.slice(0, 2).map((event) => JSON.parse(event.slice('data: '.length)));
    expect(head.choices[0].delta.tool_calls[0].function.name).toBe('bash');
    expect(tail.choices[0].finish_reason).toBe('tool_calls');
    expect(tail.usage.total_tokens).toBeGreaterThan(0);
  });

  it('refuses a conversation past the recording, and a body without messages, as OpenAI errors', async () => {
    const turns = sorted[0]!.messages.filter((m) => m.role === 'assistant').length;
    const long = [{ role: 'user', content: 'x' }, ...Array.from({ length: turns }, () => ({ role: 'assistant', content: 'y' }))];
    const past = await ask({ seed: 0, messages: long });
    expect(past.statusCode).toBe(400);
    expect(past.json().error.message).toContain(`asks for turn ${turns + 1}`);
    const empty = await ask({ seed: 0 });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().error.message).toContain('messages');
  });

  it('refuses to start without recordings', () => {
    expect(() => buildReplayServer({ recordings: [] })).toThrow(/no recorded trajectories/);
  });
});
