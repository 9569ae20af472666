/**
 * The README's `/solve` example as a newcomer runs it (issue 27 item 1): `winnower policy serve`
 * replays the demo's recordings as an OpenAI-compatible server, `winnower serve` takes the
 * /solve request that points at it, and the job picks the correct fix among the four rollouts.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { prepareDemoRepo } from '../../src/cli/demo-repo.js';
import { DEMO_DIR, demoTask, hasBubblewrap } from '../solve/helpers.js';
import { cliArgv } from '../support/built-cli.js';
import { startServeProcess } from '../support/cli.js';
import { REPO_ROOT } from '../support/shared-data.js';

const cleanups: Array<() => void> = [];
afterAll(() => cleanups.forEach((cleanup) => cleanup()));

function startPolicyServe(): Promise<string> {
  const child = spawn(process.execPath, cliArgv(['policy', 'serve', '--port', '0']), { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  cleanups.push(() => child.kill('SIGTERM'));
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`policy serve did not start: ${output}`)), 30_000);
    child.on('exit', () => reject(new Error(`policy serve exited: ${output}`)));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const url = / on (http:\/\/\S+\/v1)/.exec(output)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve(url);
      }
    });
  });
}

describe.skipIf(!hasBubblewrap())('winnower policy serve behind /solve', () => {
  it('replays one recording per rollout and the job chooses the correct fix', async () => {
    const policyUrl = await startPolicyServe();
    const dataDir = mkdtempSync(join(tmpdir(), 'wnw-policy-serve-'));
    const repo = prepareDemoRepo(join(DEMO_DIR, 'repo'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const serve = startServeProcess(dataDir);
    cleanups.push(() => serve.child.kill('SIGKILL'));
    const base = await serve.base;
    const task = demoTask();
    const response = await fetch(`${base}/solve?wait=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        issue: task.problem_statement,
        repo: { path: repo, commit: 'HEAD' },
        n: 4,
        policy: { kind: 'openai', url: policyUrl, model: 'my-agent' },
        verify: {
          enabled: true,
          test_command: task.test_command,
          fail_to_pass: task.fail_to_pass,
          pass_to_pass: task.pass_to_pass,
          test_patch: task.test_patch,
          regression: { enabled: false },
        },
      }),
    });
    const job = (await response.json()) as {
      status: string;
      result?: { chosen?: { index: number; patch: string; verify_status: string }; candidates: unknown[] };
    };
    expect(job.status, JSON.stringify(job).slice(0, 2000)).toBe('succeeded');
    expect(job.result!.candidates).toHaveLength(4);
    // Seed 1 replays correct-fix (the recordings in id order), the only one the tests resolve.
    expect(job.result!.chosen).toMatchObject({ index: 1, verify_status: 'resolved' });
    expect(job.result!.chosen!.patch).toContain('(\\d+)([hms])');
  }, 240_000);
});
