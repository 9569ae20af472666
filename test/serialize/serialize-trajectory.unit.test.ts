import { beforeAll, describe, expect, it } from 'vitest';
import { WinnowerError } from '../../src/errors.js';
import { scoreKey } from '../../src/serialize/hash.js';
import { serializeTrajectory } from '../../src/serialize/serialize-trajectory.js';
import type { Serialized } from '../../src/serialize/types.js';
import { loadTokenizer, type Tokenizer } from '../../src/serialize/tokenizer.js';
import { Task, Trajectory } from '../../src/types/index.js';
import { PATCH, patchOnly, QWEN3_TOKENIZER, task, toolTrajectory } from './fixtures.js';

let tokenizer: Tokenizer;
beforeAll(async () => {
  tokenizer = await loadTokenizer(QWEN3_TOKENIZER);
});

const serialize = (trajectory: Trajectory, budgetTokens: number, template = 'judge-v1', forTask: Task = task): Promise<Serialized> =>
  serializeTrajectory(forTask, trajectory, { template, budgetTokens, tokenizer });

async function expectExactFit(serialized: Serialized, budget: number): Promise<void> {
  expect(serialized.estimated).toBe(false);
  expect(serialized.inputTokens).toBeLessThanOrEqual(budget);
  expect(serialized.inputIds).toHaveLength(serialized.inputTokens);
  const [ids] = await tokenizer.encode([serialized.text]);
  expect(serialized.inputIds).toEqual(ids);
}

