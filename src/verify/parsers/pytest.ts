/**
 * pytest log parser. Reads two places, and only those, so that the output of pytest runs nested
 * inside tests (pytester, printed in the PASSES/FAILURES sections) is never taken for ours:
 *
 * 1. the progress area, from the start up to the first `=== ... ===` section header after the
 *    session header: verbose lines `path::test PASSED` (pytest 3.x `-vv` classic puts the status at
 *    the end, newer `-v` adds `[ 10%]`, skips and xfails may carry `(reason)`), and xdist's
 *    `[gw0] [ 10%] PASSED path::test`;
 * 2. the terminal short summary, the last `short test summary info` block that is directly
 *    followed by the session's final stats line: `PASSED id`, `FAILED id - msg`, `ERROR id`,
 *    `XFAIL id - reason`, `XPASS id`, and `ERROR path` for a file that failed to collect (recorded
 *    under the file's path; grading reads it for every test in that file).
 *
 * Ids are pytest node ids as printed. (SWE-bench lists hold ids with spaces truncated at the first
 * space, `test_x[foo,`; grading matches those, see grade.ts.)
 * Progress dots (`....F..`) name no test, so tests seen only as dots are absent (graded missing).
 */
import type { TestStatus } from '../../types/verify.js';
import { type ParseContext, logLines, record } from './common.js';

/** A failed subtest fails its test; passed or skipped subtests say nothing about it (undefined). */
const STATUS: Record<string, TestStatus | undefined> = {
  PASSED: 'passed',
  FAILED: 'failed',
  FAIL: 'failed',
  ERROR: 'error',
  SKIPPED: 'skipped',
  SKIP: 'skipped',
  XFAIL: 'xfail',
  XPASS: 'xpass',
  SUBFAILED: 'failed',
  SUBFAIL: 'failed',
};
/** Status words, with pytest 9 / pytest-subtests' `SUBFAILED(i=1)` forms. */
const WORDS = '(?:SUB(?:FAILED|FAIL|PASSED|PASS|SKIPPED|SKIP)(?:\\([^)]*\\))?|PASSED|FAILED|FAIL|ERROR|SKIPPED|SKIP|XFAIL|XPASS)';

const HEADER = /^=+ (.+?) =+$/;
const SESSION_START = /test session starts/;
const SUMMARY_HEADER = /short test summary info/;
/** `=== 1 failed, 33 passed in 1.54s ===`, `=== 8 passed ... in 0.39 seconds ===`, `=== no tests ran in 0.01s ===`. */
const STATS = /\bin [\d.]+ ?s(?:econds)?\b/;
/** `path::test PASSED`, `path::test SKIPPED (reason) [ 50%]`. */
const VERBOSE = new RegExp(`^(\\S.*?::.+?) (${WORDS})(?: \\(.*\\))?(?:\\s+\\[\\s*\\d+%\\])?\\s*$`);
/** `SUBFAILED(i=1)` → `SUBFAILED`. */
const statusOf = (word: string): TestStatus | undefined => STATUS[word.replace(/\(.*$/, '')];
/** xdist: `[gw0] [ 50%] PASSED path::test`. */
const XDIST = new RegExp(`^\\[gw\\d+\\](?: \\[\\s*\\d+%\\])? (${WORDS}) (\\S.*?)\\s*$`);
const SUMMARY_LINE = new RegExp(`^(${WORDS}) (.+)$`);

/** Parses pytest output (any version from 3.x to 9.x) into outcomes keyed by node id. */
export function parsePytestLog(log: string, _context?: ParseContext): Map<string, TestStatus> {
  const lines = logLines(log);
  const tests = new Map<string, TestStatus>();
  const put = (id: string, status: TestStatus): void => record(tests, id, status);

  // 1. progress area
  let seenSession = false;
  for (const line of lines) {
    const header = HEADER.exec(line);
    if (header) {
      if (SESSION_START.test(header[1]!)) {
        if (seenSession) break;
        seenSession = true;
        continue;
      }
      if (seenSession) break;
      continue;
    }
    const verbose = VERBOSE.exec(line);
    if (verbose) {
      const status = statusOf(verbose[2]!);
      if (status) put(verbose[1]!, status);
      continue;
    }
    const xdist = XDIST.exec(line);
    const status = xdist ? statusOf(xdist[1]!) : undefined;
    if (xdist && status) put(xdist[2]!, status);
  }

  // 2. terminal short summary
  const summary = findTerminalSummary(lines);
  if (summary) {
    for (let index = summary.start; index < summary.end; index += 1) {
      const match = SUMMARY_LINE.exec(lines[index]!);
      if (!match) continue;
      const status = statusOf(match[1]!);
      if (!status) continue;
      let rest = match[2]!.trim();
      // `SKIPPED [2] path.py:12: reason` names a location, not a test.
      if (/^\[\d+\]/.test(rest)) continue;
      if (rest.startsWith('collecting ')) rest = rest.slice('collecting '.length);
      const id = nodeIdOf(rest);
      if (id) put(id, status);
    }
  }
  return tests;
}

/** The last `short test summary info` block, if the next header after it is the final stats line. */
function findTerminalSummary(lines: string[]): { start: number; end: number } | undefined {
  let stats = -1;
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const header = HEADER.exec(lines[index]!);
    if (header && STATS.test(header[1]!)) {
      stats = index;
      break;
    }
  }
  if (stats < 0) return undefined;
  for (let index = stats - 1; index >= 0; index -= 1) {
    const header = HEADER.exec(lines[index]!);
    if (!header) continue;
    return SUMMARY_HEADER.test(header[1]!) ? { start: index + 1, end: stats } : undefined;
  }
  return undefined;
}

/**
 * The node id at the start of a summary line's text: up to the first ` - ` (message separator)
 * outside square brackets, so parametrize ids holding ` - ` or spaces stay whole.
 */
export function nodeIdOf(text: string): string {
  let depth = 0;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (char === '[') depth += 1;
    else if (char === ']') depth = Math.max(0, depth - 1);
    else if (depth === 0 && text.startsWith(' - ', index)) return text.slice(0, index).trim();
  }
  return text.trim();
}

const STATS_KEY: Record<string, string> = { errors: 'error', warning: 'warnings' };

/** The counts in the final stats line (`1 failed, 33 passed, 2 skipped`), for cross-checks and reports. */
export function pytestStatsCounts(log: string): Record<string, number> | undefined {
  const lines = logLines(log);
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const header = HEADER.exec(lines[index]!);
    if (!header || !STATS.test(header[1]!)) continue;
    const counts: Record<string, number> = {};
    for (const match of header[1]!.matchAll(/(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)\b/g)) {
      counts[STATS_KEY[match[2]!] ?? match[2]!] = Number(match[1]);
    }
    return counts;
  }
  return undefined;
}
