/** Image references in skopeo's transport syntax, as the local provider reads them. */
import { describe, expect, it } from 'vitest';
import { WinnowerError } from '../../src/errors.js';
import { isLoopbackRegistry, parseImageReference } from '../../src/sandbox/image-reference.js';
import { skopeoError } from '../../src/sandbox/providers/local/images/image-tools.js';
import { createLocalProvider, type LocalProviderSettings } from '../../src/sandbox/providers/local/provider.js';

const digest = `sha256:${'a'.repeat(64)}`;

describe('parseImageReference', () => {
  it.each([
    ['python:3.12', { transport: 'docker', skopeo: 'docker://python:3.12' }],
    [
      'swebench/sweb.eval.x86_64.django_1776_django-11099:latest',
      { transport: 'docker', skopeo: 'docker://swebench/sweb.eval.x86_64.django_1776_django-11099:latest' },
    ],
    ['127.0.0.1:5000/winnower/testbed:1', { transport: 'docker', registry: '127.0.0.1:5000' }],
    [`ghcr.io/org/img@${digest}`, { transport: 'docker', registry: 'ghcr.io', skopeo: `docker://ghcr.io/org/img@${digest}` }],
    ['localhost/img', { transport: 'docker', registry: 'localhost' }],
    ['docker://quay.io/org/img:v1', { transport: 'docker', registry: 'quay.io', skopeo: 'docker://quay.io/org/img:v1' }],
    ['oci:/images/layout:v1', { transport: 'oci', skopeo: 'oci:/images/layout:v1' }],
    ['oci:/images/layout', { transport: 'oci', skopeo: 'oci:/images/layout' }],
    ['oci:layout:v1', { transport: 'oci', skopeo: 'oci:/work/layout:v1' }],
    ['docker-archive:/tmp/saved.tar', { transport: 'docker-archive', skopeo: 'docker-archive:/tmp/saved.tar' }],
    ['docker-archive:/tmp/saved.tar:img:1', { transport: 'docker-archive', skopeo: 'docker-archive:/tmp/saved.tar:img:1' }],
    ['oci-archive:/tmp/img.tar', { transport: 'oci-archive' }],
  ])('reads %s', (text, expected) => {
    expect(parseImageReference(text, 'image', '/work')).toMatchObject({ ...expected, display: text });
  });

  it.each([
    ['', 'empty'],
    [' python:3', 'spaces'],
    ['Python:3', 'lowercase'],
    ['python:', 'not a tag'],
    ['python@sha256:xyz', 'not a digest'],
    ['docker:python', 'docker://'],
    ['docker-daemon:python:3', 'no Docker daemon'],
    ['containers-storage:python', 'podman save'],
    ['oci:', 'oci:<path>'],
    ['oci:/layout:', 'empty tag'],
    ['bad host!/img:1', 'lowercase'],
  ])('refuses %j (%s) as WNW_ERR_INPUT_INVALID naming the field', (text, why) => {
    let error: unknown;
    try {
      parseImageReference(text, 'body.image');
    } catch (caught) {
      error = caught;
    }
    expect(WinnowerError.isInstance(error) && error.code).toBe('WNW_ERR_INPUT_INVALID');
    expect((error as WinnowerError).message).toContain('body.image');
    expect((error as WinnowerError).message).toContain(why);
  });

  it('treats loopback registries as plain HTTP, others not', () => {
    expect(['127.0.0.1:5000', 'localhost', 'localhost:5000', '[::1]:5000', '127.5.0.1'].map(isLoopbackRegistry)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(['10.0.0.1:5000', 'ghcr.io', undefined, 'localhost.example.com'].map(isLoopbackRegistry)).toEqual([false, false, false, false]);
  });
});

describe('image settings of the local provider', () => {
  it.each([
    [{ pullTimeoutMs: -1 }, 'sandbox.settings.pullTimeoutMs'],
    [{ condaEnv: 'two words' }, 'sandbox.settings.condaEnv'],
    [{ imageWorkdir: 'testbed' }, 'sandbox.settings.imageWorkdir'],
    [{ imageCacheDir: '/var/cache/a:b' }, 'sandbox.settings.imageCacheDir'],
    [{ insecureRegistries: 'host:5000' }, 'sandbox.settings.insecureRegistries'],
  ])('refuses %j when the provider is made, naming the field', (settings, field) => {
    expect(() => createLocalProvider(settings as unknown as LocalProviderSettings)).toThrow(
      expect.objectContaining({ code: 'WNW_ERR_CFG_INVALID', details: { field } }),
    );
  });

  it('takes valid ones', () => {
    expect(() =>
      createLocalProvider({
        pullTimeoutMs: 60_000,
        condaEnv: false,
        imageWorkdir: '/srv/repo',
        insecureRegistries: ['registry.internal:5000'],
      }),
    ).not.toThrow();
  });
});

describe('skopeoError', () => {
  const registry = parseImageReference('127.0.0.1:5000/w/t:1');
  const layout = parseImageReference('oci:/images/layout:v1');
  const failed = (stderr: string) => ({ code: 1, signal: null, stdout: '', stderr, timedOut: false });
  it.each([
    [
      registry,
      'pinging container registry 127.0.0.1:5000: Get "http://127.0.0.1:5000/v2/": dial tcp 127.0.0.1:5000: connect: connection refused',
      'WNW_ERR_SBX_REGISTRY',
      'unreachable',
    ],
    [
      registry,
      'pinging container registry registry-1.docker.io: Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io on 10.0.0.53:53: no such host',
      'WNW_ERR_SBX_REGISTRY',
      'unreachable',
    ],
    // A port with 404 in it is not a 404 (a CI run failed on port 34041).
    [
      parseImageReference('127.0.0.1:34041/w/t:1'),
      'pinging container registry 127.0.0.1:34041: Get "http://127.0.0.1:34041/v2/": dial tcp 127.0.0.1:34041: connect: connection refused',
      'WNW_ERR_SBX_REGISTRY',
      'unreachable',
    ],
    [
      registry,
      'reading manifest 1 in 127.0.0.1:5000/w/t: received unexpected HTTP status: 404 Not Found',
      'WNW_ERR_SBX_IMAGE',
      'not found',
    ],
    [registry, 'reading manifest 1 in 127.0.0.1:5000/w/t: manifest unknown: manifest unknown', 'WNW_ERR_SBX_IMAGE', 'not found'],
    [registry, 'reading manifest 1 in 127.0.0.1:5000/w/t: unauthorized: authentication required', 'WNW_ERR_SBX_IMAGE', 'access denied'],
    [layout, 'open /images/layout/index.json: no such file or directory', 'WNW_ERR_SBX_IMAGE', 'not found'],
    [layout, 'choosing image instance: no descriptor found for reference "v1"', 'WNW_ERR_SBX_IMAGE', 'not found'],
  ])('classifies %#', (ref, stderr, code, reason) => {
    const error = skopeoError(ref, 'cannot read', failed(stderr));
    expect([error.code, error.details.reason]).toEqual([code, reason]);
    expect(error.message).toContain(ref.display);
  });
});
