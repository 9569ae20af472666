/**
 * Picks the log parser for a task: an explicit override, else the test command's runner, else the
 * repository, else pytest. Parsers are looked up by name; an unknown name is an error that lists
 * the valid ones.
 */
import { wnwError } from '../errors.js';
import { repoNameOf, type Task } from '../types/task.js';
import { PARSER_NAMES, type ParserName } from './parser-names.js';
import type { LogParser } from './parsers/common.js';
import { parseDjangoLog } from './parsers/django.js';
import { parseExitCode } from './parsers/exit-code.js';
import { parsePytestLog } from './parsers/pytest.js';
import { parseSympyLog } from './parsers/sympy.js';
import { parseUnittestLog } from './parsers/unittest.js';

export const PARSERS = {
  pytest: parsePytestLog,
  django: parseDjangoLog,
  sympy: parseSympyLog,
  unittest: parseUnittestLog,
  'exit-code': parseExitCode,
} as const satisfies Record<ParserName, LogParser>;

export { PARSER_NAMES, type ParserName };

export function isParserName(name: string): name is ParserName {
  return Object.hasOwn(PARSERS, name);
}

/** The parser registered under `name`; WNW_ERR_INPUT_INVALID naming the valid ones otherwise. */
export function getParser(name: string): LogParser {
  if (!isParserName(name)) {
    throw wnwError('WNW_ERR_INPUT_INVALID', `unknown test log parser "${name}"; use one of ${PARSER_NAMES.join(', ')}`, {
      details: { field: 'parser', value: name, valid: PARSER_NAMES },
    });
  }
  return PARSERS[name];
}

/**
 * The parser for a task's test log:
 * 1. `override` when given (validated);
 * 2. from `task.test_command`: `runtests.py` → django, `bin/test` → sympy, `pytest`/`py.test`/`tox`
 *    → pytest, `unittest` → unittest;
 * 3. from the repository: django/django → django, sympy/sympy → sympy;
 * 4. pytest.
 * `exit-code` is never guessed: pass it as the override for runners none of the parsers reads
 * (with no listed test ids, grading uses the exit code whatever the parser).
 */
export function detectParser(task: Pick<Task, 'instance_id' | 'repo' | 'test_command'>, override?: string): ParserName {
  if (override !== undefined) {
    getParser(override);
    return override as ParserName;
  }
  const command = task.test_command;
  if (command !== undefined) {
    if (/\bruntests\.py\b/.test(command)) return 'django';
    if (/(^|[\s/;&|])bin\/test\b/.test(command)) return 'sympy';
    if (/\b(py\.test|pytest|tox)\b/.test(command)) return 'pytest';
    if (/\bunittest\b/.test(command)) return 'unittest';
  }
  const repo = repoNameOf(task).toLowerCase();
  if (repo === 'django/django') return 'django';
  if (repo === 'sympy/sympy') return 'sympy';
  return 'pytest';
}
