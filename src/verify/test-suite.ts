/**
 * The repository's own test suite, found without a test list (the regression check): probed in a
 * sandbox at the base commit. `verify.regression.test_command` wins; otherwise by what the
 * checkout holds, per language: Django (`tests/runtests.py`), SymPy (`bin/test`), Python (pytest
 * when importable, else unittest discovery), Go (`go.mod`), Rust (`Cargo.toml`), Node (a `test`
 * script in package.json); when several are found, the language with the most test files wins.
 * Each suite says how to run all of it and, where the runner can, only some test files (the tests
 * related to a patch).
 */
import type { Sandbox } from '../sandbox/types.js';
import type { ParserName } from './detect.js';
import { djangoSubset, givenSuite, unittestSubset } from './given-suite.js';
import { shellWord } from './test-command.js';

export interface TestSuite {
  runner: 'pytest' | 'unittest' | 'django' | 'sympy' | 'go' | 'cargo' | 'npm' | 'given';
  /** How the log is read; `exit-code` runners report the whole suite as one test, named by the command. */
  parser: ParserName;
  /** The whole suite. */
  command: string;
  /** The repository's test files (paths relative to the workdir), for the related-tests heuristics. */
  testFiles: string[];
  /** A command running only `files` (a subset of testFiles); absent when the runner cannot select files. */
  forFiles?: (files: string[]) => string | undefined;
}

const PYTEST = 'python3 -m pytest -rA --tb=short -p no:cacheprovider';

/** Test files per language, by name: what runner detection counts (docs/checks.md "Regression check"). */
const TEST_FILES = {
  python: /(^|\/)(test_[^/]*\.py|[^/]*_test\.py|tests\.py)$/,
  js: /(^|\/)([^/]*\.(test|spec)\.[cm]?[jt]sx?|__tests__\/[^/]*\.[cm]?[jt]sx?)$/,
  go: /_test\.go$/,
  rust: /(^|\/)tests\/[^/]*\.rs$/,
} as const;
type Language = keyof typeof TEST_FILES;
const TEST_FILE = new RegExp(
  Object.values(TEST_FILES)
    .map((pattern) => pattern.source)
    .join('|'),
);

/** What the probe prints: one `key=value` line per fact. */
const PROBE = [
  'cd "$1" || exit 1',
  '[ -f tests/runtests.py ] && [ -d django ] && echo runner=django',
  '[ -f bin/test ] && [ -d sympy ] && echo runner=sympy',
  '[ -f go.mod ] && echo runner=go',
  '[ -f Cargo.toml ] && echo runner=cargo',
  '[ -f package.json ] && grep -q \'"test"[[:space:]]*:\' package.json && echo runner=npm',
  'python3 -c "import pytest" >/dev/null 2>&1 && echo pytest=yes',
  // Tracked files when this is a git checkout; otherwise a bounded walk.
  '{ git ls-files 2>/dev/null || find . -type f -not -path "./.git/*" | sed "s|^\\./||"; } | head -n 20000 | sed "s/^/file=/"',
].join('\n');

/** The language each detectable runner tests, in the order a tie between languages is broken. */
const RUNNER_LANGUAGE: ReadonlyArray<[runner: string, language: Language]> = [
  ['django', 'python'],
  ['sympy', 'python'],
  ['go', 'go'],
  ['cargo', 'rust'],
  ['npm', 'js'],
  ['python', 'python'],
];

/**
 * The runner for the language with the most test files among those a runner was found for (a
 * Python repository's `package.json` test script for karma does not win over its Python tests);
 * ties go to the first in RUNNER_LANGUAGE. `python` (pytest or unittest) needs Python test files.
 */
function chooseRunner(runners: string[], files: string[]): string | undefined {
  const count = (language: Language) => files.filter((file) => TEST_FILES[language].test(file)).length;
  const available = RUNNER_LANGUAGE.filter(([runner, language]) => (runner === 'python' ? count(language) > 0 : runners.includes(runner)));
  let best: [string, number] | undefined;
  for (const [runner, language] of available) {
    const n = count(language);
    if (!best || n > best[1]) best = [runner, n];
  }
  return best?.[0];
}

