/**
 * One call from a raw log to per-test outcomes: cut the log to its test section (harness markers),
 * then run the named parser on that section.
 */
import type { TestStatus } from '../types/verify.js';
import { type ParserName, getParser } from './detect.js';
import type { ParseContext } from './parsers/common.js';
import { type LogSection, extractTestSection } from './log-section.js';

export interface ParsedLog {
  parser: ParserName;
  tests: Map<string, TestStatus>;
  /** Where the markers were, and whether the harness reported a timeout. */
  section: Omit<LogSection, 'text'>;
}

export interface ParseLogOptions {
  /**
   * Cut the log to the harness markers (default true, for harness logs). Pass false when the test
   * command prints no markers: any marker in the log then comes from the code under test.
   */
  markers?: boolean;
}

/** Parses `log` with the parser called `parser` (WNW_ERR_INPUT_INVALID for an unknown name). */
export function parseTestLog(
  log: string,
  parser: ParserName | string,
  context: ParseContext = {},
  options: ParseLogOptions = {},
): ParsedLog {
  const parse = getParser(parser);
  const { text, ...section } =
    options.markers === false ? { text: log, marked: false, ended: false, timedOut: false } : extractTestSection(log);
  return { parser: parser as ParserName, tests: parse(text, context), section };
}
