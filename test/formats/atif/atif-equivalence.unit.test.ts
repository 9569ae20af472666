/**
 * An ATIF import and the equivalent OpenAI-chat import are the same candidate to the value model's
 * serializer and to the selector's trajectory signals (docs/formats.md#atif-in).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { importTrajectories } from '../../../src/formats/index.js';
import { computeSignals } from '../../../src/select/index.js';
import { prepare } from '../../../src/select/prepare.js';
import { serializeTrajectory } from '../../../src/serialize/serialize-trajectory.js';
import { loadTokenizer, type Tokenizer } from '../../../src/serialize/tokenizer.js';
import { Task, Trajectory } from '../../../src/types/index.js';
import { QWEN3_TOKENIZER } from '../../serialize/fixtures.js';
import { exampleAtif } from './example.js';
import { tempDir } from '../../support/temp-dir.js';

const PATCH =
  'diff --git a/stats.py b/stats.py\n--- a/stats.py\n+++ b/stats.py\n@@ -1,2 +1,2 @@\n def median(xs):\n-    return xs[len(xs) // 2]\n+    return sorted(xs)[len(xs) // 2]\n';
const task = Task.parse({ instance_id: 'fix-median', problem_statement: 'median() in /app/stats.py is wrong for even-length lists' });

/** The format's example trajectory with a patch, as Harbor would export it. */
function atifDocument() {
  return { ...exampleAtif(), extra: { instance_id: 'fix-median', source: 'qwen3', exit: 'submitted', patch: PATCH } };
}

/** The same run as an OpenAI-chat record (the Orchard shape). */
function openAIChatRecord() {
  const document = exampleAtif();
  return {
    messages: [
      { role: 'system', content: 'You are a careful engineer.' },
      { role: 'user', content: 'Fix median() in /app/stats.py.' },
      {
        role: 'assistant',
        content: '',
        reasoning_content: 'Look at the code first.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'bash', arguments: '{"cmd":"cat /app/stats.py"}' } },
          { id: 'call_2', type: 'function', function: { name: 'bash', arguments: '{"cmd":"python -m pytest -q"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', name: 'bash', content: 'def median(xs): ...' },
      { role: 'tool', tool_call_id: 'call_2', name: 'bash', content: '1 failed, 2 passed' },
      { role: 'assistant', content: 'Fixed the even-length branch; all tests pass.' },
    ],
    tools: document.agent.tool_definitions,
    metadata: { instance_id: 'fix-median', source: 'qwen3', exit: 'submitted', patch: PATCH },
  };
}

const withoutMeta = (trajectory: Trajectory) => trajectory.messages.map(({ meta: _meta, ...message }) => message);

describe('an ATIF import and the equivalent OpenAI-chat import', () => {
  let tokenizer: Tokenizer;
  let fromAtif: Trajectory;
  let fromChat: Trajectory;
  beforeAll(async () => {
    tokenizer = await loadTokenizer(QWEN3_TOKENIZER);
    const dir = tempDir('atif-equivalence-');
    writeFileSync(join(dir, 'run.atif.json'), JSON.stringify(atifDocument()));
    writeFileSync(join(dir, 'run.chat.json'), JSON.stringify(openAIChatRecord()));
    [fromAtif] = (await importTrajectories(join(dir, 'run.atif.json'))).items as [Trajectory];
    [fromChat] = (await importTrajectories(join(dir, 'run.chat.json'))).items as [Trajectory];
  });

  it('reads the same candidate: id, messages, tools, patch and exit', () => {
    expect(fromAtif.id).toBe(fromChat.id);
    expect(withoutMeta(fromAtif)).toEqual(withoutMeta(fromChat));
    expect(fromAtif.meta.tools).toEqual(fromChat.meta.tools);
    expect([fromAtif.patch, fromAtif.exit]).toEqual([fromChat.patch, fromChat.exit]);
    expect(fromAtif.usage).toEqual({ prompt_tokens: 1802, completion_tokens: 85, calls: 2 });
  });

  it.each([
    ['judge-v1', 4096],
    ['judge-v1', 300],
  ])('serializes to the same document under %s in %i tokens', async (template, budgetTokens) => {
    const options = { template, budgetTokens, tokenizer };
    const [atif, chat] = await Promise.all([serializeTrajectory(task, fromAtif, options), serializeTrajectory(task, fromChat, options)]);
    expect(atif.text).toBe(chat.text);
    expect(atif.cut).toEqual(chat.cut);
    if (budgetTokens > 1000) expect(atif.text).toContain('1 failed, 2 passed');
  });

  it("gives the selector's trajectory signals the same values", () => {
    const other = Trajectory.parse({
      id: 'other/fix-median',
      instance_id: 'fix-median',
      source: 'other',
      patch: PATCH.replace('sorted(xs)', 'xs'),
    });
    const [atif] = computeSignals(prepare([{ trajectory: fromAtif }, { trajectory: other }]), task);
    const [chat] = computeSignals(prepare([{ trajectory: fromChat }, { trajectory: other }]), task);
    expect(atif).toEqual(chat);
    expect(atif).toMatchObject({ traj_steps: Math.log1p(2), traj_ran_tests: 1, traj_submitted: 1 });
  });
});
