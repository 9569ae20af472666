/**
 * unittest verbose log parser (`python -m unittest -v`, and the core of Django's runner).
 *
 * Lines read:
 * - `test_x (module.Class) ... ok|FAIL|ERROR|skipped 'why'|expected failure|unexpected success`,
 *   and Python 3.11+'s `test_x (module.Class.test_x) ... ok`;
 * - a status split from its test by other output: `test_x (module.Class) ... <stderr noise>` and,
 *   lines later, the status alone on its line (`ok`); the pending test takes that status;
 * - a test with a docstring: `test_x (module.Class)` alone, then `First docstring line ... ok`;
 *   both the test id and the docstring line (which the SWE-bench harness uses as the id) are
 *   recorded;
 * - `FAIL: test_x (module.Class)` / `ERROR: test_x (module.Class)` blocks, which confirm failures
 *   and name class-level errors (`ERROR: setUpClass (module.Class)`).
 *
 * Ids are recorded as the runner prints them (`test_x (module.Class)` before Python 3.11,
 * `test_x (module.Class.test_x)` after); grading matches either spelling, and the dotted
 * `module.Class.test_x`, to the ids a task lists (see `unittestIdForms`).
 */
import type { TestStatus } from '../../types/verify.js';
import { type ParseContext, logLines, record } from './common.js';

/** `test_x (module.Class)` or `test_x (module.Class.test_x)` at the start of a line. */
const HEAD = /^(\w+) \(([A-Za-z_][\w.]*)\)/;
const BLOCK = /^(FAIL|ERROR): (\w+) \(([A-Za-z_][\w.]*)\)/;
const SEPARATOR = ' ... ';

/** Maps what unittest prints after ` ... ` to a status; undefined for anything else. */
export function unittestStatus(text: string): TestStatus | undefined {
  const value = text.trim();
  if (value === 'ok' || value === 'OK') return 'passed';
  if (value === 'FAIL') return 'failed';
  if (value === 'ERROR') return 'error';
  if (value === 'expected failure') return 'xfail';
  if (value === 'unexpected success') return 'xpass';
  if (/^skipped\b/.test(value) || value === 'skip') return 'skipped';
  return undefined;
}

/** The three spellings of one test's id: `name (Class path)`, `name (Class path.name)`, dotted. Used by grading. */
export function unittestIdForms(name: string, target: string): string[] {
  const classPath = classPathOf(name, target);
  return [`${name} (${classPath})`, `${name} (${classPath}.${name})`, `${classPath}.${name}`];
}

function classPathOf(name: string, target: string): string {
  return target.endsWith(`.${name}`) ? target.slice(0, -(name.length + 1)) : target;
}

/** `test_x (a.b.Class)` or `test_x (a.b.Class.test_x)` → `{ name, classPath: 'a.b.Class' }`. */
export function splitUnittestId(id: string): { name: string; classPath: string } | undefined {
  const match = /^(\w+) \(([A-Za-z_][\w.]*)\)$/.exec(id.trim());
  if (!match) return undefined;
  return { name: match[1]!, classPath: classPathOf(match[1]!, match[2]!) };
}

interface Pending {
  ids: string[];
}

/** Parses unittest-style verbose output (unittest, Django's runtests.py). */
export function parseUnittestLog(log: string, _context?: ParseContext): Map<string, TestStatus> {
  const tests = new Map<string, TestStatus>();
  const put = (ids: readonly string[], status: TestStatus): void => {
    for (const id of ids) record(tests, id, status);
  };
  /** A test whose ` ... ` was printed but whose status has not come yet. */
  let pending: Pending | undefined;
  /** A test head printed alone: its docstring line with ` ... status` follows. */
  let described: string[] | undefined;

  for (const raw of logLines(log)) {
    // Subtest results are indented (`  test_x (m.C.test_x) (i=1) ... FAIL`).
    const line = raw.trim();
    const block = BLOCK.exec(line);
    if (block) {
      put([`${block[2]!} (${block[3]!})`], block[1] === 'FAIL' ? 'failed' : 'error');
      pending = undefined;
      described = undefined;
      continue;
    }

    const head = HEAD.exec(line);
    if (head) {
      const ids = [`${head[1]!} (${head[2]!})`];
      const separator = line.indexOf(SEPARATOR, head[0].length);
      const bare = line.slice(head[0].length).trim();
      if (separator < 0 && (bare === '' || bare === '...')) {
        // Either a docstring line follows, or (bare `...`) the status comes later.
        if (bare === '...') pending = { ids };
        else described = ids;
        continue;
      }
      if (separator >= 0) {
        settle(ids, line.slice(separator + SEPARATOR.length));
        described = undefined;
        continue;
      }
    }

    const separator = line.indexOf(SEPARATOR);
    if (described && separator >= 0) {
      // `First docstring line ... ok`: the harness keys this test by the docstring line.
      settle([...described, line.slice(0, separator).trim()], line.slice(separator + SEPARATOR.length));
      described = undefined;
      continue;
    }

    if (pending) {
      const status = unittestStatus(line);
      if (status) {
        put(pending.ids, status);
        pending = undefined;
      }
    }
  }
  return tests;

  function settle(ids: string[], after: string): void {
    const status = unittestStatus(after);
    if (status) {
      put(ids, status);
      pending = undefined;
    } else {
      // Output landed between ` ... ` and the status; wait for a line that is only a status.
      pending = { ids };
    }
  }
}
