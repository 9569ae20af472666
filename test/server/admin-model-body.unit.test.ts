/**
 * `POST /admin/model` swaps the model only on a body it documents: none, or a JSON object. The
 * body `null`, or `{}` behind a byte order mark, is a 400 naming `body`, and no model is
 * reloaded. A byte order mark is refused before any route's schema, /solve's too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, type Runtime } from '../../src/cli/runtime.js';
import { loadConfig, TINY_MODEL_DIR } from '../../src/config.js';

describe('POST /admin/model with a body it does not document', () => {
  let dir: string;
  let runtime: Runtime;
  let reloads = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wnw-admin-body-'));
    const config = loadConfig({
      env: {},
      overrides: { server: { data_dir: join(dir, 'data') }, scorer: { backend: 'onnx', model: TINY_MODEL_DIR() } },
    });
    runtime = await createRuntime(config, { logger: false });
    const reload = runtime.valueModel.reload.bind(runtime.valueModel);
    runtime.valueModel.reload = (...args: Parameters<typeof reload>) => {
      reloads += 1;
      return reload(...args);
    };
  }, 60_000);

  afterAll(async () => {
    await runtime?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (payload: string) =>
    runtime.app.inject({ method: 'POST', url: '/admin/model', headers: { 'content-type': 'application/json' }, payload });

  it.each([
    ['null', 'null'],
    ['a byte order mark before {}', '\uFEFF{}'],
    ['a byte order mark before {"path": ...}', `\uFEFF${JSON.stringify({ path: TINY_MODEL_DIR() })}`],
    ['an array', '[]'],
    ['a string', '"reload"'],
  ])('refuses %s with a 400 naming the body, and reloads nothing', async (_, payload) => {
    const before = reloads;
    const response = await post(payload);
    expect(response.statusCode, response.body).toBe(400);
    const { error } = response.json();
    expect(error.code).toBe('WNW_ERR_INPUT_INVALID');
    expect(error.details.field).toBe('body');
    expect(error.message.startsWith('body:'), error.message).toBe(true);
    expect(reloads).toBe(before);
  });

  it('reloads on the bodies it documents: none, an empty one, {} and {"path"}', async () => {
    for (const payload of [undefined, '', '{}', JSON.stringify({ path: TINY_MODEL_DIR() })]) {
      const before = reloads;
      const response = payload === undefined ? await runtime.app.inject({ method: 'POST', url: '/admin/model' }) : await post(payload);
      expect(response.statusCode, `${JSON.stringify(payload)}: ${response.body}`).toBe(200);
      expect(reloads).toBe(before + 1);
    }
  }, 60_000);

  it('refuses a byte order mark on /solve too, before its schema', async () => {
    const response = await runtime.app.inject({
      method: 'POST',
      url: '/solve',
      headers: { 'content-type': 'application/json' },
      payload: `\uFEFF${JSON.stringify({ issue: 'x', image: 'python:3.12' })}`,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'WNW_ERR_INPUT_INVALID', details: { field: 'body' } });
    expect(response.json().error.message).toMatch(/byte order mark/);
  });
});
