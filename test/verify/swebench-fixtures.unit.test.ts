/**
 * Every parser on SWE-bench harness logs, compared with the harness's report.json: first on our own
 * harness-shaped logs (test/fixtures/harness-logs, one per parser branch and per known-wrong verdict
 * case), then on the real logs in ../shared/data/swebench-logs when that folder exists. Where the
 * harness verdict is wrong (see the READMEs), the test asserts what the log says instead, and why.
 */
import { describe, expect, it } from 'vitest';
import { detectParser } from '../../src/verify/detect.js';
import { gradeTests, isPassing, lookupTest } from '../../src/verify/grade.js';
import { parseTestLog } from '../../src/verify/parse-log.js';
import { pytestStatsCounts } from '../../src/verify/parsers/pytest.js';
import { sympySummaryCounts } from '../../src/verify/parsers/sympy.js';
import { describeRealData, subfolders } from '../support/shared-data.js';
import { OWN_LOGS, REAL_LOGS, type SwebenchFixture, listsOf, loadFixture } from './swebench-fixtures.js';

function gradeFixture(fixture: SwebenchFixture) {
  const parser = detectParser({ instance_id: fixture.instanceId, test_command: fixture.testCommand });
  const parsed = parseTestLog(fixture.log, parser);
  const lists = fixture.report ? listsOf(fixture.report) : { failToPass: [], passToPass: [] };
  const grade = gradeTests({ tests: parsed.tests, ...lists, exitCode: null, timedOut: parsed.section.timedOut });
  return { parser, parsed, grade };
}

/** Strict agreement: report success ⇔ passed (or xfail); report failure ⇔ ran and did not pass. */
function disagreements(fixture: SwebenchFixture): string[] {
  const { grade } = gradeFixture(fixture);
  const report = fixture.report!;
  const out: string[] = [];
  for (const id of [...report.f2pSuccess, ...report.p2pSuccess]) {
    const status = grade.listed.get(id)!;
    if (!isPassing(status)) out.push(`${id}: report success, log ${status}`);
  }
  for (const id of [...report.f2pFailure, ...report.p2pFailure]) {
    const status = grade.listed.get(id)!;
    if (isPassing(status) || status === 'missing') out.push(`${id}: report failure, log ${status}`);
  }
  if (grade.resolved !== report.resolved) out.push(`resolved: report ${report.resolved}, log ${grade.resolved}`);
  return out;
}

/** The runner a SWE-bench repository uses (what winnower picks when it builds the command itself). */
const parserOfRepo = (name: string) => (name.startsWith('django__') ? 'django' : name.startsWith('sympy__') ? 'sympy' : 'pytest');

interface HarnessLogExpectations {
  logs: number;
  reports: number;
  /** Reports whose verdict the log contradicts; each has its own test in the suite. */
  knownWrong: string[];
  /** The instances report.json calls resolved. */
  resolved: string[];
  /** Where the eval.sh command runs another runner than the repository's usual one. */
  commandParsers?: Record<string, string>;
  /** A log whose test file failed to collect: that file, and how many P2P tests it lists. */
  collectionError: { name: string; file: string; passToPass: number; listed: string };
  /** A log cut off by the harness timeout, and the F2P test it lists. */
  timeout: { name: string; failToPass: string };
}

/**
 * The checks every set of harness logs gets, on the logs under `root`; `more` adds the tests of
 * that set's own cases. Lists `root` at collection time through `subfolders`, so a suite whose
 * folder is missing (skipped) still collects, with no test from the per-log `describe.each`.
 */
