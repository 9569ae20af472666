/**
 * The part of a log the parsers read. SWE-bench harness logs (and logs of commands run the same
 * way) wrap the test run between `>>>>> Start Test Output` and `>>>>> End Test Output` markers,
 * with setup noise (conda, git, pip, `set -x` echoes of the patch) around it. When the markers are
 * there only the text between them is parsed; a start marker without an end marker plus the
 * harness's `Timeout error` line means the run was killed for time. A harness prints each marker
 * once: a log with a second start or end marker (code under test printing its own, to hide the
 * runner's real results behind a section of its making) is parsed whole.
 */
export interface LogSection {
  /** The text to parse: between the markers when present, else the whole log. */
  text: string;
  /** Whether a start marker was found. */
  marked: boolean;
  /** Whether the end marker was found after the start marker. */
  ended: boolean;
  /** Start marker, no end marker, and a `Timeout error` line: the harness's timeout. */
  timedOut: boolean;
}

/** The marker alone on its line, as echoed by `set -x` (`+ : '>>>>> Start Test Output'`) or printed. */
const START = /^(?:\+ )?(?:: )?'?>>>>> Start Test Output'?[ \t]*$/m;
const END = /^(?:\+ )?(?:: )?'?>>>>> End Test Output'?[ \t]*$/m;
const START_ALL = new RegExp(START.source, 'gm');
const END_ALL = new RegExp(END.source, 'gm');
const TIMEOUT = /^Timeout error: .*exceeded/m;

/** Cuts `log` to its test-output section (the first start marker and the end marker after it). */
export function extractTestSection(log: string): LogSection {
  const start = START.exec(log);
  if (!start) return { text: log, marked: false, ended: false, timedOut: false };
  if ((log.match(START_ALL)?.length ?? 0) > 1 || (log.match(END_ALL)?.length ?? 0) > 1) {
    return { text: log, marked: false, ended: false, timedOut: false };
  }
  const from = lineEnd(log, start.index);
  const end = END.exec(log.slice(from));
  const endMarker = end ? from + end.index : -1;
  if (endMarker < 0) {
    const text = log.slice(from);
    return { text, marked: true, ended: false, timedOut: TIMEOUT.test(text) };
  }
  return { text: log.slice(from, lineStart(log, endMarker)), marked: true, ended: true, timedOut: false };
}

function lineEnd(text: string, index: number): number {
  const newline = text.indexOf('\n', index);
  return newline < 0 ? text.length : newline + 1;
}

function lineStart(text: string, index: number): number {
  return text.lastIndexOf('\n', index) + 1;
}
