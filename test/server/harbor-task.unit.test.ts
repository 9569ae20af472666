/**
 * `/solve` with `harbor_task` (issue 32) at submit: the folder must lie under server.repo_roots and
 * be a valid task; every bad field is a 400 naming it, before any sandbox exists. The fields the
 * request leaves out are filled from the task.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readHarborTask } from '../../src/formats/harbor/read-task.js';
import { harborBody } from '../../src/server/guards/harbor-task.js';
import { poolTestsOn, SolveRequest } from '../../src/solve/solve-request.js';
import { EXAMPLE_TOML, writeExampleTask } from '../formats/harbor/example-task.js';
import { gitRepo } from './git-repo.js';
import { startTestApp, type TestApp } from './test-app.js';

describe('harbor_task at submit', () => {
  let scratch: string;
  let allowed: string;
  let repo: string;
  let server: TestApp;
  const task = (overrides: Record<string, string> = {}, where = allowed) => {
    const dir = join(where, `task-${Math.random().toString(36).slice(2)}`);
    mkdirSync(dir);
    return writeExampleTask(overrides, dir);
  };

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'wnw-harbor-roots-'));
    allowed = join(scratch, 'allowed');
    mkdirSync(join(scratch, 'elsewhere'), { recursive: true });
    repo = gitRepo(join(allowed, 'repo'));
    server = await startTestApp({ repoRoots: [allowed] });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const replay = {
    kind: 'replay',
    recordings: [{ id: 'r', instance_id: 'i', source: 's', messages: [{ role: 'assistant', content: 'hi' }] }],
  };
  const post = (body: Record<string, unknown>) =>
    server.app.inject({ method: 'POST', url: '/solve', payload: { n: 1, policy: replay, verify: { enabled: true }, ...body } });
  const refused = async (body: Record<string, unknown>) => {
    const response = await post(body);
    expect(response.statusCode, response.body).toBe(400);
    return response.json().error as { message: string; details: { field: string } };
  };

  it('refuses a folder outside the roots, and a relative path', async () => {
    expect((await refused({ harbor_task: task({}, join(scratch, 'elsewhere')), repo: { path: repo } })).details.field).toBe(
      'body.harbor_task',
    );
    const relative = await refused({ harbor_task: 'allowed/task', repo: { path: repo } });
    expect(relative.message).toBe('body.harbor_task: must be an absolute path on the server');
  });

  it('names the task file and key at fault', async () => {
    const error = await refused({ harbor_task: task({ 'task.toml': 'schema_version = "2.0"\n' }), repo: { path: repo } });
    expect(error.details.field).toBe('body.harbor_task');
    expect(error.message).toContain('task.toml schema_version');
    const steps = await refused({ harbor_task: task({ 'task.toml': `${EXAMPLE_TOML}[[steps]]\nname = "a"\n` }), repo: { path: repo } });
    expect(steps.message).toContain('multi-step tasks are not supported');
  });

  it('refuses an issue besides the instruction, the request’s own tests, and a Dockerfile-only task with no image or repo', async () => {
    expect((await refused({ harbor_task: task(), repo: { path: repo }, issue: 'x' })).details.field).toBe('body.issue');
    const tests = await refused({ harbor_task: task(), repo: { path: repo }, verify: { enabled: true, fail_to_pass: ['t'] } });
    expect(tests.details.field).toBe('body.verify.fail_to_pass');
    const unbuilt = await refused({ harbor_task: task() });
    expect(unbuilt.message).toContain(
      'which winnower does not build (it does more than name a base image): give image (built from it) or repo',
    );
  });

  it("takes a Dockerfile that only names its base image as the task's image", () => {
    const harbor = readHarborTask(task({ 'environment/Dockerfile': 'FROM python:3.12-slim\nWORKDIR /app\n' }));
    expect(harborBody({}, harbor)).toMatchObject({ image: 'python:3.12-slim' });
  });

  it("does not fill a task's templates from the server's environment (its keys are not a request's to read)", async () => {
    expect(process.env.HOME).toBeTruthy();
    const home = await refused({
      harbor_task: task({ 'task.toml': `${EXAMPLE_TOML}[verifier.env]\nWHERE = "\${HOME}"\n` }),
      repo: { path: repo },
    });
    expect(home.message).toContain('task.toml verifier.env.WHERE: ${HOME} is not set on this host and has no default');
  });

  it("counts a Harbor task's tests as given: the tests from the pool stay off by default, as with a test list", () => {
    const body = { issue: 'i', repo: { path: repo }, verify: { enabled: true } };
    expect(poolTestsOn(SolveRequest.parse(body))).toBe(true);
    expect(poolTestsOn(SolveRequest.parse({ ...body, harbor_task: '/srv/tasks/t' }))).toBe(false);
  });

  it('refuses a reward threshold without a Harbor task', async () => {
    const error = await refused({ issue: 'x', repo: { path: repo }, verify: { enabled: true, reward_threshold: 0.5 } });
    expect(error.details.field).toBe('body.verify.reward_threshold');
  });

  it('fills the missing fields from the task; the request’s own win', () => {
    const harbor = readHarborTask(
      task({ 'task.toml': `${EXAMPLE_TOML.replace('[environment]', '[environment]\ndocker_image = "python:3.12-slim"')}` }),
    );
    expect(harborBody({ verify: { enabled: true } }, harbor)).toEqual({
      issue: harbor.instruction,
      instance_id: 'winnower/fix-median',
      image: 'python:3.12-slim',
      agent: { time_limit_s: 900 },
      verify: { enabled: true, timeout_s: 300 },
    });
    const own = harborBody(
      { instance_id: 'mine', repo: { path: repo }, agent: { time_limit_s: 5 }, verify: { enabled: true, timeout_s: 7 } },
      harbor,
    );
    expect(own).toEqual({
      issue: harbor.instruction,
      instance_id: 'mine',
      repo: { path: repo },
      agent: { time_limit_s: 5 },
      verify: { enabled: true, timeout_s: 7 },
    });
  });
});
