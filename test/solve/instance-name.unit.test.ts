/** A /solve job without instance_id is named after its repository or image, not `task` (issue 27 item 25). */
import { describe, expect, it } from 'vitest';
import { SolveRequest } from '../../src/solve/solve-request.js';

const named = (fields: Record<string, unknown>) => SolveRequest.parse({ issue: 'fix it', ...fields }).instance_id;

describe('a /solve job’s default name', () => {
  it('is the checkout folder, the URL’s owner/name or the image without its registry', () => {
    expect(named({ repo: { path: '/home/me/src/durations/' } })).toBe('durations');
    expect(named({ repo: { url: 'https://github.com/django/django.git' } })).toBe('django/django');
    expect(named({ repo: { url: 'git@github.com:psf/requests.git' } })).toBe('psf/requests');
    expect(named({ image: 'ghcr.io/org/task:1' })).toBe('org/task:1');
    expect(named({ image: 'python:3.12' })).toBe('python:3.12');
  });

  it('keeps a given instance_id', () => {
    expect(named({ instance_id: 'django__django-15202', repo: { path: '/x/y' } })).toBe('django__django-15202');
  });
});
