/**
 * Serialization's output, byte for byte, for every template over the existing fixtures (the
 * importer fixtures, test/serialize/fixtures.ts, the bench's synthetic trajectories and seeded
 * random inputs), each under budgets from far under to over what it needs uncut, counted with two
 * tokenizers and estimated. The expected digests were written by the serializer before it was
 * changed to fit in one encode (issue 31), so any change of text, ids, counts or cut summary fails
 * here. Regenerate only for an intended change of output: WINNOWER_WRITE_GOLDEN=1.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { importTrajectories } from '../../src/formats/index.js';
import { WinnowerError } from '../../src/errors.js';
import { syntheticTrajectory } from '../../src/loadgen/synthetic-trajectory.js';
import { loadChatTemplate } from '../../src/serialize/chat-template.js';
import { serializeTrajectory } from '../../src/serialize/serialize-trajectory.js';
import { loadTokenizer, type Tokenizer } from '../../src/serialize/tokenizer.js';
import { Task, Trajectory, type ChatMessage } from '../../src/types/index.js';
import { prng } from '../../src/util/prng.js';
import { QWEN3_TOKENIZER, QWEN3_TOKENIZER_CONFIG } from '../scoring/http/helpers.js';
import { patchOnly, task as fixtureTask, toolTrajectory } from './fixtures.js';

const GOLDEN = fileURLToPath(new URL('./golden/serialized-outputs.json', import.meta.url));
const IMPORTERS = fileURLToPath(new URL('../fixtures/importers/', import.meta.url));
const TEMPLATES = ['judge-v1', 'patch-v1', 'openhands-critic-v1', 'openhands-critic-tool-calls-v1'] as const;

interface Case {
  name: string;
  task: Task;
  trajectory: Trajectory;
}

const WORDS = ['the', 'error', 'passed', 'def', 'return', 'self', 'import', 'FAILED', 'Traceback', 'assert', 'None', 'diff', 'test'];
const GLUE = [
  '  ',
  '    ',
  '\n',
  '\n\n',
  ' \n',
  '\t',
  '...',
  '[',
  ']',
  '</',
  '>',
  '<|im_end|>',
  '0',
  '12',
  '9999',
  '==',
  '"',
  'é',
  '中文',
  '😀',
];

/** Text of `length` characters, words with runs of what tokenizes differently once cut or joined. */
function randomText(random: () => number, length: number): string {
  const glue = random() * 0.8;
  let text = '';
  while (text.length < length) {
    text +=
      random() < glue
        ? GLUE[Math.floor(random() * GLUE.length)]
        : (random() < 0.5 ? ' ' : '\n') + WORDS[Math.floor(random() * WORDS.length)];
  }
  return text.slice(0, length).replace(/[\ud800-\udbff]$/, '');
}

function randomCase(random: () => number, index: number): Case {
  const size = (max: number) => (random() < 0.15 ? 0 : Math.floor(max * random() ** 2));
  const task = Task.parse({ instance_id: `o__r-${index}`, problem_statement: randomText(random, 1 + size(9_000)) });
  const steps = random() < 0.2 ? 0 : 1 + Math.floor(random() * 8);
  const messages: ChatMessage[] = steps === 0 ? [] : [{ role: 'user', content: 'solve it' }];
  for (let step = 1; step <= steps; step += 1) {
    messages.push({
      role: 'assistant',
      content: randomText(random, size(3_000)),
      tool_calls: [
        {
          id: `c${step}`,
          type: 'function',
          function: { name: 'bash', arguments: JSON.stringify({ command: randomText(random, size(600)) }) },
        },
      ],
    });
    messages.push({ role: 'tool', tool_call_id: `c${step}`, content: randomText(random, size(6_000)) });
  }
  const trajectory = Trajectory.parse({
    id: `t-${index}`,
    instance_id: task.instance_id,
    source: 'golden',
    messages,
    patch: randomText(random, size(8_000)),
  });
  return { name: `random ${index}`, task, trajectory };
}