/** Finds the suite in `sandbox` (at the base commit); undefined when there is none. */
export async function findTestSuite(
  sandbox: Sandbox,
  given: string | undefined,
  options: { signal?: AbortSignal; parser?: ParserName } = {},
): Promise<TestSuite | undefined> {
  const probe = await sandbox.exec(`set -- ${shellWord(sandbox.workdir)}\n${PROBE}`, {
    timeoutMs: 60_000,
    maxOutputBytes: 4 * 1024 * 1024,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const lines = probe.stdout.split('\n');
  const runners = lines.filter((line) => line.startsWith('runner=')).map((line) => line.slice(7));
  const files = lines.filter((line) => line.startsWith('file=')).map((line) => line.slice(5));
  const testFiles = files.filter((file) => TEST_FILE.test(file));
  const pyTests = testFiles.filter((file) => TEST_FILES.python.test(file));
  const pytest = lines.includes('pytest=yes');
  if (given) return { runner: 'given', ...givenSuite(given, pyTests, options.parser) };
  const runner = chooseRunner(runners, files);
  if (runner === undefined) return undefined;
  if (runner === 'django') {
    const base = './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1';
    return { runner, parser: 'django', command: base, testFiles: pyTests, forFiles: (chosen) => djangoSubset(base, chosen) };
  }
  if (runner === 'sympy') {
    return {
      runner,
      parser: 'sympy',
      command: 'bin/test -C --verbose',
      testFiles: pyTests,
      forFiles: (chosen) => ['bin/test -C --verbose', ...chosen.map(shellWord)].join(' '),
    };
  }
  if (runner === 'go' || runner === 'cargo' || runner === 'npm') {
    const command = { go: 'go test ./...', cargo: 'cargo test', npm: 'npm test' }[runner];
    return { runner, parser: 'exit-code', command, testFiles };
  }
  if (pytest)
    return {
      runner: 'pytest',
      parser: 'pytest',
      command: PYTEST,
      testFiles: pyTests,
      forFiles: (chosen) => [PYTEST, ...chosen.map(shellWord)].join(' '),
    };
  return {
    runner: 'unittest',
    parser: 'unittest',
    command: 'python3 -m unittest discover -v -t . -s .',
    testFiles: pyTests,
    forFiles: (chosen) => unittestSubset('python3 -m unittest', chosen),
  };
}

/**
 * The test files related to a patch: those whose path names a changed file's module, or that
 * mention it (an import) in their first lines — read in `sandbox`. Path heuristics only when the
 * read fails.
 */
export async function relatedTestFiles(
  sandbox: Sandbox,
  suite: TestSuite,
  changed: string[],
  options: { signal?: AbortSignal } = {},
): Promise<string[]> {
  const stems = [
    ...new Set(
      changed
        .filter((file) => !TEST_FILE.test(file))
        .map((file) => file.replace(/^.*\//, '').replace(/\.[^.]+$/, ''))
        .filter((stem) => stem.length >= 3 && stem !== '__init__'),
    ),
  ];
  if (stems.length === 0) return [];
  const byPath = suite.testFiles.filter((file) => stems.some((stem) => file.includes(stem)));
  const pattern = stems
    .map((stem) => stem.replace(/[^\w]/g, ''))
    .filter(Boolean)
    .join('|');
  if (!pattern || suite.testFiles.length === 0) return byPath;
  const listed = suite.testFiles.slice(0, 5000).map(shellWord).join(' ');
  const grep = await sandbox.exec(`grep -l -E '(import|from|require|use).*\\b(${pattern})\\b' -- ${listed} 2>/dev/null; true`, {
    timeoutMs: 60_000,
    maxOutputBytes: 1024 * 1024,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const byImport = grep.stdout
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return [...new Set([...byPath, ...byImport])];
}