describe('serializeTrajectory with the Qwen3 tokenizer', () => {
  const long = toolTrajectory('long', 12, { thoughtWords: 250, outputLines: 80 });

  it('keeps everything, uncut, when the trajectory fits', async () => {
    const serialized = await serialize(long, 100_000);
    await expectExactFit(serialized, 100_000);
    expect(serialized.truncated).toBe(false);
    expect(serialized.cut).toEqual({ thoughts: 0, observations: 0, steps_dropped: 0, patch: false, tokens_before: serialized.inputTokens });
    for (let i = 1; i <= 12; i += 1) {
      for (const sentinel of [`THOUGHT-START-s${i} `, `THOUGHT-END-s${i}`, `ACTION-s${i} `, `OUTPUT-START-s${i}\n`, `OUTPUT-END-s${i}`]) {
        expect(serialized.text).toContain(sentinel);
      }
    }
    expect(serialized.text).toContain(PATCH.trimEnd());
    expect(serialized.text).not.toMatch(/elided( \.\.\.\]|:)/);
  });

  it('fits every budget exactly: inputTokens ≤ budget and equal to the ids of the text', async () => {
    const full = await serialize(long, 100_000);
    for (const budget of [350, 700, 1200, 2500, 4000, 6000, 9000, full.inputTokens - 1, full.inputTokens]) {
      const serialized = await serialize(long, budget);
      await expectExactFit(serialized, budget);
      expect(serialized.truncated).toBe(budget < full.inputTokens);
      expect(serialized.cut.tokens_before).toBeGreaterThanOrEqual(full.inputTokens - 20);
      expect(serialized.text.endsWith('<|im_start|>assistant\n')).toBe(true);
    }
  });

  it('cuts observations (head + tail) before thoughts, and thoughts before dropping steps', async () => {
    const medium = toolTrajectory('medium', 6, { thoughtWords: 250, outputLines: 60 });
    const full = await serialize(medium, 100_000);
    const seen = { observationsOnly: false, thoughts: false, dropped: false };
    for (let budget = full.inputTokens - 50; budget > 1200; budget -= 350) {
      const serialized = await serialize(medium, budget);
      const { cut } = serialized;
      const kept = 6 - cut.steps_dropped;
      if (cut.thoughts > 0) expect(cut.observations).toBe(kept);
      if (cut.steps_dropped === 0 && cut.thoughts > 0) seen.thoughts = true;
      if (cut.observations > 0 && cut.thoughts === 0 && cut.steps_dropped === 0) {
        seen.observationsOnly = true;
        expect(serialized.text).toMatch(/\[\.\.\. \d+ characters \(\d+ lines\) of output elided \.\.\.\]/);
        expect(serialized.text).not.toContain('[thought elided');
      }
      if (cut.steps_dropped > 0) seen.dropped = true;
    }
    expect(seen).toEqual({ observationsOnly: true, thoughts: true, dropped: true });
  });

  it('replaces thoughts with a marker that says how much was cut', async () => {
    const serialized = await serialize(long, 6000);
    expect(serialized.cut.thoughts).toBeGreaterThan(0);
    const [, chars] = /\[thought elided: (\d+) characters\]/.exec(serialized.text) ?? [];
    expect(Number(chars)).toBe(long.messages.find((message) => message.role === 'assistant')!.content.length);
  });

  it('keeps the issue, the patch and the first and last steps, and marks the dropped ones', async () => {
    const serialized = await serialize(long, 2500);
    await expectExactFit(serialized, 2500);
    const { cut, text } = serialized;
    expect(cut.steps_dropped).toBeGreaterThan(0);
    expect(text).toContain('ISSUE-SENTINEL');
    expect(text).toContain(PATCH.trimEnd());
    expect(text).toContain('ACTION-s1 ');
    expect(text).toContain('ACTION-s12 ');
    const [, count, first, last] = /\[\.\.\. (\d+) steps elided: steps (\d+) to (\d+) \.\.\.\]/.exec(text) ?? [];
    expect(Number(count)).toBe(cut.steps_dropped);
    expect(Number(last) - Number(first) + 1).toBe(cut.steps_dropped);
    for (let i = 1; i <= 12; i += 1) {
      expect(text.includes(`ACTION-s${i} `)).toBe(i < Number(first) || i > Number(last));
    }
    // head and tail of the kept observations survive the cut
    expect(text).toContain('OUTPUT-START-s1\n');
    expect(text).toContain('OUTPUT-END-s12');
  });

  it('cuts the patch only as a last resort, head and tail', async () => {
    const hugePatch = `${PATCH}${Array.from({ length: 2000 }, (_, i) => `+    line_${i} = compute(${i})`).join('\n')}\nPATCH-TAIL\n`;
    const trajectory = toolTrajectory('huge-patch', 3, { patch: hugePatch });
    const serialized = await serialize(trajectory, 3000);
    await expectExactFit(serialized, 3000);
    expect(serialized.cut.patch).toBe(true);
    expect(serialized.text).toContain('diff --git a/astropy/modeling/separable.py');
    expect(serialized.text).toContain('PATCH-TAIL');
    expect(serialized.text).toMatch(/\[\.\.\. \d+ characters \(\d+ lines\) elided \.\.\.\]/);
    expect(serialized.text).toContain('ISSUE-SENTINEL');
  });

  it('cuts a huge action of a kept step when nothing else is left', async () => {
    const trajectory = toolTrajectory('huge-action', 2);
    const assistant = trajectory.messages.filter((message) => message.role === 'assistant').at(-1)!;
    const fileText = Array.from({ length: 3000 }, (_, i) => `def helper_${i}(x):\n    return x * ${i}`).join('\n');
    assistant.tool_calls = [
      {
        id: 'c',
        type: 'function',
        function: {
          name: 'str_replace_editor',
          arguments: JSON.stringify({ command: 'create', path: '/testbed/big.py', file_text: fileText }),
        },
      },
    ];
    const serialized = await serialize(trajectory, 2000);
    await expectExactFit(serialized, 2000);
    expect(serialized.cutDetail.actions).toBe(1);
    expect(serialized.text).toContain('<parameter=path>/testbed/big.py</parameter>');
    expect(serialized.cut.patch).toBe(false);
  });

  it('gives every candidate of an instance the same prefix, byte for byte', async () => {
    const candidates = [
      long,
      toolTrajectory('short', 2),
      patchOnly('patch-only'),
      toolTrajectory('other', 5, { patch: 'diff --git a/x b/x\n' }),
    ];
    for (const budget of [1500, 5000, 40_000]) {
      const serialized = await Promise.all(candidates.map((candidate) => serialize(candidate, budget)));
      const prefixes = serialized.map((item) => item.text.slice(0, item.prefixChars));
      expect(new Set(prefixes).size).toBe(1);
      expect(prefixes[0]).toContain('ISSUE-SENTINEL');
      expect(prefixes[0]!.endsWith('<trajectory>\n')).toBe(true);
    }
  });

  it('caps an issue larger than its share of the budget the same way for every candidate', async () => {
    const bigTask = Task.parse({
      ...task,
      problem_statement: `BIG-ISSUE-HEAD\n${'The separability matrix is wrong for nested models.\n'.repeat(800)}BIG-ISSUE-TAIL`,
    });
    const serialized = await Promise.all([long, patchOnly('p')].map((candidate) => serialize(candidate, 4000, 'judge-v1', bigTask)));
    for (const item of serialized) {
      await expectExactFit(item, 4000);
      expect(item.cutDetail.issue).toBe(true);
      expect(item.text).toContain('BIG-ISSUE-HEAD');
      expect(item.text).toContain('BIG-ISSUE-TAIL');
    }
    expect(serialized[0]!.text.slice(0, serialized[0]!.prefixChars)).toBe(serialized[1]!.text.slice(0, serialized[1]!.prefixChars));
  });

  it('serializes a patch-only candidate with patch-v1, and with judge-v1 as a trajectory without steps', async () => {
    const withPatchLayout = await serialize(patchOnly('p'), 4000, 'patch-v1');
    await expectExactFit(withPatchLayout, 4000);
    expect(withPatchLayout.template).toBe('patch-v1');
    expect(withPatchLayout.truncated).toBe(false);
    expect(withPatchLayout.text).toContain('ISSUE-SENTINEL');
    expect(withPatchLayout.text).toContain(PATCH.trimEnd());
    expect(withPatchLayout.text).not.toContain('<trajectory>');

    const ignoresSteps = await serialize(long, 4000, 'patch-v1');
    expect(ignoresSteps.text).toBe(withPatchLayout.text);

    const withJudgeLayout = await serialize(patchOnly('p'), 4000);
    expect(withJudgeLayout.text).toContain('(no steps recorded: only the final patch is available)');
    expect(withJudgeLayout.text).toContain(PATCH.trimEnd());

    const empty = await serialize(patchOnly('empty', ''), 4000, 'patch-v1');
    expect(empty.text).toContain('(empty patch: no change)');
  });

  it('reads text-mode turns: fenced block as the action, user observations marked in meta', async () => {
    const trajectory = Trajectory.parse({
      id: 'text-mode',
      instance_id: task.instance_id,
      source: 'mini',
      messages: [
        { role: 'user', content: 'TASK-PROMPT please fix' },
        { role: 'assistant', content: 'THOUGHT: look at the file\n\n```bash\ncat separable.py\n```', reasoning: 'REASONING-1' },
        { role: 'user', content: 'def _cstack(left, right):', meta: { observation: true } },
        { role: 'user', content: 'FORMAT-NOTE not an observation' },
      ],
      patch: PATCH,
    });
    const serialized = await serialize(trajectory, 4000);
    expect(serialized.text).toContain('<thought>\nREASONING-1\n\nTHOUGHT: look at the file\n</thought>');
    expect(serialized.text).toContain('<action>\n```bash\ncat separable.py\n```\n</action>');
    expect(serialized.text).toContain('<output step="1">\ndef _cstack(left, right):\n</output>');
    expect(serialized.text).not.toContain('TASK-PROMPT');
    expect(serialized.text).not.toContain('FORMAT-NOTE');
  });

  it('applies settings overrides (steps always kept)', async () => {
    const serialized = await serializeTrajectory(task, long, {
      template: 'judge-v1',
      budgetTokens: 3500,
      tokenizer,
      settings: { keep_first_steps: 2 },
    });
    await expectExactFit(serialized, 3500);
    expect(serialized.cut.steps_dropped).toBeGreaterThan(0);
    expect(serialized.text).toContain('ACTION-s2 ');
  });

  it('estimates tokens at ~3.5 characters each without a tokenizer', async () => {
    const uncut = await serializeTrajectory(task, long, { template: 'judge-v1', budgetTokens: 100_000 });
    expect(uncut.estimated).toBe(true);
    expect(uncut.inputIds).toBeUndefined();
    expect(uncut.inputTokens).toBe(Math.ceil(uncut.text.length / 3.5));
    const cut = await serializeTrajectory(task, long, { template: 'judge-v1', budgetTokens: 3000 });
    expect(cut.estimated).toBe(true);
    expect(cut.truncated).toBe(true);
    expect(cut.inputTokens).toBeLessThanOrEqual(3000);
    expect(cut.inputTokens).toBe(Math.ceil(cut.text.length / 3.5));
  });

  it('rejects an unknown template, a bad budget, bad settings and an aborted call with coded errors', async () => {
    const codeOf = async (promise: Promise<unknown>): Promise<string | undefined> =>
      promise.then(
        () => undefined,
        (error: unknown) => (WinnowerError.isInstance(error) ? error.code : 'uncoded'),
      );
    const unknown = await serialize(long, 1000, 'judge-v9').catch((error: unknown) => error as WinnowerError);
    expect(unknown).toMatchObject({ code: 'WNW_ERR_SCORE_TEMPLATE' });
    expect((unknown as WinnowerError).message).toContain('judge-v1, openhands-critic-tool-calls-v1, openhands-critic-v1, patch-v1');
    expect(await codeOf(serialize(long, 0))).toBe('WNW_ERR_CFG_INVALID');
    expect(await codeOf(serialize(long, 10))).toBe('WNW_ERR_CFG_INVALID');
    expect(
      await codeOf(serializeTrajectory(task, long, { template: 'judge-v1', budgetTokens: 1000, settings: { keep_first_steps: -1 } })),
    ).toBe('WNW_ERR_CFG_INVALID');
    expect(
      await codeOf(serializeTrajectory(task, long, { template: 'judge-v1', budgetTokens: 1000, settings: { head_chars: 5 } as never })),
    ).toBe('WNW_ERR_CFG_INVALID');
    expect(await codeOf(serializeTrajectory(task, long, { template: 'judge-v1', budgetTokens: 1000, signal: AbortSignal.abort() }))).toBe(
      'WNW_ERR_OP_ABORTED',
    );
  });
});

