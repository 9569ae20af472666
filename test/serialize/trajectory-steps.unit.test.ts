import { describe, expect, it } from 'vitest';
import { headTail } from '../../src/serialize/head-tail.js';
import { toolCallParameters, toSteps } from '../../src/serialize/trajectory-steps.js';
import { ChatMessage } from '../../src/types/index.js';

const options = {
  includeReasoning: true,
  splitFencedAction: true,
  formatToolCall: (call: { function: { name: string } }) => `CALL ${call.function.name}`,
};

describe('toSteps', () => {
  it('pairs assistant turns with the tool and observation messages that follow', () => {
    const messages = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'task' },
      { role: 'tool', content: 'orphan output' },
      {
        role: 'assistant',
        content: 'plan',
        tool_calls: [
          { id: '1', function: { name: 'bash', arguments: '{}' } },
          { id: '2', function: { name: 'edit', arguments: '{}' } },
        ],
      },
      { role: 'tool', content: 'out 1\n' },
      { role: 'tool', content: 'out 2' },
      { role: 'user', content: 'obs', meta: { observation: true } },
      { role: 'assistant', content: '', reasoning: 'why' },
    ].map((message) => ChatMessage.parse(message));
    expect(toSteps(messages, options)).toEqual([
      { index: 1, thought: 'plan', action: 'CALL bash\nCALL edit', observations: ['out 1', 'out 2', 'obs'] },
      { index: 2, thought: 'why', action: '', observations: [] },
    ]);
    expect(toSteps(messages, { ...options, includeReasoning: false })[1]!.thought).toBe('');
  });

  it('takes the last fenced block as the action when there are no tool calls', () => {
    const [step] = toSteps(
      [ChatMessage.parse({ role: 'assistant', content: 'first\n```py\nx\n```\nthen\n```bash\nls -la\n```' })],
      options,
    );
    expect(step).toMatchObject({ thought: 'first\n```py\nx\n```\nthen', action: '```bash\nls -la\n```' });
    const [kept] = toSteps([ChatMessage.parse({ role: 'assistant', content: 'a\n```bash\nls\n```' })], {
      ...options,
      splitFencedAction: false,
    });
    expect(kept).toMatchObject({ thought: 'a\n```bash\nls\n```', action: '' });
  });

  it('reads tool call arguments as parameters when they are a JSON object', () => {
    const call = (args: string) => ({ id: 'c', type: 'function' as const, function: { name: 'f', arguments: args } });
    expect(toolCallParameters(call('{"command":"ls","n":2}'))).toEqual([
      ['command', 'ls'],
      ['n', '2'],
    ]);
    expect(toolCallParameters(call('not json'))).toBeUndefined();
    expect(toolCallParameters(call('[1]'))).toBeUndefined();
  });
});

describe('headTail', () => {
  const marker = ({ chars, lines }: { chars: number; lines: number }) => `[${chars} chars, ${lines} lines cut]\n`;

  it('keeps head and tail on line boundaries and accounts for every character', () => {
    const text = Array.from({ length: 100 }, (_, i) => `line ${String(i).padStart(3, '0')}`).join('\n');
    const cut = headTail(text, 100, 50, marker)!;
    expect(cut.startsWith('line 000\n')).toBe(true);
    expect(cut.endsWith('line 099')).toBe(true);
    const [, chars] = /\[(\d+) chars/.exec(cut)!;
    const [head, tail] = cut.split(/\[\d+ chars, \d+ lines cut\]\n/);
    expect(head!.length + Number(chars) + tail!.length).toBe(text.length);
    expect(head!.endsWith('\n')).toBe(true);
  });

  it('puts the marker on its own line and never splits a surrogate pair', () => {
    const text = `${'😀'.repeat(50)}`;
    const cut = headTail(text, 11, 11, marker)!;
    expect(cut).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    expect(cut).toMatch(/\n\[\d+ chars/);
  });

  it('leaves short text alone', () => {
    expect(headTail('short', 10, 10, marker)).toBeUndefined();
    expect(headTail('x'.repeat(25), 10, 10, marker)).toBeUndefined();
  });
});