function harnessLogSuite(root: string, expected: HarnessLogExpectations, more: (load: (name: string) => SwebenchFixture) => void): void {
  const names = subfolders(root);
  const load = (name: string) => loadFixture(root, name);
  const knownWrong = new Set(expected.knownWrong);

  it(`has ${expected.logs} logs, ${expected.reports} with a report`, () => {
    expect(names).toHaveLength(expected.logs);
    expect(names.filter((name) => load(name).report)).toHaveLength(expected.reports);
  });

  it('picks the parser from the eval.sh test command, and from the repository alone', () => {
    const fromCommand = Object.fromEntries(
      names.map((name) => [name, detectParser({ instance_id: name, test_command: load(name).testCommand })]),
    );
    expect(fromCommand).toEqual(Object.fromEntries(names.map((name) => [name, expected.commandParsers?.[name] ?? parserOfRepo(name)])));
    for (const name of names) expect(detectParser({ instance_id: name }), name).toBe(parserOfRepo(name));
  });

  describe.each(names.filter((name) => load(name).report && !knownWrong.has(name)))('%s', (name) => {
    it('agrees with report.json on every listed test and on resolved', () => {
      const fixture = load(name);
      expect(disagreements(fixture)).toEqual([]);
      const { grade } = gradeFixture(fixture);
      expect(grade.status).toBe(fixture.report!.resolved ? 'resolved' : 'unresolved');
      expect(grade.fail_to_pass.passed).toBe(fixture.report!.f2pSuccess.length);
      expect(grade.pass_to_pass.passed).toBe(fixture.report!.p2pSuccess.length);
    });
  });

  it(`agrees with ${expected.reports - knownWrong.size} of the ${expected.reports} reports; the ${knownWrong.size} disagreements are the known-wrong verdicts`, () => {
    const disagreeing = names.filter((name) => load(name).report && disagreements(load(name)).length > 0);
    expect(disagreeing).toEqual([...knownWrong].sort());
    expect(names.filter((name) => load(name).report?.resolved)).toEqual(expected.resolved);
  });

  const { collectionError, timeout } = expected;
  it(`${collectionError.name}: a collection error fails every listed test in that file`, () => {
    const { parsed, grade } = gradeFixture(load(collectionError.name));
    expect([...parsed.tests]).toEqual([[collectionError.file, 'error']]);
    // No test ran: the listed ids are graded error (failed), not silently passed or dropped.
    expect(grade.fail_to_pass).toEqual({ passed: 0, failed: 1, missing: 0 });
    expect(grade.pass_to_pass).toEqual({ passed: 0, failed: collectionError.passToPass, missing: 0 });
    expect(grade.listed.get(collectionError.listed)).toBe('error');
    expect(grade.status).toBe('unresolved');
  });

  it(`${timeout.name}: no End marker and \`Timeout error\` is a timeout`, () => {
    const fixture = load(timeout.name);
    expect(fixture.report).toBeUndefined();
    const parser = detectParser({ instance_id: fixture.instanceId, test_command: fixture.testCommand });
    const parsed = parseTestLog(fixture.log, parser);
    expect(parsed.section).toEqual({ marked: true, ended: false, timedOut: true });
    expect(parsed.tests.size).toBe(0); // progress dots only: no test is named
    const grade = gradeTests({
      tests: parsed.tests,
      failToPass: [timeout.failToPass],
      passToPass: [],
      exitCode: null,
      timedOut: parsed.section.timedOut,
    });
    expect(grade).toMatchObject({ status: 'timeout', resolved: false, fail_to_pass: { passed: 0, failed: 0, missing: 1 } });
  });

  more(load);
}

