/**
 * SymPy `bin/test --verbose` log parser. The runner prints a `sympy/.../test_x.py[N]` line per
 * file, then one line per test: the name, anything the test printed, and a status: `ok`, `F`
 * (failed), `E` or `T` (exception, timeout: error), `f` (expected failure), `X` (unexpected pass),
 * or a skip (`s`, `w` slow, `K`, `T`) written as `reason s`, ` - s` or, in older versions,
 * `s - reason`. The last test of a file carries a right-aligned `[OK]` or `[FAIL]`. A file that
 * cannot be imported prints `path[?]   Failed to import` and is recorded under its path as error.
 * Ids are bare test names (`test_TR5`), as in SWE-bench lists; a name found in two files keeps the
 * worse outcome. Non-verbose output (dots) names no test and yields nothing.
 */
import type { TestStatus } from '../../types/verify.js';
import { type ParseContext, logLines, record } from './common.js';

const FILE = /^(\S+\.py)\[(\d+|\?)\]\s*(.*)$/;
const TEST = /^(test_\w+)(?:\s+(.*))?$/;
const SKIP_CHARS = new Set(['s', 'w', 'K', 'T']);
const SLOW = / - Took [\d.]+ seconds$/;
const SUMMARY = /^=+ tests finished: (.*?) =+$/;

/** Maps the text after a test name to a status, or undefined when no status is in it yet. */
export function sympyStatus(text: string): TestStatus | undefined {
  const value = text.replace(/\s*\[(OK|FAIL)\]\s*$/, '').trim();
  if (value === '') return undefined;
  if (value === 'T') return 'error';
  const older = /^([swKT]) - /.exec(value);
  if (older) return 'skipped';
  const tokens = value.split(/\s+/);
  const last = tokens[tokens.length - 1]!;
  switch (last) {
    case 'ok':
      return 'passed';
    case 'F':
      return 'failed';
    case 'E':
      return 'error';
    case 'f':
      return 'xfail';
    case 'X':
      return 'xpass';
    default:
      return SKIP_CHARS.has(last) && tokens.length > 1 ? 'skipped' : undefined;
  }
}

/** Parses SymPy bin/test verbose output into outcomes keyed by bare test name. */
export function parseSympyLog(log: string, _context?: ParseContext): Map<string, TestStatus> {
  const tests = new Map<string, TestStatus>();
  let pending: string | undefined;
  for (const raw of logLines(log)) {
    const line = raw.trimEnd();
    const file = FILE.exec(line);
    if (file) {
      pending = undefined;
      if (file[2] === '?' && /Failed to import/.test(file[3]!)) record(tests, file[1]!, 'error');
      continue;
    }
    // `test_x - Took 11.3 seconds` in the slowest-tests list is not a result.
    const test = SLOW.test(line) ? null : TEST.exec(line);
    if (test) {
      const status = sympyStatus(test[2] ?? '');
      if (status) {
        record(tests, test[1]!, status);
        pending = undefined;
      } else {
        pending = test[1]!;
      }
      continue;
    }
    if (pending) {
      // Output the test printed pushed its status onto a later line of its own.
      const alone = line.trim();
      const status = /^(ok|F|E|f|X|T)(\s*\[(OK|FAIL)\])?$/.test(alone) ? sympyStatus(alone) : undefined;
      if (status) {
        record(tests, pending, status);
        pending = undefined;
      }
    }
  }
  return tests;
}

/** The counts in `== tests finished: 65 passed, 6 failed, 2 expected to fail, in 257.42 seconds ==`. */
export function sympySummaryCounts(log: string): Record<string, number> | undefined {
  for (const line of logLines(log).reverse()) {
    const match = SUMMARY.exec(line.trim());
    if (!match) continue;
    const counts: Record<string, number> = {};
    for (const part of match[1]!.split(',')) {
      const count = /^(\d+) ([a-z][a-z ]*)$/.exec(part.trim());
      if (count) counts[count[2]!] = Number(count[1]);
    }
    return counts;
  }
  return undefined;
}
