/**
 * Issue 33 D1 through POST /rerank with verification (local sandboxes): a shell test suite that no
 * log parser reads. The listed test is graded by the command's exit code, and the result says so,
 * instead of every listed test being `missing` and the correct patch `unresolved`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasBubblewrap } from '../solve/helpers.js';
import { startTestApp, type TestApp } from './test-app.js';

/** `lib.sh` subtracts in add(); `tests/check_add.sh` exits 1 on a wrong sum. */
function shellRepo(dir: string): string {
  mkdirSync(join(dir, 'tests'), { recursive: true });
  writeFileSync(join(dir, 'lib.sh'), 'add() { echo $(( $1 - $2 )); }\n');
  writeFileSync(
    join(dir, 'tests', 'check_add.sh'),
    '. ./lib.sh\nif [ "$(add 2 3)" != 5 ]; then echo "add 2 3: got $(add 2 3), want 5"; exit 1; fi\necho ok\n',
  );
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, '-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { stdio: 'pipe' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  return dir;
}

const patchOf = (body: string) =>
  ['diff --git a/lib.sh b/lib.sh', '--- a/lib.sh', '+++ b/lib.sh', '@@ -1 +1 @@', '-add() { echo $(( $1 - $2 )); }', `+${body}`, ''].join(
    '\n',
  );
const FIX = patchOf('add() { echo $(( $1 + $2 )); }');
const WRONG = patchOf('add() { echo $(( $1 * $2 )); }');

describe.skipIf(!hasBubblewrap())('POST /rerank verifying a shell test suite', () => {
  let server: TestApp;
  let root: string;
  let task: Record<string, unknown>;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'winnower-shell-'));
    task = {
      instance_id: 'demo__shell-1',
      problem_statement: 'add() subtracts',
      repo: { path: shellRepo(join(root, 'repo')) },
      test_command: 'sh tests/check_add.sh',
      fail_to_pass: ['tests/check_add.sh'],
    };
    server = await startTestApp();
  });
  afterAll(async () => {
    await server?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const verdicts = async (extra: Record<string, unknown>) => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/rerank',
      payload: {
        task,
        verify: true,
        candidates: [
          { id: 'fix', patch: FIX },
          { id: 'wrong', patch: WRONG },
        ],
        ...extra,
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    return Object.fromEntries(body.verify.map((v: Record<string, unknown>) => [v.trajectory_id, v]));
  };

  it('grades by exit code when the detected parser finds no test in the log, and says so', async () => {
    const byId = await verdicts({});
    expect(byId.fix).toMatchObject({ status: 'resolved', parser: 'pytest', grading: 'exit-code', exit_code: 0 });
    expect(byId.fix.fail_to_pass).toEqual({ passed: 1, failed: 0, missing: 0 });
    expect(byId.fix.grading_reason).toMatch(/pytest parser found no test/);
    expect(byId.wrong).toMatchObject({ status: 'unresolved', grading: 'exit-code', exit_code: 1 });
    expect(byId.wrong.fail_to_pass).toEqual({ passed: 0, failed: 1, missing: 0 });
  });

  it('takes the parser from verify_parser', async () => {
    const byId = await verdicts({ verify_parser: 'exit-code' });
    expect(byId.fix).toMatchObject({ status: 'resolved', parser: 'exit-code', grading: 'exit-code' });
    expect(byId.wrong).toMatchObject({ status: 'unresolved', parser: 'exit-code' });
  });

  it('reads the regression check of task.test_command with verify_parser too', async () => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/rerank',
      payload: {
        task,
        checks: {},
        verify_parser: 'exit-code',
        candidates: [
          { id: 'fix', patch: FIX },
          { id: 'wrong', patch: WRONG },
        ],
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    const base = response.json().checks.regression.base;
    // Without it the pytest parser reads the log first and the check falls back to the exit code.
    expect(base).toMatchObject({ runner: 'given', parser: 'exit-code', grading_reason: 'the exit-code parser was asked for' });
  });

  it('refuses verify_parser without verify or checks, naming the field', async () => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/rerank',
      payload: { task, verify_parser: 'exit-code', candidates: [{ id: 'fix', patch: FIX }] },
    });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('verify_parser');
  });

  it('refuses a parser it does not know, naming the field', async () => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/rerank',
      payload: { task, verify: true, verify_parser: 'go', candidates: [{ id: 'fix', patch: FIX }] },
    });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('verify_parser');
  });
});
