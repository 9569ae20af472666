/**
 * A synthetic but realistic SWE-agent trajectory for benchmarks: `turns` assistant turns with a
 * few sentences of reasoning and one tool call each (grep, file views, a reproduction script,
 * edits, pytest, find), answered by outputs of the matching shape. Deterministic (seeded), so
 * every run measures the same text; 45 turns come to about 20K Qwen3 tokens.
 */
import { Task, Trajectory, type ChatMessage } from '../types/index.js';
import { prng } from '../util/prng.js';

/** Seeded generator, reset by each `syntheticTrajectory` call so every run measures the same text. */
let random = prng(0);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const between = (low: number, high: number): number => low + Math.floor(random() * (high - low + 1));

const NAMES = [
  'separability',
  'matrix',
  'compound',
  'model',
  'left',
  'right',
  'coord',
  'operator',
  'inputs',
  'outputs',
  'mapping',
  'result',
  'shape',
  'stack',
  'nested',
];
const identifier = (): string => `${pick(NAMES)}_${pick(NAMES)}`;
const SENTENCES = [
  'The failure comes from how the right operand is stacked when it is itself a compound model.',
  'I should look at how _cstack builds the coordinate matrix for nested models.',
  'Let me reproduce the issue first with a minimal script so I can check the fix later.',
  'The existing tests only cover flat compound models, which is why this slipped through.',
  'That output confirms the matrix is filled with ones instead of the right sub-matrix.',
  'I will make the smallest change that keeps the behaviour for non-nested models intact.',
  'Now I need to run the relevant test module to make sure nothing else broke.',
  'The traceback points at the helper that computes the number of outputs of each operand.',
  'Before editing, let me check every caller of this function to avoid regressions.',
  'It looks like the mapping models take a different code path, so they are unaffected.',
  'All tests in the module pass now, including the new case for nested compound models.',
  'I want to double check the edge case where the right operand has a single output.',
];
const thought = (): string => Array.from({ length: between(2, 5) }, () => pick(SENTENCES)).join(' ');

function pythonSource(lines: number): string {
  const out: string[] = [];
  while (out.length < lines) {
    const name = identifier();
    out.push(`def ${name}(${identifier()}, ${identifier()}=None):`, `    """Return the ${pick(NAMES)} ${pick(NAMES)} of the model."""`);
    for (let i = between(3, 9); i > 0; i -= 1) {
      out.push(
        pick([
          `    ${identifier()} = np.zeros((${identifier()}, ${between(1, 9)}))`,
          `    if ${identifier()} is None:`,
          `        return ${identifier()}[${between(0, 3)}:]`,
          `    ${identifier()}[-${identifier()}.shape[0]:, -${identifier()}.shape[1]:] = ${between(0, 1)}`,
          `    for index, item in enumerate(${identifier()}):`,
          `        ${identifier()}.append(item * ${between(2, 64)})`,
        ]),
      );
    }
    out.push(`    return ${identifier()}`, '');
  }
  return out
    .slice(0, lines)
    .map((line, index) => `${String(index + 200).padStart(6)}\t${line}`)
    .join('\n');
}

function pytestLog(tests: number): string {
  const lines = [
    '============================= test session starts ==============================',
    'platform linux -- Python 3.9.20, pytest-7.4.0, pluggy-1.3.0',
    `collected ${tests} items`,
    '',
  ];
  for (let i = 0; i < tests; i += 1)
    lines.push(
      `astropy/modeling/tests/test_${pick(NAMES)}.py::test_${identifier()}[${pick(NAMES)}-${between(0, 9)}] ${random() < 0.93 ? 'PASSED' : 'FAILED'} [${String(Math.round(((i + 1) / tests) * 100)).padStart(3)}%]`,
    );
  lines.push(
    '',
    `======================== ${tests - 2} passed, 2 failed in ${between(2, 40)}.${between(10, 99)}s ========================`,
  );
  return lines.join('\n');
}

function grepOutput(matches: number): string {
  return Array.from(
    { length: matches },
    () =>
      `astropy/modeling/${pick(NAMES)}.py:${between(10, 1500)}:    ${identifier()} = _${identifier()}(${identifier()}, ${identifier()})`,
  ).join('\n');
}

