/**
 * Loading the ONNX scorer leaves nothing behind and calls no one: onnxruntime-node 1.30's telemetry
 * (an empty /tmp/mat-debug-<pid>.log per process, a device id under ~/.cache/Microsoft, uploads to
 * Microsoft) stays off (docs/design/05-defects-found.md#D13). A child process with its own HOME and TMPDIR, and
 * none of the CI variables onnxruntime itself reads as "off", loads the bundled model and scores.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const CHILD = `
  const { createScorer } = await import('./src/scoring/registry.ts');
  const { DEFAULT_MODEL_DIR } = await import('./src/config.ts');
  const scorer = await createScorer({ backend: 'onnx', model: DEFAULT_MODEL_DIR() });
  const [output] = await scorer.score([{ key: 'k', text: 'hello' }]);
  await scorer.close();
  console.log(JSON.stringify({ pid: process.pid, value: output.value }));
`;
/** Variables onnxruntime treats as "running in CI or its own tests", which would hide the defect. */
const SWITCHES = [
  'ORT_DISABLE_TELEMETRY',
  'ORT_RUNNING_UNIT_TESTS',
  'CI',
  'CONTINUOUS_INTEGRATION',
  'GITHUB_ACTIONS',
  'TF_BUILD',
  'APPVEYOR',
  'BUILD_ID',
  'BUILD_NUMBER',
  'JENKINS_URL',
  'GITLAB_CI',
  'TRAVIS',
  'CIRCLECI',
  'BUILDKITE',
  'TEAMCITY_VERSION',
  'CODEBUILD_BUILD_ID',
  'RUN_ID',
];

describe('onnxruntime telemetry', () => {
  it('is off: no mat-debug log, no ~/.cache/Microsoft', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'wnw-ort-'));
    onTestFinished(() => rmSync(scratch, { recursive: true, force: true }));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: join(scratch, 'home'),
      TMPDIR: join(scratch, 'tmp'),
      XDG_CACHE_HOME: join(scratch, 'home', '.cache'),
    };
    for (const name of SWITCHES) delete env[name];
    for (const name of Object.keys(env)) if (name.startsWith('VITEST')) delete env[name];
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', CHILD],
        { cwd: ROOT, env, timeout: 60_000 },
        (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out)),
      );
    });
    const { pid, value } = JSON.parse(stdout.trim().split('\n').at(-1)!) as { pid: number; value: number };
    expect(value).toBeGreaterThan(0);
    expect(existsSync(`/tmp/mat-debug-${pid}.log`)).toBe(false);
    expect(
      existsSync(join(scratch, 'tmp')) ? readdirSync(join(scratch, 'tmp')).filter((name) => name.startsWith('mat-debug-')) : [],
    ).toEqual([]);
    expect(existsSync(join(scratch, 'home', '.cache', 'Microsoft'))).toBe(false);
  }, 90_000);
});