async function cases(): Promise<Case[]> {
  const all: Case[] = [];
  const imported = await importTrajectories(IMPORTERS, { onInvalid: 'skip', sourceFrom: 'file' });
  for (const trajectory of [...imported.items].sort((a, b) => a.id.localeCompare(b.id))) {
    all.push({
      name: `importer ${trajectory.source}/${trajectory.id}`,
      task: Task.parse({
        instance_id: trajectory.instance_id,
        problem_statement: `Issue of ${trajectory.instance_id}: it breaks when run twice.`,
      }),
      trajectory,
    });
  }
  all.push({ name: 'fixtures: tool 6 steps', task: fixtureTask, trajectory: toolTrajectory('a', 6) });
  all.push({
    name: 'fixtures: tool 12 steps, long outputs',
    task: fixtureTask,
    trajectory: toolTrajectory('b', 12, { thoughtWords: 200, outputLines: 300 }),
  });
  all.push({ name: 'fixtures: patch only', task: fixtureTask, trajectory: patchOnly('c') });
  for (const turns of [3, 9, 20]) {
    const synthetic = syntheticTrajectory(turns);
    all.push({ name: `synthetic ${turns} turns`, task: synthetic.task, trajectory: synthetic.trajectory });
  }
  const random = prng(20_261_202);
  // Eight: the property test (fit-property.test.ts) draws many more; these pin their bytes.
  for (let index = 0; index < 8; index += 1) all.push(randomCase(random, index));
  return all;
}

/** Budgets around what `tokens` needs uncut: far under, just under, at and over it. */
function budgets(tokens: number): number[] {
  // 0.99 takes the same path as any share just under (encode whole, then count the pieces); 0.3 the far-under one.
  const around = [0.3, 0.99, 1, 1.01, 1.3].map((share) => Math.max(64, Math.round(tokens * share)));
  return [...new Set([...around, 4096])].sort((a, b) => a - b);
}

const digest = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);

describe('serialization output', () => {
  let counters: Array<[string, Tokenizer | undefined]>;
  let chatTemplate: string;
  beforeAll(async () => {
    counters = [
      ['tiny-value', await loadTokenizer(fileURLToPath(new URL('../../models/tiny-value/', import.meta.url)))],
      ['qwen3', await loadTokenizer(QWEN3_TOKENIZER)],
      ['estimated', undefined],
    ];
    chatTemplate = loadChatTemplate(QWEN3_TOKENIZER_CONFIG);
  });

  it('is unchanged, byte for byte, for every template over the fixtures', async () => {
    const got: Record<string, string> = {};
    for (const { name, task, trajectory } of await cases()) {
      for (const template of TEMPLATES) {
        for (const [counterName, tokenizer] of counters) {
          // The chat layouts render through Qwen3's chat template: counted with its tokenizer, or estimated.
          // (Rendering through Jinja is slow: the random inputs go through the trajectory layouts only.)
          if (template.startsWith('openhands') && (counterName === 'tiny-value' || name.startsWith('random'))) continue;
          const options = { template, tokenizer, chatTemplate };
          const uncut = await serializeTrajectory(task, trajectory, { ...options, budgetTokens: 1_000_000 });
          for (const budget of budgets(uncut.inputTokens)) {
            let outcome: unknown;
            try {
              outcome = await serializeTrajectory(task, trajectory, { ...options, budgetTokens: budget });
            } catch (error) {
              outcome = WinnowerError.isInstance(error) ? { code: error.code, message: error.message } : String(error);
            }
            got[`${name} | ${template} | ${counterName} | ${budget}`] = digest(outcome);
          }
        }
      }
    }
    if (process.env.WINNOWER_WRITE_GOLDEN === '1') writeFileSync(GOLDEN, `${JSON.stringify(got, null, 1)}\n`);
    const expected = JSON.parse(readFileSync(GOLDEN, 'utf8')) as Record<string, string>;
    const changed = Object.keys({ ...expected, ...got }).filter((key) => expected[key] !== got[key]);
    expect(changed.slice(0, 20), `${changed.length} of ${Object.keys(got).length} outputs changed`).toEqual([]);
    expect(Object.keys(got).length).toBeGreaterThan(700);
  }, 600_000);
});
