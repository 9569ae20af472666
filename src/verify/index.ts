/** Verification: apply a patch in a fresh sandbox, run the tests, parse the log, grade. */
export { verifyCandidate, type Candidate, type VerifyCandidateOptions, DEFAULT_TEST_TIMEOUT_MS } from './verify-candidate.js';
export { verifyMany, type VerifyManyOptions, DEFAULT_VERIFY_CONCURRENCY } from './verify-candidate.js';
export { gradeTests, lookupTest, isPassing, unlistedFailures, type Grade, type GradeInput } from './grade.js';
export { otherTestsFailed, describeOtherFailures } from './other-failures.js';
export { buildTestCommand } from './test-command.js';
export { detectParser, getParser, PARSERS, PARSER_NAMES, type ParserName } from './detect.js';
export { parseTestLog, type ParsedLog } from './parse-log.js';
export { extractTestSection, type LogSection } from './log-section.js';
export type { LogParser, ParseContext } from './parsers/common.js';
