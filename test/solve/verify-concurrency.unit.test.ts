/** How many candidates a job verifies at once (src/solve/verification.ts): the request's, else the cores within max_sandboxes. */
import { describe, expect, it } from 'vitest';
import { SolveRequest } from '../../src/solve/solve-request.js';
import { verifyConcurrency } from '../../src/solve/verification.js';

const request = (extra: Record<string, unknown> = {}, verify: Record<string, unknown> = {}) =>
  SolveRequest.parse({
    instance_id: 't',
    issue: 'fix it',
    repo: { path: '/r' },
    n: 4,
    ...extra,
    verify: { enabled: true, test_command: 'pytest', ...verify },
  });

describe('verification concurrency', () => {
  it('follows the cores when the request sets none, not a fixed 4', () => {
    expect(verifyConcurrency(request(), 16)).toBe(16);
    expect(verifyConcurrency(request(), 2)).toBe(2);
  });

  it('stays within the job sandbox budget, and the request own value wins', () => {
    expect(verifyConcurrency(request({ max_sandboxes: 6 }), 16)).toBe(6);
    expect(verifyConcurrency(request({ max_sandboxes: 6 }, { concurrency: 3 }), 16)).toBe(3);
    expect(verifyConcurrency(request({}, { concurrency: 8 }), 2)).toBe(8);
  });
});
