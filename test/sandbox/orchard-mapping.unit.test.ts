import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { mapOrchardJob, mapOrchardSandboxStatus } from '../../src/sandbox/providers/orchard/map-status.js';
import { normaliseExitCode, stripNoTtyNoise, unwrapResult, wrapCommand } from '../../src/sandbox/providers/orchard/command.js';
import { parseCpu, parseMemoryMb } from '../../src/sandbox/serve/orchard-shapes.js';
import {
  OrchardCreateResponse,
  OrchardErrorBody,
  OrchardFileList,
  OrchardJob,
  OrchardSandboxInfo,
  OrchardStatusReply,
} from '../../src/sandbox/providers/orchard/api-types.js';
import { backoffMs } from '../../src/sandbox/providers/orchard/client.js';
import { describePatchFailure, resolveSandboxPath, withStdinFile } from '../../src/sandbox/providers/remote-shell.js';

function fixture(name: string): unknown {
  return JSON.parse(readFileSync(join(import.meta.dirname, '../fixtures/orchard', `${name}.json`), 'utf8'));
}

function job(name: string): ReturnType<typeof OrchardJob.parse> {
  return OrchardJob.parse(fixture(name));
}

describe('orchard response schemas and status mapping', () => {
  it('parses the documented shapes', () => {
    expect(OrchardCreateResponse.parse(fixture('create-pending'))).toMatchObject({ sandbox_id: 'wnw-3f2a9c1b7d4e', status: 'pending' });
    expect(OrchardFileList.parse(fixture('files-list')).files).toHaveLength(2);
    expect(OrchardErrorBody.parse(fixture('error-500'))).toMatchObject({ error: 'Internal server error' });
    expect(OrchardErrorBody.parse(fixture('error-422')).detail).toBeInstanceOf(Array);
  });

  it('maps sandbox statuses to ready | pending | failed | gone, keeping the raw one', () => {
    expect(mapOrchardSandboxStatus(OrchardSandboxInfo.parse(fixture('sandbox-ready')))).toEqual({ state: 'ready', raw: 'ready' });
    expect(mapOrchardSandboxStatus(OrchardSandboxInfo.parse(fixture('sandbox-unschedulable')))).toEqual({
      state: 'failed',
      raw: 'unschedulable',
    });
    expect(mapOrchardSandboxStatus({ status: 'pending' })).toEqual({ state: 'pending', raw: 'pending' });
    expect(mapOrchardSandboxStatus({ status: 'not_found' })).toEqual({ state: 'gone', raw: 'not_found' });
  });

  it('maps job outcomes', () => {
    expect(mapOrchardJob(job('job-succeeded'))).toEqual({ kind: 'exited', exitCode: 0, raw: 'succeeded' });
    expect(mapOrchardJob(job('job-failed-exit-2'))).toEqual({ kind: 'exited', exitCode: 2, raw: 'failed' });
    expect(mapOrchardJob(job('job-agent-timeout'))).toEqual({ kind: 'timed-out', raw: 'failed' });
    expect(mapOrchardJob(job('job-orchestrator-timeout'))).toEqual({ kind: 'timed-out', raw: 'failed' });
    expect(mapOrchardJob(job('job-inner-124'))).toEqual({ kind: 'exited', exitCode: 124, raw: 'failed' });
    expect(mapOrchardJob(job('job-no-pod-ip'))).toEqual({
      kind: 'error',
      message: 'No pod IP available for sandbox wnw-3f2a9c1b7d4e',
      raw: 'failed',
    });
    expect(mapOrchardJob(job('job-running'))).toEqual({ kind: 'pending', raw: 'running' });
    expect(mapOrchardJob(job('exec-wait-expired'))).toEqual({ kind: 'pending', raw: 'queued' });
    expect(mapOrchardJob({ ...job('job-succeeded'), status: 'exploded' }).kind).toBe('error');
  });
});

describe('remote shell helpers', () => {
  it('resolves paths inside the sandbox', () => {
    expect(resolveSandboxPath('/testbed', undefined)).toBe('/testbed');
    expect(resolveSandboxPath('/testbed', 'src/../a.py')).toBe('/testbed/a.py');
    expect(resolveSandboxPath('/testbed', '/tmp//x')).toBe('/tmp/x');
  });

  it('quotes the command fed from a stdin file', () => {
    expect(withStdinFile("echo 'hi'", '.winnower-stdin-1')).toBe(
      `{ rm -f '.winnower-stdin-1'; bash -c 'echo '\\''hi'\\'''; } < '.winnower-stdin-1'`,
    );
  });

  it('names missing files and corrupt patches from git apply output', () => {
    expect(describePatchFailure('error: src/gone.py: No such file or directory\n', '').message).toBe(
      'patch does not apply: src/gone.py: No such file or directory',
    );
    expect(describePatchFailure('error: corrupt patch at line 7\n', '').message).toBe('patch does not apply: corrupt patch at line 7');
    const plain = describePatchFailure(
      'error: patch failed: b.py:30\nerror: b.py: patch does not apply\n',
      '--- b.py\n+++ b.py\n@@ -3,1 +3,1 @@\n-x\n+y\n@@ -30,2 +30,2 @@\n a\n-b\n+c\n',
    );
    expect(plain.details).toMatchObject({ file: 'b.py', line: 30, hunk: 2 });
  });

  it('backs off exponentially with jitter, capped', () => {
    expect(backoffMs(1, () => 0)).toBe(100);
    expect(backoffMs(3, () => 1)).toBe(800);
    expect(backoffMs(20, () => 1)).toBe(5_000);
  });
});

