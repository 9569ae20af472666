/**
 * Reproduction tests (verify.reproduction): the one new test file a test-writer rollout wrote,
 * taken from its patch, and how it runs in a sandbox. A test file never overwrites a file that
 * exists where it runs (base or candidate); changes the writer made to existing files are ignored.
 * Outcomes: `failed` (a test failed or raised inside the code under test), `passed`, or `error` —
 * it failed for an unrelated reason: nothing collected, an import or syntax error.
 */
import { throwIfAborted } from '../errors.js';
import type { Sandbox } from '../sandbox/types.js';
import type { TestFileOutcome } from '../types/checks.js';
import { runSuite } from './run-suite.js';
import { patchedFiles, shellWord } from './test-command.js';

/** Bytes of a generated test file kept (and run); larger files are discarded. */
export const MAX_TEST_FILE_BYTES = 64 * 1024;

const TEST_NAME = /(^|\/)(test_[^/]*\.py|[^/]*_test\.py|[^/]*\.(test|spec)\.[cm]?js)$/;
/** Errors that say the test never reached the behaviour under test. */
const UNRELATED =
  /\b(ModuleNotFoundError|ImportError|SyntaxError|IndentationError|NameError|fixture '[^']*' not found|ERROR collecting|errors? during collection|Cannot find module|SyntaxError:)\b/;

export type ExtractedTest = { file: string; content: string } | { discard: string };

/**
 * The new test file of a writer's patch: the first added file whose name looks like a test
 * (`test_*.py`, `*_test.py`, `*.test.js`); the rest of the patch is ignored.
 */
export function extractTestFile(patch: string): ExtractedTest {
  if (patch.trim() === '') return { discard: 'the test writer changed nothing' };
  const sections = patch.split(/^(?=diff --git )/m);
  for (const section of sections) {
    const [file] = patchedFiles(section);
    if (!file || !TEST_NAME.test(file) || !/^new file mode /m.test(section)) continue;
    if (file.startsWith('/') || file.split('/').includes('..')) continue;
    const hunk = section.indexOf('\n@@');
    if (hunk < 0) return { discard: `${file} is empty` };
    const content = section
      .slice(hunk + 1)
      .split('\n')
      .filter((line) => line.startsWith('+'))
      .map((line) => line.slice(1))
      .join('\n');
    if (Buffer.byteLength(content) > MAX_TEST_FILE_BYTES) return { discard: `${file} is over ${MAX_TEST_FILE_BYTES} bytes` };
    return { file, content: `${content}\n` };
  }
  return { discard: 'the test writer added no new test file (test_*.py, *_test.py, *.test.js)' };
}

/** The command that runs one test file; pytest when importable, else unittest; node's runner for .js. */
function commandFor(file: string): string {
  if (file.endsWith('.js') || file.endsWith('.mjs') || file.endsWith('.cjs')) return `node --test ${shellWord(file)}`;
  const module = file.replace(/\.py$/, '').replace(/\//g, '.');
  // pytest first; unittest only when pytest is not installed (no separate probe: one interpreter start).
  return [
    `out=$(python3 -m pytest -rA --tb=short -p no:cacheprovider ${shellWord(file)} 2>&1); rc=$?`,
    `if [ "$rc" -eq 1 ] && printf '%s' "$out" | grep -q 'No module named pytest'; then exec python3 -m unittest -v ${shellWord(module)}; fi`,
    `printf '%s\n' "$out"; exit "$rc"`,
  ].join('\n');
}

export interface TestFileRun {
  outcome: TestFileOutcome | 'conflict';
  /** Why `error` (or `conflict`). */
  reason?: string;
  log_tail: string;
  duration_ms: number;
}

/** Writes `test` into `sandbox` (never over an existing file) and runs it. */
export async function runTestFile(
  sandbox: Sandbox,
  test: { file: string; content: string },
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<TestFileRun> {
  const started = performance.now();
  const path = shellWord(test.file);
  const exists = await sandbox.exec(`if [ -e ${path} ] || [ -L ${path} ]; then echo exists; else mkdir -p -- "$(dirname ${path})"; fi`, {
    timeoutMs: 30_000,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  throwIfAborted(options.signal);
  if (exists.stdout.trim() === 'exists')
    return {
      outcome: 'conflict',
      reason: `${test.file} already exists here; a generated test never overwrites a file`,
      log_tail: '',
      duration_ms: Math.round(performance.now() - started),
    };
  await sandbox.writeFile(test.file, test.content, options.signal ? { signal: options.signal } : {});
  const file = test.file;
  const parser = file.endsWith('.py') ? 'pytest' : 'exit-code';
  const run = await runSuite(sandbox, commandFor(file), parser, options);
  const elapsed = Math.round(performance.now() - started);
  const statuses = [...run.tests.values()];
  // unittest's log is not what the pytest parser reads: fall back on the exit code and the log.
  const unittestRan = /^Ran (\d+) tests? in /m.exec(run.log);
  if (run.timed_out) return { outcome: 'error', reason: 'the test timed out', log_tail: run.log_tail, duration_ms: elapsed };
  if (UNRELATED.test(run.log) && !statuses.includes('failed')) {
    return {
      outcome: 'error',
      reason: `errors for an unrelated reason: ${UNRELATED.exec(run.log)![1]}`,
      log_tail: run.log_tail,
      duration_ms: elapsed,
    };
  }
  if (
    UNRELATED.test(run.log) &&
    statuses.includes('failed') &&
    /^E\s+(ModuleNotFoundError|ImportError|SyntaxError|NameError)\b/m.test(run.log)
  ) {
    return {
      outcome: 'error',
      reason: 'errors for an unrelated reason: an import or name error inside the test',
      log_tail: run.log_tail,
      duration_ms: elapsed,
    };
  }
  if (parser === 'pytest' && statuses.length > 0) {
    if (statuses.includes('error'))
      return {
        outcome: 'error',
        reason: 'errors outside the test body (collection, fixtures)',
        log_tail: run.log_tail,
        duration_ms: elapsed,
      };
    if (statuses.includes('failed')) return { outcome: 'failed', log_tail: run.log_tail, duration_ms: elapsed };
    if (statuses.some((status) => status === 'passed')) return { outcome: 'passed', log_tail: run.log_tail, duration_ms: elapsed };
    return { outcome: 'error', reason: 'no test ran (all skipped)', log_tail: run.log_tail, duration_ms: elapsed };
  }
  if (unittestRan && Number(unittestRan[1]) === 0)
    return { outcome: 'error', reason: 'no test collected', log_tail: run.log_tail, duration_ms: elapsed };
  if (!unittestRan && parser === 'pytest')
    return {
      outcome: 'error',
      reason: `no test collected (exit ${run.exit_code ?? 'killed'})`,
      log_tail: run.log_tail,
      duration_ms: elapsed,
    };
  return { outcome: run.exit_code === 0 ? 'passed' : 'failed', log_tail: run.log_tail, duration_ms: elapsed };
}