describe('harness-shaped logs written for winnower (test/fixtures/harness-logs)', () =>
  harnessLogSuite(
    OWN_LOGS,
    {
      logs: 13,
      reports: 12,
      // Reports written wrong on purpose, as the real harness got them wrong.
      knownWrong: [
        // pytest 3.x `-vv` classic layout (`path::test PASSED`): the verdict says all failed.
        'acme__gadgets-201',
        // tox -> pytest without -rA (plain, and with ANSI colours): passing tests are never named.
        'acme__gadgets-202',
        'acme__gadgets-203',
      ],
      resolved: ['acme__tools-302', 'acme__widgets-101'],
      commandParsers: { 'acme__cli-401': 'unittest' },
      collectionError: {
        name: 'acme__gadgets-204',
        file: 'gadgets/tests/test_core.py',
        passToPass: 4,
        listed: 'gadgets/tests/test_core.py::test_registry[gear]',
      },
      timeout: { name: 'acme__widgets-103', failToPass: 'tests/test_render.py::test_render_huge' },
    },
    (load) => {
      it('acme__widgets-101: only the text between the markers is read; a pytest -rA run, resolved', () => {
        const fixture = load('acme__widgets-101');
        const { parsed, grade } = gradeFixture(fixture);
        expect(parsed.section).toEqual({ marked: true, ended: true, timedOut: false });
        expect([...parsed.tests.values()]).toEqual(['passed', 'passed', 'passed', 'passed']);
        expect(grade).toMatchObject({
          status: 'resolved',
          fail_to_pass: { passed: 1, failed: 0, missing: 0 },
          pass_to_pass: { passed: 3, failed: 0, missing: 0 },
        });
      });

      it('acme__gadgets-201: reads the pytest 3.x -vv classic layout (report.json is wrong)', () => {
        const fixture = load('acme__gadgets-201');
        const { parsed, grade } = gradeFixture(fixture);
        expect(pytestStatsCounts(fixture.log)).toEqual({ passed: 5, skipped: 1, warnings: 1 });
        expect([...parsed.tests.values()].filter((status) => status === 'passed')).toHaveLength(5);
        expect(parsed.tests.get('gadgets/tests/test_units.py::test_registry_lookup')).toBe('skipped');
        // the test named in the warnings summary is not a second result
        expect(parsed.tests.size).toBe(6);
        expect(grade.fail_to_pass).toEqual({ passed: 1, failed: 0, missing: 0 });
        expect(grade.pass_to_pass).toEqual({ passed: 4, failed: 0, missing: 0 });
        expect(grade.resolved).toBe(true);
        expect(load('acme__gadgets-201').report!.resolved).toBe(false);
      });

      it.each([
        ['acme__gadgets-202', { failed: 1, passed: 4 }],
        ['acme__gadgets-203', { failed: 1, passed: 4, skipped: 1 }],
      ] as const)(
        '%s: tox without -rA names only the failed test; P2P are missing, not failed (report.json says failed)',
        (name, counts) => {
          const fixture = load(name);
          const { parser, parsed, grade } = gradeFixture(fixture);
          expect(parser).toBe('pytest');
          // 203 has ANSI colour codes around the status, the test name and the stats line.
          expect(fixture.log.includes('\x1b[')).toBe(name === 'acme__gadgets-203');
          expect([...parsed.tests]).toEqual([['tests/test_format.py::test_format_nested', 'failed']]);
          expect(pytestStatsCounts(fixture.log)).toEqual(counts);
          expect(grade.fail_to_pass).toEqual({ passed: 0, failed: 1, missing: 0 });
          expect(grade.pass_to_pass).toEqual({ passed: 0, failed: 0, missing: 4 });
          expect(grade.status).toBe('unresolved');
        },
      );

      it('acme__widgets-102: SWE-bench ids truncated at a space match; xfail passes; a skip location is no test', () => {
        const fixture = load('acme__widgets-102');
        const { parsed, grade } = gradeFixture(fixture);
        expect(parsed.tests.get('tests/test_split.py::test_split[x, y-expected1]')).toBe('failed');
        expect(parsed.tests.get('tests/test_split.py::test_split[x, y{2}-expected2]')).toBe('failed');
        expect(parsed.tests.has('tests/test_split.py::test_split[x,')).toBe(false);
        expect(lookupTest(parsed.tests, 'tests/test_split.py::test_split[x,')).toBe('failed');
        expect(lookupTest(parsed.tests, 'tests/test_split.py::test_split[x')).toBe('missing');
        expect(parsed.tests.get('tests/test_split.py::test_unicode_width')).toBe('xfail');
        expect([...parsed.tests.keys()].some((id) => id.includes(':41'))).toBe(false);
        expect(parsed.tests.size).toBe(6);
        expect(pytestStatsCounts(fixture.log)).toEqual({ failed: 3, passed: 2, skipped: 1, xfailed: 1 });
        expect(grade.pass_to_pass).toEqual({ passed: 3, failed: 1, missing: 0 });
      });

      it('acme__tools-301: nested pytester sessions in captured output are ignored', () => {
        const { parsed, grade } = gradeFixture(load('acme__tools-301'));
        expect(Object.fromEntries(parsed.tests)).toEqual({
          'testing/test_plugin.py::test_plugin_loads': 'passed',
          'testing/test_plugin.py::test_plugin_reports_failure': 'passed',
          'testing/test_plugin.py::test_plugin_without_tests': 'passed',
          'testing/test_plugin.py::test_plugin_handles_skip': 'failed',
        });
        expect(grade.pass_to_pass).toEqual({ passed: 2, failed: 1, missing: 0 });
      });

      it('acme__tools-302: pytest --no-header is read like any -rA run', () => {
        const { parsed, grade } = gradeFixture(load('acme__tools-302'));
        expect(parsed.tests.size).toBe(5);
        expect(grade.status).toBe('resolved');
      });

      it('django__django-99001: the status split by interleaved stderr is found', () => {
        const { parser, parsed, grade } = gradeFixture(load('django__django-99001'));
        expect(parser).toBe('django');
        expect(parsed.tests.get('test_filter_by_label (shelves.tests.ShelfTests)')).toBe('passed');
        expect(parsed.tests.get('test_count_distinct (shelves.tests.ShelfTests)')).toBe('failed');
        expect(parsed.tests.get('test_rename (shelves.tests.ShelfTests)')).toBe('skipped');
        expect([...parsed.tests.keys()].some((id) => id.includes('Applying'))).toBe(false);
        expect(parsed.tests.size).toBe(7);
        expect(grade.fail_to_pass).toEqual({ passed: 1, failed: 0, missing: 0 });
        expect(grade.pass_to_pass).toEqual({ passed: 4, failed: 1, missing: 0 });
      });

      it('django__django-99002: Django 5 ids match in the long, short and dotted forms; a docstring line is an id', () => {
        const { parsed, grade } = gradeFixture(load('django__django-99002'));
        const long = 'test_html (template_tests.filter_tests.test_truncate.TruncateTests.test_html)';
        expect(parsed.tests.get(long)).toBe('failed'); // as printed
        expect(lookupTest(parsed.tests, 'test_html (template_tests.filter_tests.test_truncate.TruncateTests)')).toBe('failed');
        expect(lookupTest(parsed.tests, 'template_tests.filter_tests.test_truncate.FunctionTests.test_zero')).toBe('passed');
        expect(parsed.tests.get('Truncation stops at a word boundary.')).toBe('passed');
        expect(lookupTest(parsed.tests, 'test_unicode (template_tests.filter_tests.test_truncate.TruncateTests)')).toBe('error');
        expect(grade.fail_to_pass).toEqual({ passed: 2, failed: 2, missing: 0 });
      });

      it('sympy__sympy-99001: bare names, expected failures, skips, a status pushed to its own line, and the summary counts agree', () => {
        const fixture = load('sympy__sympy-99001');
        const { parsed, grade } = gradeFixture(fixture);
        expect(Object.fromEntries(parsed.tests)).toEqual({
          test_area: 'passed',
          test_perimeter: 'passed',
          test_centroid: 'failed',
          test_is_convex: 'error',
          test_regular_polygon_rotation: 'xfail',
          test_print_polygon: 'passed',
          test_triangle_incircle: 'passed',
          test_big_polygon_slow: 'skipped',
          test_encloses_point: 'passed',
          test_reflect: 'passed', // the line ending in `[FAIL]`
        });
        expect(sympySummaryCounts(fixture.log)).toEqual({ passed: 6, failed: 1, skipped: 1, 'expected to fail': 1, exceptions: 1 });
        expect(grade.fail_to_pass).toEqual({ passed: 1, failed: 1, missing: 0 });
        expect(grade.pass_to_pass).toEqual({ passed: 6, failed: 1, missing: 0 });
      });

      it('acme__cli-401: unittest -v on Python 3.11: subtests, a docstring, and a failed setUpClass failing its tests', () => {
        const { parser, parsed, grade } = gradeFixture(load('acme__cli-401'));
        expect(parser).toBe('unittest');
        expect(parsed.tests.get('test_each_verb (cli.tests.test_args.ArgsTests.test_each_verb)')).toBe('failed');
        expect(parsed.tests.get('Help text names every verb.')).toBe('passed');
        expect(parsed.tests.get('setUpClass (cli.tests.test_config.ConfigTests)')).toBe('error');
        expect(grade.listed.get('test_load (cli.tests.test_config.ConfigTests)')).toBe('error');
        expect(grade.fail_to_pass).toEqual({ passed: 1, failed: 0, missing: 0 });
        expect(grade.pass_to_pass).toEqual({ passed: 2, failed: 2, missing: 0 });
      });
    },
  ));

