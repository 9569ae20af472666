/**
 * redactUrlCredentials: the one URL-credential redactor of the job store (`[redacted]`) and of the
 * local provider's clone messages (`***`). A password holding a raw '@' is removed whole: before
 * there was one redactor, the clone messages' stopped at the first '@' and showed the rest.
 */
import { describe, expect, it } from 'vitest';
import { redactUrlCredentials } from '../../src/util/redact-url.js';

describe('redactUrlCredentials', () => {
  it.each([
    ['https://user:token@example.com/o/r.git', '***', 'https://***@example.com/o/r.git'],
    ['https://token@example.com/o/r.git', '[redacted]', 'https://[redacted]@example.com/o/r.git'],
    ['https://user:p@ss@word@127.0.0.1:9/o/r.git', '***', 'https://***@127.0.0.1:9/o/r.git'],
    ['https://user:p@ss@127.0.0.1:9/o/r.git', '[redacted]', 'https://[redacted]@127.0.0.1:9/o/r.git'],
    ['HTTP://user:secret@Example.com', '***', 'HTTP://***@Example.com'],
    ['ssh://git:secret@example.com:22/o/r.git?ref=a@b#c@d', '***', 'ssh://***@example.com:22/o/r.git?ref=a@b#c@d'],
  ])('%s with %s → %s', (url, marker, expected) => {
    expect(redactUrlCredentials(url, marker)).toBe(expected);
  });

  it.each([
    'https://example.com/o/r.git',
    'https://example.com/users/a@b',
    'https://example.com?to=a@b',
    'git@github.com:o/r.git',
    '/srv/repos/r',
    'not a url',
  ])('leaves %s unchanged (no credentials in its authority)', (url) => {
    expect(redactUrlCredentials(url, '***')).toBe(url);
  });
});
