/**
 * Recorded requests and answers of each protocol as winnower's chat messages: Anthropic blocks
 * and Responses items map to system / user / assistant / tool messages with tool calls, so the
 * value model reads a harness's trajectory as it reads the built-in agent's.
 */
import { describe, expect, it } from 'vitest';
import { requestMessages, responseMessages } from '../../../src/rollout/proxy/to-chat-messages.js';

describe('to chat messages', () => {
  it('Anthropic: system, tool_use with parsed input as arguments, tool_result as tool messages, thinking as reasoning', () => {
    const request = {
      system: [
        { type: 'text', text: 'You are Claude Code.' },
        { type: 'text', text: 'Be brief.' },
      ],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Fix the bug.' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'look first', signature: 's' },
            { type: 'text', text: 'Looking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'a.py' }], is_error: false },
            { type: 'text', text: 'go on' },
          ],
        },
      ],
    };
    expect(requestMessages('anthropic-messages', request)).toEqual([
      { role: 'system', content: 'You are Claude Code.\nBe brief.' },
      { role: 'user', content: 'Fix the bug.' },
      {
        role: 'assistant',
        content: 'Looking.',
        reasoning: 'look first',
        tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } }],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'a.py' },
      { role: 'user', content: 'go on' },
    ]);
    expect(responseMessages('anthropic-messages', { content: [{ type: 'text', text: 'Done.' }] })).toEqual([
      { role: 'assistant', content: 'Done.' },
    ]);
  });

  it('Responses: instructions, messages, function and custom tool calls with their outputs, reasoning summaries', () => {
    const request = {
      instructions: 'You are Codex.',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'sandbox: none' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Fix it.' }] },
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'read the file' }] },
        { type: 'function_call', call_id: 'c1', name: 'shell', arguments: '{"command":["cat","a.py"]}' },
        { type: 'function_call_output', call_id: 'c1', output: 'print(1)' },
        { type: 'custom_tool_call', call_id: 'c2', name: 'apply_patch', input: '*** Begin Patch' },
        { type: 'custom_tool_call_output', call_id: 'c2', output: 'Done!' },
      ],
    };
    expect(requestMessages('openai-responses', request)).toEqual([
      { role: 'system', content: 'You are Codex.' },
      { role: 'system', content: 'sandbox: none' },
      { role: 'user', content: 'Fix it.' },
      {
        role: 'assistant',
        content: '',
        reasoning: 'read the file',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'shell', arguments: '{"command":["cat","a.py"]}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'print(1)' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'c2', type: 'function', function: { name: 'apply_patch', arguments: '*** Begin Patch' } }],
      },
      { role: 'tool', tool_call_id: 'c2', content: 'Done!' },
    ]);
    const answer = {
      output: [
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Fixed.' }] },
        { type: 'function_call', call_id: 'c3', name: 'shell', arguments: '{}' },
      ],
    };
    expect(responseMessages('openai-responses', answer)).toEqual([
      { role: 'assistant', content: 'Fixed.', tool_calls: [{ id: 'c3', type: 'function', function: { name: 'shell', arguments: '{}' } }] },
    ]);
  });

  it('chat completions: developer as system, content parts joined, tool calls kept', () => {
    const request = {
      messages: [
        { role: 'developer', content: 'rules' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'image_url', image_url: {} },
          ],
        },
      ],
    };
    expect(requestMessages('openai-chat', request)).toEqual([
      { role: 'system', content: 'rules' },
      { role: 'user', content: 'a\n[image_url]' },
    ]);
  });
});