describe('serializeTrajectory refusing a budget too small for the template text', () => {
  it('names the token count of the text with everything cut: the last text it measured', async () => {
    const encoded: string[] = [];
    const recording: Tokenizer = {
      name: tokenizer.name,
      encode: (texts) => (encoded.push(...texts), tokenizer.encode(texts)),
      countTokens: (texts) => tokenizer.countTokens(texts),
      decode: (ids) => tokenizer.decode(ids),
      tokenToId: (token) => tokenizer.tokenToId(token),
    };
    const long = toolTrajectory('long', 12, { thoughtWords: 250, outputLines: 80 });
    const error = await serializeTrajectory(task, long, { template: 'judge-v1', budgetTokens: 10, tokenizer: recording }).then(
      () => expect.unreachable('a budget of 10 was accepted'),
      (caught: unknown) => caught as WinnowerError,
    );
    expect(error).toMatchObject({ code: 'WNW_ERR_CFG_INVALID', details: { field: 'budgetTokens', budgetTokens: 10 } });
    const allCut = encoded.at(-1)!;
    const [ids] = await tokenizer.encode([allCut]);
    expect(error.details.tokens).toBe(ids!.length);
    expect(error.message).toBe(`budgetTokens 10 is too small for template text alone (${ids!.length} tokens with everything cut)`);
  });
});

describe('scoreKey', () => {
  it('hashes template, model and text', () => {
    const serialized = { template: 'judge-v1', text: 'abc' };
    const key = scoreKey('qwen3-judge', serialized);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(scoreKey('qwen3-judge', { ...serialized })).toBe(key);
    expect(scoreKey('other', serialized)).not.toBe(key);
    expect(scoreKey('qwen3-judge', { ...serialized, template: 'judge-v2' })).not.toBe(key);
    expect(scoreKey('qwen3-judge', { ...serialized, text: 'abd' })).not.toBe(key);
  });
});
