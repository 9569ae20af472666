/** What the proxy sends upstream: the policy's model, no streaming, and per-rollout sampling only where the protocol takes it. */
import { describe, expect, it } from 'vitest';
import { toolNamesOf, upstreamBody, usageOf } from '../../../src/rollout/proxy/protocols.js';

describe('upstream body', () => {
  const sampling = { seed: 3, temperature: 0.4 };

  it('chat completions: seed and temperature set, stream and stream_options dropped, model replaced', () => {
    expect(
      upstreamBody(
        'openai-chat',
        { model: 'harness-name', stream: true, stream_options: { include_usage: true }, messages: [] },
        'policy-model',
        sampling,
      ),
    ).toEqual({
      model: 'policy-model',
      messages: [],
      seed: 3,
      temperature: 0.4,
    });
  });

  it('Responses: temperature only without reasoning (reasoning models refuse one), never a seed', () => {
    expect(upstreamBody('openai-responses', { model: 'x', input: 'hi' }, 'm', sampling)).toEqual({
      model: 'm',
      input: 'hi',
      temperature: 0.4,
    });
    expect(upstreamBody('openai-responses', { model: 'x', input: 'hi', reasoning: { effort: 'low' } }, 'm', sampling)).toEqual({
      model: 'm',
      input: 'hi',
      reasoning: { effort: 'low' },
    });
  });

  it('Anthropic: temperature unless extended thinking is on', () => {
    expect(upstreamBody('anthropic-messages', { model: 'x', messages: [] }, 'm', sampling)).toEqual({
      model: 'm',
      messages: [],
      temperature: 0.4,
    });
    expect(
      upstreamBody('anthropic-messages', { model: 'x', messages: [], thinking: { type: 'enabled', budget_tokens: 1024 } }, 'm', sampling),
    ).not.toHaveProperty('temperature');
  });

  it('reads tool names and usage in each protocol', () => {
    expect(
      toolNamesOf({
        tools: [
          { type: 'function', function: { name: 'bash' } },
          { name: 'Bash' },
          { type: 'function', name: 'exec_command' },
          { type: 'web_search' },
        ],
      }),
    ).toEqual(['bash', 'Bash', 'exec_command']);
    expect(usageOf('anthropic-messages', { usage: { input_tokens: 10, cache_read_input_tokens: 90, output_tokens: 5 } })).toEqual({
      prompt_tokens: 100,
      completion_tokens: 5,
    });
    expect(usageOf('openai-chat', {})).toEqual({ prompt_tokens: 0, completion_tokens: 0 });
  });
});
