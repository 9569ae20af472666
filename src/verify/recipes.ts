/**
 * How each repository's tests are run, by `owner/name` (and optionally `owner/name@version`, the
 * SWE-bench task's `version`): the log parser that reads its runner and the command that runs its
 * whole suite for the regression check. The built-in table follows the SWE-bench conventions
 * (docs/verify.md#recipes); a user's table (`winnower rerank --recipes <file>`) is read over it,
 * entry by entry, so one repository can be changed without restating the rest.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { wnwError } from '../errors.js';
import { repoNameOf, type Task } from '../types/task.js';
import { PARSER_NAMES } from './detect.js';

export const Recipe = z.strictObject({
  /** The log parser of the repository's runner. */
  parser: z.enum(PARSER_NAMES),
  /** The whole suite, for the regression check (absent: the suite is found as docs/checks.md says). */
  suite_command: z.string().min(1).optional(),
  /** The command that runs the task's listed tests; absent: built from the ids with the parser's runner (src/verify/test-command.ts). */
  test_command: z.string().min(1).optional(),
});
export type Recipe = z.infer<typeof Recipe>;

export const RecipeTable = z.record(z.string().regex(/^[^/\s@]+\/[^/\s@]+(@\S+)?$/, 'expected owner/name or owner/name@version'), Recipe);
export type RecipeTable = z.infer<typeof RecipeTable>;

const PYTEST_SUITE = 'python3 -m pytest -rA --tb=short -p no:cacheprovider';
const pytest: Recipe = { parser: 'pytest', suite_command: PYTEST_SUITE };

/** The SWE-bench repositories: Django's runtests.py, SymPy's bin/test, pytest for the others. */
export const BUILTIN_RECIPES: RecipeTable = {
  'django/django': { parser: 'django', suite_command: './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1' },
  'sympy/sympy': { parser: 'sympy', suite_command: 'bin/test -C --verbose' },
  'astropy/astropy': pytest,
  'matplotlib/matplotlib': pytest,
  'mwaskom/seaborn': pytest,
  'pallets/flask': pytest,
  'psf/requests': pytest,
  'pydata/xarray': pytest,
  'pylint-dev/pylint': pytest,
  'pytest-dev/pytest': pytest,
  'scikit-learn/scikit-learn': pytest,
  'sphinx-doc/sphinx': pytest,
};

/** The built-in table with `file`'s entries (JSON) over it; errors name the file and the entry. */
export function loadRecipes(file?: string): RecipeTable {
  if (file === undefined) return BUILTIN_RECIPES;
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw wnwError('WNW_ERR_INPUT_INVALID', `--recipes: cannot read ${file}: ${(error as Error).message}`, {
      details: { field: 'recipes', file },
    });
  }
  const parsed = RecipeTable.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.map(String).join('.');
    throw wnwError('WNW_ERR_INPUT_INVALID', `--recipes: ${file}: ${where || '(top level)'}: ${issue.message}`, {
      details: { field: where ? `recipes.${where}` : 'recipes', file },
    });
  }
  return { ...BUILTIN_RECIPES, ...parsed.data };
}

/** The recipe for a task's repository: `owner/name@version` first, then `owner/name`. */
export function recipeFor(table: RecipeTable, task: Pick<Task, 'instance_id' | 'repo' | 'meta'>): Recipe | undefined {
  const name = repoNameOf(task);
  const version = task.meta?.version;
  return (typeof version === 'string' ? table[`${name}@${version}`] : undefined) ?? table[name];
}
