/**
 * The README's `/solve` example as a newcomer runs it (issue 27 item 1): `winnower policy serve`
 * replays the demo's recordings as an OpenAI-compatible server, `winnower serve` takes the
 * README's /solve request (its body read from README.md), and the job picks the correct fix.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { prepareDemoRepo } from '../../src/cli/demo-repo.js';
import { DEMO_DIR, hasBubblewrap } from '../solve/helpers.js';
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
    // The README's /solve example, as written, on a checkout of the demo repository.
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const body = /--data-binary @- <<'EOF'\n([\s\S]*?)\nEOF\n/.exec(readme)?.[1];
    expect(body, 'the README has a /solve example with a heredoc body').toBeDefined();
    const request = JSON.parse(body!) as { repo: { path: string }; policy: { url: string } };
    expect(request.policy.url).toBe('http://localhost:30000/v1');
    request.repo.path = repo;
    request.policy.url = policyUrl;
    const response = await fetch(`${base}/solve?wait=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request),
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