describe('orchard provider settings', () => {
  it('rejects a bad or unknown setting with WNW_ERR_CFG_INVALID naming it', async () => {
    const { createOrchardProvider } = await import('../../src/sandbox/providers/orchard/provider.js');
    expect(() => createOrchardProvider({ retries: -1 })).toThrow(/sandbox\.settings\.retries/);
    expect(() => createOrchardProvider({ baseUrl: 'not a url' })).toThrow(/sandbox\.settings\.base_url/);
    expect(() => createOrchardProvider({ workdri: '/x' } as never)).toThrow(/sandbox\.settings\.workdri/);
    expect(() => createOrchardProvider({ workdir: '/x', heartbeatIntervalMs: 0 })).not.toThrow();
  });
});

describe('orchard answers of the real service (fixtures)', () => {
  it('a pod killed by the agent is an error without exit code, not a timeout; a signal death is -N', () => {
    expect(mapOrchardJob(job('job-pod-killed'))).toEqual({ kind: 'error', message: 'int too large to convert to float', raw: 'failed' });
    expect(mapOrchardJob(job('job-signal-9'))).toEqual({ kind: 'exited', exitCode: -9, raw: 'failed' });
    expect(normaliseExitCode(-9)).toBe(137);
    expect(normaliseExitCode(3)).toBe(3);
  });

  it('an image that cannot be pulled is just pending with an empty message; errors carry their detail', () => {
    expect(mapOrchardSandboxStatus(OrchardSandboxInfo.parse(fixture('sandbox-pending-image-pull')))).toEqual({
      state: 'pending',
      raw: 'pending',
    });
    expect(String(OrchardErrorBody.parse(fixture('error-500-not-a-file')).detail)).toContain('Not a file: /testbed/src');
    expect(String(OrchardErrorBody.parse(fixture('error-404-agent-not-ready')).detail)).toMatch(/agent not ready$/);
    expect(OrchardStatusReply.parse(fixture('heartbeat-ok'))).toEqual({ status: 'ok' });
  });
});

describe('the command wrapper (run with the host bash)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wnw-wrap-'));
  const run = (script: string): { status: number | null; stdout: string; stderr: string } => {
    const result = spawnSync('bash', ['-c', script], { cwd: '/', encoding: 'utf8' });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  };

  it('kills the command at its timeout and prints its marker; the agent timeout is a backstop past it', () => {
    const wrapped = wrapCommand('echo before; sleep 5', { cwd: dir, timeoutMs: 300 });
    expect(wrapped.agentTimeoutS).toBe(1 + 15);
    const result = run(wrapped.script);
    expect(result).toMatchObject({ status: 124, stdout: 'before\n' });
    expect(unwrapResult(124, result.stderr, wrapped)).toEqual({ exitCode: 124, stderr: '', timedOut: true });
  });

  it('a command that exits 124 by itself gets no marker; a missing cwd fails instead of running in /', () => {
    const own = wrapCommand('echo own >&2; exit 124', { cwd: dir, timeoutMs: 60_000 });
    const result = run(own.script);
    expect(unwrapResult(result.status ?? -1, result.stderr, own)).toEqual({ exitCode: 124, stderr: 'own\n', timedOut: false });
    const missing = run(wrapCommand('pwd', { cwd: join(dir, 'gone'), timeoutMs: 60_000 }).script);
    expect(missing.status).toBe(1);
    expect(missing.stdout).toBe('');
  });

  it('feeds an uploaded stdin file and removes it first; activate runs in the same shell', () => {
    writeFileSync(join(dir, '.in'), 'from stdin');
    const result = run(
      wrapCommand('cat; ls -a | grep -c "^.in$" || true; echo " $ACTIVATED"', {
        cwd: dir,
        timeoutMs: 60_000,
        stdinFile: '.in',
        activate: 'ACTIVATED=yes',
      }).script,
    );
    expect(result.stdout).toBe('from stdin0\n yes\n');
  });

  it('drops only the no-terminal noise of an interactive bash', () => {
    const noise = 'bash: cannot set terminal process group (-1): Inappropriate ioctl for device\nbash: no job control in this shell\n';
    expect(stripNoTtyNoise(`${noise}Traceback\n\nboom\n`)).toBe('Traceback\n\nboom\n');
  });

  it('cleans up', () => rmSync(dir, { recursive: true, force: true }));
});

describe('sandbox serve resource strings', () => {
  it('parses Kubernetes cpu and memory quantities', () => {
    expect(parseCpu('4')).toBe(4);
    expect(parseCpu('2000m')).toBe(2);
    expect(parseMemoryMb('16Gi')).toBe(16_384);
    expect(parseMemoryMb('512Mi')).toBe(512);
    expect(parseMemoryMb('1G')).toBe(954);
  });
});
