/**
 * The API side of harnesses: GET /harnesses says what this server can run and, for the rest, why
 * not and the install command (no host paths); POST /solve refuses at once, naming the field, a
 * harness that is unknown or not installed and a policy of the wrong protocol; the stored
 * request keeps an Anthropic policy's key out.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarnessCatalog } from '../../src/rollout/harness/harness-catalog.js';
import { redactRequest } from '../../src/server/plugins/redact-request.js';
import { SolveRequest } from '../../src/solve/solve-request.js';
import { createWorld, hasBubblewrap, solveBody, type TestWorld } from './helpers.js';

const empty = mkdtempSync(join(tmpdir(), 'wnw-harness-dir-'));
const fixtures = new URL('../fixtures/harnesses', import.meta.url).pathname;
const anthropic = { kind: 'anthropic', url: 'http://127.0.0.1:9/v1', model: 'claude-x', api_key: 'sk-ant-secret' };
const openai = { kind: 'openai', url: 'http://127.0.0.1:9/v1', model: 'gpt-x' };

describe.skipIf(!hasBubblewrap())('harnesses in the API', () => {
  let world: TestWorld;
  beforeAll(async () => {
    world = await createWorld();
  });
  afterAll(async () => {
    await world?.close();
    rmSync(empty, { recursive: true, force: true });
  });

  it('GET /harnesses lists every definition, and for one not installed the reason and the install command', async () => {
    const server = await world.start({ harnesses: createHarnessCatalog({ installDir: empty }) });
    try {
      const response = await server.app.inject({ method: 'GET', url: '/harnesses' });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body.default).toBe('winnower');
      const byName = Object.fromEntries(body.harnesses.map((harness: { name: string }) => [harness.name, harness]));
      expect(Object.keys(byName).sort()).toEqual(['claude-code', 'codex', 'pi', 'winnower']);
      expect(byName.winnower).toMatchObject({ source: 'builtin', available: true });
      expect(byName.pi).toEqual({
        name: 'pi',
        description: expect.any(String),
        protocol: 'openai-chat',
        source: 'npm',
        package: '@mariozechner/pi-coding-agent',
        version: '0.73.1',
        available: false,
        reason: '@mariozechner/pi-coding-agent@0.73.1 is not installed on this server',
        install_command: 'winnower harness install pi',
      });
      expect(byName['claude-code']).toMatchObject({ protocol: 'anthropic-messages', version: '2.1.328', available: false });
      expect(byName.codex).toMatchObject({ protocol: 'openai-responses', version: '0.169.0' });
      expect(response.body).not.toContain(empty);
    } finally {
      await server.close();
    }
  });

  it.each([
    ['pi', openai, 'WNW_ERR_HARNESS_MISSING', 'body.agent.harness', 'winnower harness install pi'],
    ['no-such-agent', openai, 'WNW_ERR_HARNESS_UNKNOWN', 'body.agent.harness', 'known: winnower, claude-code, codex, pi'],
    ['scripted', anthropic, 'WNW_ERR_INPUT_INVALID', 'body.policy.kind', 'needs a policy of kind openai or replay'],
    ['winnower', anthropic, 'WNW_ERR_INPUT_INVALID', 'body.policy.kind', 'the built-in agent needs an OpenAI-compatible server'],
  ])('POST /solve with harness %s refuses at once: %s', async (harness, policy, code, field, message) => {
    const catalog = createHarnessCatalog({ installDir: empty, ...(harness === 'scripted' ? { definitionsDir: fixtures } : {}) });
    const server = await world.start({ harnesses: catalog });
    try {
      const body = solveBody(world.repo, { n: 2, policy });
      body.agent = { ...(body.agent as object), harness };
      const response = await server.app.inject({ method: 'POST', url: '/solve', payload: body });
      expect(response.statusCode).toBe(400);
      const { error } = response.json();
      expect(error).toMatchObject({ code, details: { field } });
      expect(error.message).toContain(message);
    } finally {
      await server.close();
    }
  });

  it('POST /solve refuses agent.model for the built-in agent, which would ignore it', async () => {
    const server = await world.start({ harnesses: createHarnessCatalog({ installDir: empty }) });
    try {
      const body = solveBody(world.repo, { n: 1, policy: openai });
      body.agent = { ...(body.agent as object), model: 'some-model' };
      const response = await server.app.inject({ method: 'POST', url: '/solve', payload: body });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toMatchObject({ code: 'WNW_ERR_INPUT_INVALID', details: { field: 'body.agent.model' } });
    } finally {
      await server.close();
    }
  });

  it('agent.harness is a name, not a path', () => {
    const parsed = SolveRequest.safeParse({ issue: 'x', repo: { path: '/r' }, agent: { harness: '../../bin/sh' } });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues[0]!.path).toEqual(['agent', 'harness']);
  });

  it('the stored request keeps an Anthropic policy key out', () => {
    const request = SolveRequest.parse({ issue: 'x', repo: { path: '/r' }, policy: anthropic, agent: { harness: 'claude-code' } });
    expect(redactRequest(request).policy).toMatchObject({ kind: 'anthropic', api_key: '[redacted]' });
  });
});
