/**
 * `server.repo_roots` covers images read from this machine's disk too: an OCI layout or archive
 * (`oci:`, `oci-archive:`, `docker-archive:`) named by /solve or a verifying /rerank must lie under a root, as a
 * repository path must; registry references pass.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkImageAccess } from '../../src/server/guards/repo-access.js';
import { startTestApp, type TestApp } from './test-app.js';

describe('repository roots and images', () => {
  let scratch: string;
  let allowed: string;
  let server: TestApp;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'wnw-image-roots-'));
    allowed = join(scratch, 'allowed');
    mkdirSync(join(allowed, 'layout'), { recursive: true });
    mkdirSync(join(scratch, 'elsewhere'));
    symlinkSync(join(scratch, 'elsewhere'), join(allowed, 'link'));
    server = await startTestApp({ valueModel: 'bundled', repoRoots: [allowed] });
  });

  afterAll(async () => {
    await server?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it.each([
    'oci:/etc:x',
    'docker-archive:/etc/passwd',
    'oci-archive:ELSEWHERE/img.tar',
    'oci:ALLOWED/link:v1',
    'oci:ALLOWED/../elsewhere:v1',
  ])('refuses /solve with a host image outside the roots (%s)', async (image) => {
    const payload = {
      issue: 'x',
      image: image.replace('ALLOWED', allowed).replace('ELSEWHERE', join(scratch, 'elsewhere')),
      n: 1,
      policy: {
        kind: 'replay',
        recordings: [{ id: 'r', instance_id: 'i', source: 's', messages: [{ role: 'assistant', content: 'hi' }] }],
      },
    };
    const response = await server.app.inject({ method: 'POST', url: '/solve', payload });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details.field).toBe('body.image');
  });

  it('refuses a /rerank that verifies in a host image outside the roots', async () => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/rerank',
      payload: {
        task: { instance_id: 'i', problem_statement: 'p', image: 'oci:/etc:x', test_command: 'true' },
        candidates: [{ id: 'a', patch: '' }],
        verify: true,
      },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details.field).toBe('body.task.image');
  });

  it('lets registry references and images under a root through, and refuses a bad reference', async () => {
    for (const image of [
      'python:3.12',
      'docker://ghcr.io/o/i:1',
      `127.0.0.1:5000/w/t@sha256:${'b'.repeat(64)}`,
      `oci:${join(allowed, 'layout')}:v1`,
    ]) {
      await expect(checkImageAccess(image, [allowed], 'image')).resolves.toBeUndefined();
    }
    await expect(checkImageAccess('oci:/etc:x', [], 'image')).resolves.toBeUndefined();
    await expect(checkImageAccess('Bad Ref', [allowed], 'image')).rejects.toThrow(/image: "Bad Ref" is not an image reference/);
  });
});