describeRealData('SWE-bench harness logs of a public run', 'swebench-logs', () =>
  harnessLogSuite(
    REAL_LOGS,
    {
      logs: 25,
      reports: 24,
      // report.json verdicts the log contradicts.
      knownWrong: [
        // pytest 3.3.1 `-vv` classic prints `path::test PASSED`; the harness parser did not read that
        // layout and marked all 7 listed tests failed although the log says `8 passed, 1 skipped`.
        'astropy__astropy-7166',
        // tox -> pytest without -rA: passing tests are never named, the harness counts them failed; the
        // log cannot say which tests passed, so we report them missing.
        'sphinx-doc__sphinx-7757',
        'sphinx-doc__sphinx-9658',
      ],
      resolved: [
        'django__django-11095',
        'matplotlib__matplotlib-26342',
        'pallets__flask-5014',
        'psf__requests-2317',
        'pydata__xarray-3677',
        'pylint-dev__pylint-6903',
        'pytest-dev__pytest-5809',
        'scikit-learn__scikit-learn-14141',
        'sympy__sympy-20590',
      ],
      // 0 tests ran: the 654 listed ids (1 F2P, 653 P2P) are all graded error.
      collectionError: {
        name: 'pydata__xarray-3305',
        file: 'xarray/tests/test_dataarray.py',
        passToPass: 653,
        listed: 'xarray/tests/test_dataarray.py::TestDataArray::test_quantile',
      },
      timeout: {
        name: 'scikit-learn__scikit-learn-14710',
        failToPass: 'sklearn/ensemble/_hist_gradient_boosting/tests/test_gradient_boosting.py::test_early_stopping_classification',
      },
    },
    (load) => {
      it('astropy__astropy-7166: reads the pytest 3.3.1 -vv classic layout (report.json is wrong)', () => {
        const fixture = load('astropy__astropy-7166');
        const { parsed, grade } = gradeFixture(fixture);
        // The log: `=== 8 passed, 1 skipped, 1 warnings in 0.39 seconds ===`.
        expect(pytestStatsCounts(fixture.log)).toMatchObject({ passed: 8, skipped: 1 });
        const statuses = [...parsed.tests.values()];
        expect(statuses.filter((status) => status === 'passed')).toHaveLength(8);
        expect(parsed.tests.get('astropy/utils/tests/test_misc.py::test_api_lookup')).toBe('skipped');
        // Every listed test (1 F2P, 6 P2P) passed: resolved, although report.json says all failed.
        expect(grade.fail_to_pass).toEqual({ passed: 1, failed: 0, missing: 0 });
        expect(grade.pass_to_pass).toEqual({ passed: 6, failed: 0, missing: 0 });
        expect(grade.resolved).toBe(true);
        expect(fixture.report!.resolved).toBe(false);
      });

      it.each([
        [
          'sphinx-doc__sphinx-7757',
          'tests/test_util_inspect.py::test_signature_from_str_positionaly_only_args',
          33,
          { passed: 33, failed: 1 },
        ],
        ['sphinx-doc__sphinx-9658', 'tests/test_util_typing.py::test_restify_mock', 24, { passed: 24, failed: 1, skipped: 2 }],
      ] as const)('%s: names only the failed test; P2P are missing, not failed (report.json says failed)', (name, failed, p2p, counts) => {
        const fixture = load(name);
        const { parsed, grade } = gradeFixture(fixture);
        // Without -rA only the FAILED summary line names a test (9658 also strips ANSI colour codes).
        expect([...parsed.tests]).toEqual([[failed, 'failed']]);
        expect(pytestStatsCounts(fixture.log)).toMatchObject(counts);
        expect(grade.fail_to_pass).toEqual({ passed: 0, failed: 1, missing: 0 });
        expect(grade.pass_to_pass).toEqual({ passed: 0, failed: 0, missing: p2p });
        expect(grade.resolved).toBe(false);
        expect(grade.status).toBe('unresolved');
      });

      it('django__django-10880: the status split by interleaved stderr is found', () => {
        const { parsed, grade } = gradeFixture(load('django__django-10880'));
        expect(parsed.tests.get('test_values_annotation_with_expression (aggregation.tests.AggregateTestCase)')).toBe('passed');
        expect(parsed.tests.get('test_count_star (aggregation.tests.AggregateTestCase)')).toBe('failed');
        expect(grade.pass_to_pass).toEqual({ passed: 54, failed: 1, missing: 0 });
      });

      it('django__django-16877: Django 5 ids match in both the long and the short form', () => {
        const { parsed } = gradeFixture(load('django__django-16877'));
        const long = 'test_basic (template_tests.filter_tests.test_escapeseq.EscapeseqTests.test_basic)';
        const short = 'test_basic (template_tests.filter_tests.test_escapeseq.EscapeseqTests)';
        expect(parsed.tests.get(long)).toBe('failed'); // as printed
        expect(lookupTest(parsed.tests, short)).toBe('failed');
        expect(lookupTest(parsed.tests, 'template_tests.filter_tests.test_escapeseq.EscapeseqTests.test_chain_join')).toBe('passed');
      });

      it('pylint-dev__pylint-8898: SWE-bench ids truncated at a space match', () => {
        const { parsed } = gradeFixture(load('pylint-dev__pylint-8898'));
        expect(parsed.tests.get('tests/config/test_config.py::test_csv_regex_comma_in_quantifier[foo, bar-expected2]')).toBe('failed');
        expect(parsed.tests.has('tests/config/test_config.py::test_csv_regex_comma_in_quantifier[foo,')).toBe(false);
        // the truncated id in report.json matches both `[foo, bar-expected2]` and `[foo, bar{1,3}-expected3]`
        expect(lookupTest(parsed.tests, 'tests/config/test_config.py::test_csv_regex_comma_in_quantifier[foo,')).toBe('failed');
        expect(lookupTest(parsed.tests, 'tests/config/test_config.py::test_csv_regex_comma_in_quantifier[foo')).toBe('missing');
      });

      it('pytest-dev__pytest-7571 and -5809: nested pytester sessions in captured output are ignored', () => {
        for (const name of ['pytest-dev__pytest-7571', 'pytest-dev__pytest-5809']) {
          const { parsed } = gradeFixture(load(name));
          for (const id of parsed.tests.keys()) expect(id, name).toMatch(/^testing\//);
        }
        const { parsed } = gradeFixture(load('pytest-dev__pytest-7571'));
        expect(parsed.tests.size).toBe(15);
      });

      it('sympy__sympy-17139: bare names, expected failures, and the summary counts agree', () => {
        const fixture = load('sympy__sympy-17139');
        const { parsed } = gradeFixture(fixture);
        expect(parsed.tests.get('test_factorial_simplify')).toBe('xfail');
        expect(parsed.tests.get('test_as_f_sign_1')).toBe('passed'); // the line ending in `[FAIL]`
        const counts = sympySummaryCounts(fixture.log)!;
        expect(counts).toEqual({ passed: 65, failed: 6, 'expected to fail': 2 });
        const values = [...parsed.tests.values()];
        expect(values.filter((status) => status === 'passed')).toHaveLength(65);
        expect(values.filter((status) => status === 'failed')).toHaveLength(6);
      });
    },
  ),
);
