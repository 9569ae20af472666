/** Reading commands out of an assistant turn (tools and text modes), and head+tail elision. */
import { describe, expect, it } from 'vitest';
import { elideMiddle, parseActions } from '../../../src/rollout/agent/parse-actions.js';
import type { ChatMessage } from '../../../src/types/trajectory.js';
import { bashCall } from '../scripted-policy.js';

const text = (content: string): ChatMessage => ({ role: 'assistant', content });
const tools = (...calls: NonNullable<ChatMessage['tool_calls']>): ChatMessage => ({ role: 'assistant', content: '', tool_calls: calls });
const call = (name: string, args: string) => ({ id: `id_${name}`, type: 'function' as const, function: { name, arguments: args } });

describe('parseActions, tools mode', () => {
  it('reads one command per bash call, keeping the call id', () => {
    expect(parseActions(tools(bashCall('a', 'ls -la'), bashCall('b', 'cat x | head')), 'tools')).toEqual({
      ok: true,
      actions: [
        { command: 'ls -la', toolCallId: 'a' },
        { command: 'cat x | head', toolCallId: 'b' },
      ],
    });
  });

  it('keeps the command exactly as sent (heredocs, leading spaces)', () => {
    const command = "  python3 - <<'PY'\nprint('x')\nPY\n";
    expect(parseActions(tools(bashCall('a', command)), 'tools')).toEqual({ ok: true, actions: [{ command, toolCallId: 'a' }] });
  });

  it.each([
    ['no tool call', { role: 'assistant', content: '```bash\nls\n```' } as ChatMessage],
    ['no tool call', tools()],
    ['a call to an unknown tool "python"', tools(bashCall('a', 'ls'), call('python', '{"code":"1"}'))],
    ['tool arguments that are not valid JSON', tools(call('bash', '{"command": "ls"'))],
    ['a bash call without a "command" string', tools(call('bash', '{"cmd":"ls"}'))],
    ['a bash call without a "command" string', tools(call('bash', '{"command":"   "}'))],
    ['a bash call without a "command" string', tools(call('bash', '{"command":["ls"]}'))],
    ['a bash call without a "command" string', tools(call('bash', ''))],
  ])('reports %s', (problem, message) => {
    expect(parseActions(message, 'tools')).toEqual({ ok: false, problem });
  });
});

describe('parseActions, text mode', () => {
  it.each([
    ['```bash\nls -la\n```', 'ls -la'],
    ['Let me look.\n\n```sh\ngrep -rn foo .\n```\nThen decide.', 'grep -rn foo .'],
    ['```shell\necho hi\n```', 'echo hi'],
    ['```\nmake test\n```', 'make test'],
    ['```bash  \ncd src && \\\n  ls\n```', 'cd src && \\\n  ls'],
    ['```bash\nsed -n 1,5p a.py```', 'sed -n 1,5p a.py'],
  ])('reads the one shell block of %j', (content, command) => {
    expect(parseActions(text(content), 'text')).toEqual({ ok: true, actions: [{ command }] });
  });

  it('ignores blocks in other languages, even right before the bash block', () => {
    expect(parseActions(text('Here is the code:\n```python\nprint(1)\n```\n```bash\npython3 a.py\n```'), 'text')).toEqual({
      ok: true,
      actions: [{ command: 'python3 a.py' }],
    });
    expect(parseActions(text('```diff\n-a\n+b\n```\nApply:\n```bash\ngit apply x.diff\n```'), 'text')).toEqual({
      ok: true,
      actions: [{ command: 'git apply x.diff' }],
    });
  });

  it('ignores empty blocks', () => {
    expect(parseActions(text('```bash\n```\n\n```bash\nls\n```'), 'text')).toEqual({ ok: true, actions: [{ command: 'ls' }] });
  });

  it.each([
    ['no bash code block', 'I will now look at the file.'],
    ['no bash code block', '```python\nprint(1)\n```'],
    ['no bash code block', 'inline `ls` is not a block'],
    ['2 bash code blocks instead of one', '```bash\nls\n```\nand\n```bash\npwd\n```'],
    ['3 bash code blocks instead of one', '```bash\na\n```\n```sh\nb\n```\n```\nc\n```'],
  ])('reports %s', (problem, content) => {
    expect(parseActions(text(content), 'text')).toEqual({ ok: false, problem });
  });

  it('ignores tool calls in text mode', () => {
    const message: ChatMessage = { role: 'assistant', content: '```bash\nls\n```', tool_calls: [bashCall('a', 'pwd')] };
    expect(parseActions(message, 'text')).toEqual({ ok: true, actions: [{ command: 'ls' }] });
  });
});

describe('elideMiddle', () => {
  it('keeps short text as it is', () => {
    expect(elideMiddle('abcdef', 3, 3)).toBe('abcdef');
    expect(elideMiddle('', 0, 0)).toBe('');
  });

  it('keeps head and tail with a marker counting the cut characters', () => {
    const input = 'H'.repeat(10) + 'M'.repeat(85) + 'T'.repeat(5);
    expect(elideMiddle(input, 10, 5)).toBe(`${'H'.repeat(10)}\n[... 85 characters elided ...]\n${'T'.repeat(5)}`);
  });

  it('cuts one character past the limit', () => {
    expect(elideMiddle('abcdefg', 3, 3)).toBe('abc\n[... 1 characters elided ...]\nefg');
  });

  it('handles a zero head or tail', () => {
    expect(elideMiddle('0123456789', 0, 2)).toBe('\n[... 8 characters elided ...]\n89');
    expect(elideMiddle('0123456789', 2, 0)).toBe('01\n[... 8 characters elided ...]\n');
  });
});
