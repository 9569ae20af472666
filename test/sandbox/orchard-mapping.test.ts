import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mapOrchardJob, mapOrchardSandboxStatus } from '../../src/sandbox/providers/map-orchard-status.js';
import { OrchardCreateResponse, OrchardErrorBody, OrchardFileList, OrchardJob, OrchardSandboxInfo } from '../../src/sandbox/providers/orchard-api-types.js';
import { backoffMs } from '../../src/sandbox/providers/orchard-client.js';
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
    expect(mapOrchardSandboxStatus(OrchardSandboxInfo.parse(fixture('sandbox-unschedulable')))).toEqual({ state: 'failed', raw: 'unschedulable' });
    expect(mapOrchardSandboxStatus({ status: 'pending' })).toEqual({ state: 'pending', raw: 'pending' });
    expect(mapOrchardSandboxStatus({ status: 'not_found' })).toEqual({ state: 'gone', raw: 'not_found' });
  });

  it('maps job outcomes', () => {
    expect(mapOrchardJob(job('job-succeeded'))).toEqual({ kind: 'exited', exitCode: 0, raw: 'succeeded' });
    expect(mapOrchardJob(job('job-failed-exit-2'))).toEqual({ kind: 'exited', exitCode: 2, raw: 'failed' });
    expect(mapOrchardJob(job('job-agent-timeout'))).toEqual({ kind: 'timed-out', raw: 'failed' });
    expect(mapOrchardJob(job('job-orchestrator-timeout'))).toEqual({ kind: 'timed-out', raw: 'failed' });
    expect(mapOrchardJob(job('job-inner-124'))).toEqual({ kind: 'exited', exitCode: 124, raw: 'failed' });
    expect(mapOrchardJob(job('job-no-pod-ip'))).toEqual({ kind: 'error', message: 'No pod IP available for sandbox wnw-3f2a9c1b7d4e', raw: 'failed' });
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
    expect(withStdinFile("echo 'hi'", '.winnower-stdin-1')).toBe(`{ rm -f '.winnower-stdin-1'; bash -c 'echo '\\''hi'\\'''; } < '.winnower-stdin-1'`);
  });

  it('names missing files and corrupt patches from git apply output', () => {
    expect(describePatchFailure('error: src/gone.py: No such file or directory\n', '').message).toBe('patch does not apply: src/gone.py: No such file or directory');
    expect(describePatchFailure('error: corrupt patch at line 7\n', '').message).toBe('patch does not apply: corrupt patch at line 7');
    const plain = describePatchFailure('error: patch failed: b.py:30\nerror: b.py: patch does not apply\n', '--- b.py\n+++ b.py\n@@ -3,1 +3,1 @@\n-x\n+y\n@@ -30,2 +30,2 @@\n a\n-b\n+c\n');
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
    const { createOrchardProvider } = await import('../../src/sandbox/providers/orchard.js');
    expect(() => createOrchardProvider({ retries: -1 })).toThrow(/sandbox\.settings\.retries/);
    expect(() => createOrchardProvider({ baseUrl: 'not a url' })).toThrow(/sandbox\.settings\.baseUrl/);
    expect(() => createOrchardProvider({ workdri: '/x' } as never)).toThrow(/sandbox\.settings\.workdri/);
    expect(() => createOrchardProvider({ workdir: '/x', heartbeatIntervalMs: 0 })).not.toThrow();
  });
});
