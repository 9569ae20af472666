/** `verify.parser` of a /solve request (issue 33 D1): the verifier's parser names, nothing else. */
import { describe, expect, it } from 'vitest';
import { SolveRequest } from '../../src/solve/solve-request.js';
import { PARSER_NAMES } from '../../src/verify/detect.js';

const request = (verify: Record<string, unknown>) => ({ issue: 'add() subtracts', repo: { path: '/tmp/r' }, verify });

describe('SolveRequest verify.parser', () => {
  it('accepts every parser the verifier knows, and leaves it out when not given', () => {
    for (const parser of PARSER_NAMES) {
      const parsed = SolveRequest.safeParse(request({ enabled: true, test_command: 'sh tests/check_add.sh', parser }));
      expect(parsed.success, parser).toBe(true);
      expect(parsed.data?.verify.parser).toBe(parser);
    }
    expect(SolveRequest.parse(request({ enabled: true, test_command: 'true' })).verify.parser).toBeUndefined();
  });

  it('refuses a name the verifier does not know, at verify.parser', () => {
    const parsed = SolveRequest.safeParse(request({ enabled: true, test_command: 'go test ./...', parser: 'go' }));
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['verify', 'parser']);
  });
});
