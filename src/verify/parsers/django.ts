/**
 * Django `tests/runtests.py --verbosity 2` log parser. The runner is unittest underneath, so the
 * line formats are unittest's (see unittest.ts), with what Django adds:
 * - stderr of the runner (`Testing against Django installed in ...`, migrations, `System check
 *   identified no issues`) printed into the middle of a `test_x (module.Class) ... ` line, its
 *   `ok` arriving alone lines later (django__django-10880);
 * - Django 4.2+/5.x on Python 3.11+ printing `test_x (module.Class.test_x)`, while SWE-bench lists
 *   may use either form; ids are recorded as printed and grading matches both (and the dotted
 *   `module.Class.test_x`);
 * - tests with docstrings keyed by the docstring line in SWE-bench lists (recorded as well).
 */
import type { TestStatus } from '../../types/verify.js';
import type { ParseContext } from './common.js';
import { parseUnittestLog } from './unittest.js';

/** Parses Django runtests.py verbose output into outcomes keyed by `test_x (module.Class)` ids. */
export function parseDjangoLog(log: string, context?: ParseContext): Map<string, TestStatus> {
  return parseUnittestLog(log, context);
}
