/**
 * A checkout under a mode-0700 folder (what `mktemp -d`, /root or a private $HOME give), with node
 * and TMPDIR in there too. As root, sandboxes run as another uid, which cannot pass through that
 * folder: bwrap used to stop at the loopback forwarder's bind ("Can't find source path
 * .../config/harnesses/loopback-forwarder.mjs: Permission denied") and the provider at its probe.
 * This copies what a harness rollout needs (src, config, package.json, the scripted harness and the
 * fake model server) into a fresh 0700 folder, hard-links node in there, sets TMPDIR inside it, and
 * runs one rollout in a child process from that copy.
 */
import { execFile } from 'node:child_process';
import { cpSync, linkSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync, copyFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasBubblewrap } from '../../solve/helpers.js';
import { REPO_ROOT } from '../../support/shared-data.js';

const isRoot = process.getuid?.() === 0;

/** Runs one scripted-harness rollout on the local provider; prints what the test checks, as JSON. */
const ROLLOUT_SCRIPT = `
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHarnessCatalog } from './src/rollout/harness/harness-catalog.js';
import { prepareHarnessRollout } from './src/rollout/harness/run-harness.js';
import { createLocalProvider } from './src/sandbox/providers/local/provider.js';
import { startFakeHarnessPolicy } from './test/fakes/fake-harness-policy.js';

const warnings = [];
const provider = createLocalProvider({ logger: { info: () => undefined, warn: (message) => warnings.push(message) } });
const fake = await startFakeHarnessPolicy({ short: { tool: 'bash', commands: ['echo hello > greeting.txt'] } });
const repo = mkdtempSync(join(process.env.TMPDIR, 'repo-'));
writeFileSync(join(repo, 'README.md'), 'demo\\n');
execFileSync('sh', ['-c', 'git init -q && git add -A && git -c user.name=t -c user.email=t@example.com commit -qm init'], { cwd: repo });
const catalog = createHarnessCatalog({ definitionsDir: join(process.cwd(), 'test/fixtures/harnesses') });
const prepared = await prepareHarnessRollout({
  harness: catalog.resolve('scripted'),
  policy: { kind: 'openai', url: fake.url, model: 'short', api_key: 'sk-test', temperature: 0, top_p: 1, max_tokens: 256, mode: 'tools', timeout_s: 30 },
  task: { instance_id: 'private', problem_statement: 'Say hello.', repo: { path: repo }, fail_to_pass: [], pass_to_pass: [], meta: {} },
  trajectoryId: 'private/0',
  seed: 1,
  signal: new AbortController().signal,
});
const out = { mounts: prepared.mounts.map((mount) => mount.source), warnings, node: process.execPath };
try {
  const sandbox = await provider.create({ repo: { path: repo }, mounts: prepared.mounts });
  try {
    const trajectory = await prepared.run(sandbox);
    Object.assign(out, { exit: trajectory.exit, exit_raw: trajectory.exit_raw, patch: trajectory.patch, stderr: trajectory.meta.stderr_tail });
  } finally {
    await sandbox.close();
  }
} catch (error) {
  Object.assign(out, { error: error.message });
} finally {
  await prepared.close();
  await fake.close();
  await provider.close();
}
process.stdout.write(JSON.stringify(out));
`;

describe.skipIf(!hasBubblewrap() || !isRoot)('a harness rollout from a checkout inside a 0700 folder (as root)', () => {
  const privateDir = mkdtempSync(join(tmpdir(), 'wnw-private-'));
  afterAll(() => rmSync(privateDir, { recursive: true, force: true }));

  it('binds only files the sandbox user can reach, and the harness runs', async () => {
    expect(statSync(privateDir).mode & 0o777).toBe(0o700);
    const clone = join(privateDir, 'clone');
    for (const part of ['src', 'config', 'test/fakes', 'test/fixtures/harnesses'])
      cpSync(join(REPO_ROOT, part), join(clone, part), { recursive: true });
    for (const file of ['package.json', 'tsconfig.json']) copyFileSync(join(REPO_ROOT, file), join(clone, file));
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(clone, 'node_modules'));
    writeFileSync(join(clone, 'rollout.mts'), ROLLOUT_SCRIPT);
    // node inside the private folder too (nvm under /root): a hard link, or a copy on another filesystem.
    const node = join(privateDir, 'bin', 'node');
    mkdirSync(join(privateDir, 'bin'));
    try {
      linkSync(process.execPath, node);
    } catch {
      copyFileSync(process.execPath, node);
      chmodSync(node, 0o755);
    }
    const tmp = join(privateDir, 'tmp');
    mkdirSync(tmp);

    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      execFile(
        node,
        ['--import', 'tsx', 'rollout.mts'],
        { cwd: clone, env: { ...process.env, TMPDIR: tmp }, timeout: 150_000 },
        (error, out, err) => {
          if (error) reject(new Error(`${error.message}\n${err}`));
          else resolve({ stdout: out, stderr: err });
        },
      );
    });
    const result = JSON.parse(stdout) as {
      mounts: string[];
      warnings: string[];
      node: string;
      exit?: string;
      exit_raw?: string;
      patch?: string;
      error?: string;
      stderr?: string;
    };
    expect(result.node.startsWith(privateDir)).toBe(true);
    expect(result.error, `${result.error}\n${stderr}`).toBeUndefined();
    expect(result.exit, `${result.exit_raw}\n${result.stderr}`).toBe('submitted');
    expect(result.patch).toContain('+hello');
    // Nothing bound from the private folder: the forwarder, node and the proxy's socket folder live in a runtime folder under /tmp.
    expect(result.mounts.filter((source) => source.startsWith(privateDir))).toEqual([]);
    // The provider said why its files are not under TMPDIR, naming the folder and the fix.
    expect(result.warnings.join('\n')).toContain(`cannot pass through ${privateDir} (mode 700)`);
    expect(result.warnings.join('\n')).toContain(`chmod o+x ${privateDir}`);
  }, 180_000);
});
