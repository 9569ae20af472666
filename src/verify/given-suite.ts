/**
 * A suite command the request gives (`verify.regression.test_command`, else `verify.test_command`):
 * how its log is read, and, when its runner is one that can run chosen test files (pytest, Django
 * `runtests.py`, SymPy `bin/test`, unittest), the same command narrowed to some files, for the
 * related tests when the whole suite does not fit the budget. A command whose output no parser
 * reads (`make check`, `go test ./...`, a shell script) is graded by exit code by the regression
 * stage (src/solve/regression.ts), which sees that the parser found no test.
 */
import { detectParser, type ParserName } from './detect.js';
import { djangoModuleOfFile, shellWord } from './test-command.js';

/** `./tests/runtests.py …` narrowed to the Django test modules of `files` (`tests/a/tests.py` → `a.tests`). */
export function djangoSubset(command: string, files: string[]): string | undefined {
  const modules = files.map(djangoModuleOfFile).filter((module): module is string => module !== undefined);
  return modules.length ? [command, ...modules.map(shellWord)].join(' ') : undefined;
}

/** `<prefix> -v a.b.test_c …`: unittest runs modules named on the command line (no discovery). */
export function unittestSubset(prefix: string, files: string[]): string | undefined {
  const modules = files.filter((file) => file.endsWith('.py')).map((file) => file.replace(/\.py$/, '').replace(/\//g, '.'));
  return modules.length ? [prefix, '-v', ...modules.map(shellWord)].join(' ') : undefined;
}

/** Options of each runner that take the next word as their value (so it is not a test path or label). */
const VALUE_OPTIONS: Record<'pytest' | 'django' | 'sympy', ReadonlySet<string>> = {
  pytest: new Set([
    '-c',
    '-k',
    '-m',
    '-p',
    '-o',
    '-W',
    '--ignore',
    '--deselect',
    '--rootdir',
    '--confcutdir',
    '--basetemp',
    '--ds',
    '--tb',
  ]),
  django: new Set(['--settings', '--parallel', '-v', '--verbosity', '-k', '--tag', '--exclude-tag', '--start-at', '--start-after']),
  sympy: new Set(['-k', '--seed', '--timeout', '--split', '--subprocess', '--rerun']),
};

/** Where the runner's own words start in `words`, and how to recognise it. */
const RUNNER_WORD: Record<'pytest' | 'django' | 'sympy' | 'unittest', (word: string, next: string | undefined) => boolean> = {
  pytest: (word, next) => /(^|\/)(py\.test|pytest)$/.test(word) || (word === '-m' && next === 'pytest'),
  django: (word) => /(^|\/)runtests\.py$/.test(word),
  sympy: (word) => /(^|\/)bin\/test$/.test(word),
  unittest: (word, next) => word === '-m' && next === 'unittest',
};

/**
 * `command` split into the runner's invocation (`head`) and its options, dropping its own test
 * selection (positional paths or labels after the runner, which the related files replace); undefined
 * when it is not one plain command: shell operators, quoting or expansions (`cd tests && pytest`,
 * `$PYTHON -m pytest`) could put the files anywhere.
 */
function splitCommand(command: string, runner: keyof typeof RUNNER_WORD): { head: string[]; options: string[] } | undefined {
  if (/[;&|<>`$(){}\\'"\n]/.test(command)) return undefined;
  const words = command.trim().split(/\s+/);
  const at = words.findIndex((word, i) => RUNNER_WORD[runner](word, words[i + 1]));
  if (at < 0) return undefined;
  // `-m pytest` / `-m unittest`: the runner's name is the word after `-m`.
  const head = words.slice(0, words[at] === '-m' ? at + 2 : at + 1);
  if (runner === 'unittest') return { head, options: [] };
  const values = VALUE_OPTIONS[runner];
  const options: string[] = [];
  const rest = words.slice(head.length);
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!;
    if (!word.startsWith('-')) continue;
    options.push(word);
    if (values.has(word) && i + 1 < rest.length) options.push(rest[++i]!);
  }
  return { head, options };
}

/** The given command narrowed to `files` with `runner`'s way of naming them. */
function narrowed(runner: keyof typeof RUNNER_WORD, split: { head: string[]; options: string[] }, files: string[]): string | undefined {
  const prefix = [...split.head, ...split.options].join(' ');
  if (runner === 'unittest') return unittestSubset(prefix, files);
  if (runner === 'django') return djangoSubset(prefix, files);
  const chosen = files.filter((file) => file.endsWith('.py'));
  return chosen.length ? [prefix, ...chosen.map(shellWord)].join(' ') : undefined;
}

/** A given command's suite (test-suite.ts's TestSuite, runner `given`). */
export interface GivenSuite {
  parser: ParserName;
  command: string;
  testFiles: string[];
  forFiles?: (files: string[]) => string | undefined;
}

/**
 * The suite of a given command. `parser`: `verify.parser`, when the command is `verify.test_command`;
 * otherwise the parser is detected from the command (pytest when nothing in it names a runner).
 */
export function givenSuite(given: string, pyTests: string[], parser?: ParserName): GivenSuite {
  const chosenParser = detectParser({ instance_id: 'suite', test_command: given }, parser);
  // The runner whose file selection applies: named by the command itself, never guessed.
  const runner = (['django', 'sympy', 'pytest', 'unittest'] as const).find((name) =>
    given
      .trim()
      .split(/\s+/)
      .some((word, i, words) => RUNNER_WORD[name](word, words[i + 1])),
  );
  const suite: GivenSuite = { parser: chosenParser, command: given, testFiles: pyTests };
  const split = runner ? splitCommand(given, runner) : undefined;
  if (runner && split) suite.forFiles = (chosen) => narrowed(runner, split, chosen);
  return suite;
}