function traceback(): string {
  const frames = Array.from(
    { length: between(4, 10) },
    () =>
      `  File "/testbed/astropy/modeling/${pick(NAMES)}.py", line ${between(10, 1500)}, in ${identifier()}\n    ${identifier()} = ${identifier()}(${identifier()})`,
  );
  return [
    'Traceback (most recent call last):',
    ...frames,
    `ValueError: operands could not be broadcast together with shapes (${between(1, 4)},${between(1, 4)}) (${between(1, 4)},)`,
  ].join('\n');
}

function turn(index: number): { action: { name: string; args: Record<string, string> }; output: string } {
  switch (index % 6) {
    case 0:
      return {
        action: { name: 'bash', args: { command: `grep -rn "${identifier()}" astropy/modeling | head -${between(10, 30)}` } },
        output: grepOutput(between(6, 16)),
      };
    case 1:
      return {
        action: {
          name: 'str_replace_editor',
          args: { command: 'view', path: `/testbed/astropy/modeling/${pick(NAMES)}.py`, view_range: `[200, ${between(230, 260)}]` },
        },
        output: pythonSource(between(16, 36)),
      };
    case 2:
      return { action: { name: 'bash', args: { command: 'cd /testbed && python reproduce_issue.py' } }, output: traceback() };
    case 3: {
      const old = pythonSource(between(4, 10));
      return {
        action: {
          name: 'str_replace_editor',
          args: {
            command: 'str_replace',
            path: '/testbed/astropy/modeling/separable.py',
            old_str: old,
            new_str: old.replace(/= 1$/m, '= right'),
          },
        },
        output: `The file /testbed/astropy/modeling/separable.py has been edited. Here's the result of running \`cat -n\` on a snippet:\n${pythonSource(between(8, 16))}`,
      };
    }
    case 4:
      return {
        action: {
          name: 'bash',
          args: { command: `cd /testbed && python -m pytest astropy/modeling/tests/test_separable.py -x -q -k ${pick(NAMES)}` },
        },
        output: pytestLog(between(12, 32)),
      };
    default:
      return {
        action: {
          name: 'bash',
          args: { command: `find /testbed/astropy/modeling -name "*.py" | xargs wc -l | sort -n | tail -${between(8, 14)}` },
        },
        output: Array.from(
          { length: between(8, 14) },
          () => `${String(between(20, 3000)).padStart(6)} /testbed/astropy/modeling/${pick(NAMES)}_${pick(NAMES)}.py`,
        ).join('\n'),
      };
  }
}

export function syntheticTrajectory(turns: number, seed = 20_240_611): { task: Task; trajectory: Trajectory } {
  random = prng(seed);
  const task = Task.parse({
    instance_id: 'astropy__astropy-12907',
    problem_statement: `Modeling's \`separability_matrix\` does not compute separability correctly for nested CompoundModels\n\n${SENTENCES.slice(0, 6).join(' ')}\n\n\`\`\`python\n${pythonSource(18)}\n\`\`\`\n`,
  });
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are a programming agent working in /testbed.' },
    { role: 'user', content: task.problem_statement },
  ];
  for (let index = 0; index < turns; index += 1) {
    const { action, output } = turn(index);
    messages.push({
      role: 'assistant',
      content: thought(),
      tool_calls: [{ id: `call_${index}`, type: 'function', function: { name: action.name, arguments: JSON.stringify(action.args) } }],
    });
    messages.push({ role: 'tool', tool_call_id: `call_${index}`, content: output });
  }
  const patch = `diff --git a/astropy/modeling/separable.py b/astropy/modeling/separable.py\n--- a/astropy/modeling/separable.py\n+++ b/astropy/modeling/separable.py\n@@ -242,7 +242,7 @@ def _cstack(left, right):\n-        cright[-right.shape[0]:, -right.shape[1]:] = 1\n+        cright[-right.shape[0]:, -right.shape[1]:] = right\n`;
  return {
    task,
    trajectory: Trajectory.parse({
      id: 'bench/astropy-12907',
      instance_id: task.instance_id,
      source: 'bench',
      messages,
      patch,
      exit: 'submitted',
    }),
  };
}
