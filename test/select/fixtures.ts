/** Small builders and patches shared by the selection tests. */
import type { Score, Trajectory, VerifyResult, VerifyStatus } from '../../src/types/index.js';
import type { Candidate } from '../../src/select/index.js';

export const INSTANCE = 'acme__calc-1';

export function trajectory(id: string, patch: string, instance = INSTANCE): Trajectory {
  return { format: 'winnower-trajectory-1', id, instance_id: instance, source: 'test', messages: [], patch, exit: 'submitted', meta: {} };
}

export function score(id: string, value: number, instance = INSTANCE): Score {
  return {
    trajectory_id: id,
    instance_id: instance,
    value,
    raw: Math.log(value / (1 - value)),
    backend: 'onnx',
    model: 'tiny',
    template: 'default',
    input_tokens: 100,
    truncated: false,
    cut: { thoughts: 0, observations: 0, steps_dropped: 0, patch: false, tokens_before: 100 },
    cached: false,
  };
}

export function verify(id: string, status: VerifyStatus, instance = INSTANCE): VerifyResult {
  return {
    trajectory_id: id,
    instance_id: instance,
    status,
    applied: status !== 'apply_failed',
    tests: {},
    fail_to_pass: { passed: status === 'resolved' ? 1 : 0, failed: status === 'resolved' ? 0 : 1, missing: 0 },
    pass_to_pass: { passed: 3, failed: 0, missing: 0 },
    resolved: status === 'resolved',
    parser: 'pytest',
    exit_code: status === 'resolved' ? 0 : 1,
    other_failed: [],
    other_failed_count: 0,
    timed_out: status === 'timeout',
    duration_ms: 1000,
    log_tail: '',
  };
}

/** A candidate; `value` undefined means no score, `status` undefined means not verified. */
export function candidate(id: string, patch: string, value?: number, status?: VerifyStatus): Candidate {
  return {
    trajectory: trajectory(id, patch),
    ...(value === undefined ? {} : { score: score(id, value) }),
    ...(status === undefined ? {} : { verify: verify(id, status) }),
  };
}

/** git diff of one edit in src/calc.py, 3 lines of context. */
export const FIX_A = [
  'diff --git a/src/calc.py b/src/calc.py',
  'index 1111111..2222222 100644',
  '--- a/src/calc.py',
  '+++ b/src/calc.py',
  '@@ -7,7 +7,7 @@ def add(a, b):',
  ' line7',
  ' line8',
  ' line9',
  '-    return a - b',
  '+    return a + b',
  ' line11',
  ' line12',
  ' line13',
  '',
].join('\n');

/** The same edit as FIX_A written by `diff -u -U1` with timestamps, no a/ b/, trailing spaces, CRLF. */
export const FIX_A_NOISY = [
  '--- src/calc.py\t2024-05-01 10:00:00.000000000 +0000',
  '+++ src/calc.py\t2024-05-01 10:00:01.000000000 +0000',
  '@@ -9,3 +9,3 @@',
  ' line9',
  '-    return a - b   ',
  '+    return a + b\t',
  ' line11',
  '',
].join('\r\n');

/** A different fix of the same line. */
export const FIX_B = FIX_A.replace('+    return a + b', '+    return b + a');

/** A second file's edit, to build two-file patches. */
export const README_EDIT = [
  'diff --git a/README.md b/README.md',
  'index 3333333..4444444 100644',
  '--- a/README.md',
  '+++ b/README.md',
  '@@ -1,2 +1,2 @@',
  '-# calc',
  '+# calc (fixed)',
  ' adds numbers',
  '',
].join('\n');

/** A patch whose hunk stops short of what its header promises. */
export const BROKEN = [
  '--- a/src/calc.py',
  '+++ b/src/calc.py',
  '@@ -7,7 +7,7 @@',
  ' line7',
  '-    return a - b',
  '+    return a + b',
  '',
].join('\n');

/** A git diff of one file; `lines` is the hunk body (' ', '-', '+' prefixes), counts computed. */
export function fileDiff(path: string, lines: string[], how: 'modify' | 'new' | 'delete' = 'modify'): string {
  const old = lines.filter((l) => !l.startsWith('+')).length;
  const fresh = lines.filter((l) => !l.startsWith('-')).length;
  const head =
    how === 'new'
      ? [`diff --git a/${path} b/${path}`, 'new file mode 100644', '--- /dev/null', `+++ b/${path}`, `@@ -0,0 +1,${fresh} @@`]
      : how === 'delete'
        ? [`diff --git a/${path} b/${path}`, 'deleted file mode 100644', `--- a/${path}`, '+++ /dev/null', `@@ -1,${old} +0,0 @@`]
        : [
            `diff --git a/${path} b/${path}`,
            'index 1111111..2222222 100644',
            `--- a/${path}`,
            `+++ b/${path}`,
            `@@ -10,${old} +10,${fresh} @@`,
          ];
  return [...head, ...lines, ''].join('\n');
}
