/** `winnower inspect --serve` without --out removes its temporary site when stopped (issue 27 item 22). */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliArgv } from '../support/built-cli.js';
import { REPO_ROOT } from '../support/shared-data.js';

const scratch = mkdtempSync(join(tmpdir(), 'wnw-inspect-tmp-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('winnower inspect --serve', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('leaves no temporary site behind after %s', async (signal) => {
    const child = spawn(
      process.execPath,
      cliArgv(['inspect', join(REPO_ROOT, 'examples/demo/trajectories/correct-fix.json'), '--serve', '--port', '0']),
      { cwd: REPO_ROOT, env: { ...process.env, TMPDIR: scratch }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`inspect did not serve: ${output}`)), 30_000);
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const found = / at (http:\/\/\S+)/.exec(output)?.[1];
        if (found) {
          clearTimeout(timer);
          resolve(found);
        }
      });
    });
    expect(readdirSync(scratch).filter((name) => name.startsWith('winnower-inspect-'))).toHaveLength(1);
    // A keep-alive connection, as a browser holds one.
    await fetch(url).then((response) => response.text());
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill(signal);
    expect(await exited).toBe(0);
    expect(readdirSync(scratch).filter((name) => name.startsWith('winnower-inspect-'))).toEqual([]);
  });
});
